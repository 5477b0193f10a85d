//===- KernelBuilder.h - One Halide kernel per tfc op -----------*- C++ -*-===//
//
// Codegen's first layer: turns one op of the `tfc` dialect into a Halide
// pipeline (a "kernel") that computes the op's result from its operands. The
// kernel cache (KernelCache.h) JIT-compiles kernels; the AOT and source
// emitters compile the same kernels to objects or C.
//
// Buffer contract (the same as runtime/Plan.h's kernel calling convention):
//  - Arguments are one `halide_buffer_t` per operand, in operand order, then
//    one for the result. In argv form: `int kernel(void **args)`.
//  - Halide dimension 0 is the tensor's *last* axis (row-major, innermost
//    first); dimension i is axis rank-1-i. Strides are in elements.
//  - Every dimension's min must be 0; dimension 0 must have stride 1 (dense
//    innermost axis, so loads vectorize). Other strides are free, so views
//    with padded rows (a KV cache with spare capacity) are accepted.
//  - Static dimensions of the op's types are checked: a buffer whose extent
//    differs is refused with an error (the kernel returns non-zero).
//  - Element types: f32 -> float32, bf16 -> bfloat16 (product weights under
//    `--dtype bf16`), i32 -> int32, i64 -> int64, and i1 ->
//    **uint8** holding 0 or 1 (the runtime stores bool as one byte; a
//    `halide_buffer_t` for an i1 tensor has type {halide_type_uint, 8, 1}).
//    Kernels read any non-zero byte as true; those that compute booleans
//    (cmp, and, not, cast, causal_mask, ...) write exactly 0 or 1, and data
//    movement (transpose, concat, gather, ...) copies bytes as they are.
//
// Kernel semantics beyond the IR's (docs/ir.md):
//  - Broadcasting: an operand dimension of static size 1 against a larger or
//    dynamic result dimension is read at index 0; a dynamic operand dimension
//    is taken to equal the result's (the runtime checks shapes beforehand).
//  - gather clamps ids into [0, V) so that a bad id can never read out of
//    bounds (the runtime reports bad ids separately, before any kernel runs).
//  - Reductions, softmax and the norms accumulate in fp32; variance is the
//    biased one (as PyTorch).
//
// Errors: Halide reports user and internal errors by throwing. This library
// is compiled with exceptions and catches them at its boundary: every
// function here returns llvm::Error / llvm::Expected and never aborts or
// throws. See `withHalideErrors`.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_KERNELBUILDER_H
#define TFC_CODEGEN_KERNELBUILDER_H

#include "Halide.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlir {
class Operation;
class Type;
} // namespace mlir

namespace tfc::codegen {

/// A built (not yet compiled) kernel for one op.
struct Kernel {
  /// The function name the kernel is compiled under ("tfc_matmul_3"); the
  /// Funcs inside are named after the op ("matmul_3", "matmul_3_prod").
  std::string name;
  /// The op's signature (kernelSignature), for messages and dumps.
  std::string signature;
  /// The target the schedule was written for (a CUDA target gets GPU
  /// schedules). Compile for this target, possibly with features added
  /// (JIT, NoRuntime, ...).
  Halide::Target target;
  Halide::Pipeline pipeline;
  /// The input ImageParams in operand order, and the same as Arguments: pass
  /// `arguments` to Pipeline::compile_*; Halide appends the output buffer.
  std::vector<Halide::ImageParam> inputs;
  std::vector<Halide::Argument> arguments;
  Halide::Func output;
};

/// Whether `op` is a tfc op that gets a kernel (every tfc op but tfc.param
/// and tfc.constant, which are values the runtime provides).
bool hasKernel(mlir::Operation *op);

/// About how long `op`'s kernel takes to compile, in milliseconds of one
/// core (GPT-2 small's kernels, measured; by op, not by size): the parallel
/// compiles start the longest first so that the threads finish together.
unsigned compileCostHint(mlir::Operation *op);

/// What a kernel may use besides its target's instructions.
struct KernelOptions {
  /// bf16 products on AMX tiles, through the extern stage of AmxMatmul.h:
  /// only for kernels that run in this process, whose executable exports
  /// that function (hostKernelOptions), never for AOT or emitted sources.
  bool amxTiles = false;
  /// fp32 products on weight panels through the extern stage of
  /// PanelMatmul.h (AVX-512F, a prefetch of the next panels), under the
  /// same terms.
  bool f32PanelStage = false;
  /// bf16 products on weight panels through PanelMatmul.h's vdpbf16ps stage
  /// (AVX512_BF16; where amxTiles is not set or AMX does not apply), under
  /// the same terms.
  bool bf16PanelStage = false;
  /// The CPU attention (more than one query row) through the extern stage of
  /// AttentionStage.h (AVX-512F), under the same terms.
  bool attentionStage = false;
  /// The per-core L2 (bytes) the panel stages' blocks are sized for: from
  /// which K they are one panel wide (onePanelFromK) and from which size of
  /// A their row blocks are outermost (rowsOuterBlocks), both in
  /// MatmulKernel.cpp; 0: 2 MiB.
  int64_t panelL2Bytes = 0;

  /// What the options add to a compiled kernel's cache key: the names of
  /// those that are set, e.g. "amx-tiles f32-panel-stage attention-stage",
  /// with "panel-l2=<bytes>" where a panel stage is set and panelL2Bytes is
  /// not 0; or "".
  std::string cacheKey() const;
};

/// The options of kernels compiled to run in this process (the JIT and the
/// disk cache): AMX tiles where hostHasAmx(), the fp32 and bf16 panel
/// stages where hostHasF32PanelStage() and hostHasBf16PanelStage() (with
/// the host's per-core L2 size, where the C library knows it), the
/// attention stage where hostHasAttentionStage().
KernelOptions hostKernelOptions();

/// Builds the kernel of `op` with a schedule for `target` (a CPU schedule,
/// or a GPU one if the target has a GPU feature such as CUDA). `name` is the
/// function name; empty: "tfc_<mnemonic>". The Funcs are named after `name`
/// without its "tfc_" prefix. Fails with a message (naming the op) on an
/// unsupported op or type, or when Halide reports an error.
llvm::Expected<Kernel> buildKernel(mlir::Operation *op,
                                   const Halide::Target &target,
                                   llvm::StringRef name = "",
                                   const KernelOptions &options = {});

/// The Halide type that stores elements of `elementType` in kernel buffers
/// (i1 -> UInt(8), see the header comment).
llvm::Expected<Halide::Type> storageType(mlir::Type elementType);

/// The target the JIT uses on this machine: the host target (AVX-512 etc.).
/// With TFC_HOST_NO_AVX512_BF16=1 in the environment, without
/// avx512_sapphirerapids, as on a CPU without AVX512_BF16 (for tests).
Halide::Target hostTarget();

/// While it lives, `kernel` lowers as a kernel compiled to run in this
/// process (the JIT and the disk cache), for target(). A GPU kernel is left
/// as it is. A CPU kernel gets
///  - NoBoundsQuery: no code that answers a bounds query (a call with
///    buffers without memory); the executor never makes one;
///  - a lowering pass that drops the asserts checking what the executor
///    (runtime/Executor.cpp, the only caller of such a kernel) guarantees of
///    every buffer it binds: not null, with host memory and no device
///    memory, the plan's element type and rank, no negative extent. The
///    checks of the extents against each other and of the region read,
///    extern stages' results and allocations stay;
///  - DisableLLVMLoopOpt: no LLVM loop vectorizer, interleaving or unrolling
///    (the schedules vectorize and unroll; the fp32 products run in the
///    precompiled panel stage). Run speed unchanged within the noise
///    (GPT-2 decode, BERT-base's attention and norms, 1 thread).
/// Instructions counted under cachegrind for GPT-2 small's cold compile
/// (docs/benchmarks.md, session 15): the asserts ~5 %, the loop
/// optimizations ~6 % of the kernels' compile (NoBoundsQuery ~6 % earlier).
/// AOT libraries and emitted sources, which user code calls with its own
/// buffers, keep every check: the pass leaves the kernel's pipeline with
/// this object.
class InProcessLowering {
public:
  explicit InProcessLowering(Kernel &kernel);
  ~InProcessLowering();
  InProcessLowering(const InProcessLowering &) = delete;
  InProcessLowering &operator=(const InProcessLowering &) = delete;

  /// The target to compile the kernel for.
  const Halide::Target &target() const { return loweredFor; }

private:
  Halide::Pipeline pipeline; // a handle on the kernel's
  Halide::Target loweredFor;
  bool cpu;
};

/// Whether kernels for `target` can multiply bf16 weights (`--dtype bf16`):
/// an x86 CPU target with AVX512_BF16. Halide 14 names it
/// avx512_sapphirerapids (its host detection sets it from the AVX512_BF16
/// cpuid bit; AMD Zen 4 has it, AMX is not used).
bool supportsBf16Products(const Halide::Target &target);

/// An error unless kernels for `target` can multiply bf16 weights, saying
/// so for `--dtype bf16`.
llvm::Error checkBf16Products(const Halide::Target &target);

/// The CUDA target (docs/design.md#kernels): on x86-64
/// `x86-64-linux-avx-avx2-cuda-cuda_capability_80-f16c-fma-sse41` (a
/// baseline CPU for the host side, whatever this machine's CPU is).
Halide::Target cudaTarget();

/// The OpenCL target, `host-opencl`: the GPU schedules lowered to OpenCL C,
/// for checking them without a GPU on an OpenCL implementation for CPUs
/// (PoCL; docs/cuda.md).
Halide::Target openclTarget();

/// The target named by `--target`: "host", "cuda" or "opencl".
Halide::Target targetNamed(llvm::StringRef name);

//===----------------------------------------------------------------------===//
// Compiling a kernel ahead of time or for inspection
//===----------------------------------------------------------------------===//

/// Lowers the kernel to a Halide Module for `target` (features are used as
/// given: add Target::NoRuntime for objects linked with a standalone runtime).
llvm::Expected<Halide::Module> compileToModule(const Kernel &kernel,
                                               const Halide::Target &target);

/// Writes the outputs named in `outputs` (object, static_library, c_header,
/// c_source, stmt, stmt_html, assembly, ...) for `target`, under the
/// kernel's function name.
llvm::Error
compileToFiles(const Kernel &kernel, const Halide::Target &target,
               const std::map<Halide::OutputFileType, std::string> &outputs);

/// The lowered statement (what `.stmt` files show) of the kernel for
/// `target`, as text.
llvm::Expected<std::string> loweredStmt(const Kernel &kernel,
                                        const Halide::Target &target);

//===----------------------------------------------------------------------===//
// Halide error handling
//===----------------------------------------------------------------------===//

/// Installs, once per process, the handlers that turn Halide's errors into
/// values: a CompileTimeErrorReporter whose error() throws (caught by
/// withHalideErrors; Halide's own default would print and, in a build
/// without exceptions, abort) and whose warning() records the warning; and a
/// JIT runtime error handler (the runtime's default calls abort()) that
/// records the message for takeKernelRuntimeError(). Called by everything in
/// this library that touches Halide; idempotent and thread-safe.
void installHalideErrorHandlers();

/// Runs `fn`, turning any Halide compile-time error (or other exception)
/// raised inside into an llvm::Error carrying Halide's message. `fn` should
/// only contain code compiled with exceptions for destructors to run on the
/// error path (this library is); callers compiled with -fno-exceptions still
/// get the error, since LLVM's flags keep unwind tables.
llvm::Error withHalideErrors(llvm::function_ref<void()> fn);

/// The message of the last error a JIT-compiled kernel reported at run time
/// (a kernel returns non-zero after reporting one: a buffer of the wrong
/// type or shape, say), and clears it. Empty if none.
std::string takeKernelRuntimeError();

/// Keeps `msg` for takeKernelRuntimeError() unless a message is already
/// waiting: the error handler of every Halide runtime tfc loads (JIT, or a
/// cached kernel's standalone runtime) reports here.
void recordKernelRuntimeError(const char *msg);

/// The warnings Halide reported since the last call, and clears them.
std::vector<std::string> takeHalideWarnings();

} // namespace tfc::codegen

#endif // TFC_CODEGEN_KERNELBUILDER_H
