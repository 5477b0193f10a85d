//===- KernelSupport.h - Helpers shared by the kernel builders --*- C++ -*-===//
//
// Internal to codegen/. The builders think in tensor axes (axis 0 outermost,
// as in the IR); Halide indexes dimension 0 innermost. These helpers keep
// the reversal in one place: a TensorInput is indexed with axis-ordered
// Exprs, and Funcs are defined and called through `define`/`call` with
// axis-ordered Vars.
//
// Builder functions run inside withHalideErrors: Halide errors they trigger
// are thrown and caught at the library boundary; their own problems (an
// attribute out of range on unverified IR) are returned as llvm::Error.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_KERNELSUPPORT_H
#define TFC_CODEGEN_KERNELSUPPORT_H

#include "codegen/KernelBuilder.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <string>
#include <vector>

namespace tfc::codegen::detail {

/// AVX-512: 16 fp32 lanes.
constexpr int kVectorLanes = 16;

/// An op operand as a kernel input: an ImageParam whose dimensions are
/// constrained as KernelBuilder.h describes.
class TensorInput {
public:
  TensorInput(mlir::RankedTensorType type, Halide::Type storage,
              const std::string &name);

  int rank() const { return static_cast<int>(shape.size()); }
  /// The Halide dimension of tensor axis `axis`.
  int hdim(int axis) const { return rank() - 1 - axis; }
  /// The extent of `axis`: a constant if static, else the buffer's.
  Halide::Expr extent(int axis) const;
  std::optional<int64_t> staticExtent(int axis) const;
  bool isBool() const { return elementType.isInteger(1); }

  /// The element at axis-ordered `indices` (as stored: i1 is UInt(8)).
  Halide::Expr at(const std::vector<Halide::Expr> &indices) const;
  /// Like `at`, but i1 elements come back as Halide Bool.
  Halide::Expr value(const std::vector<Halide::Expr> &indices) const;

  Halide::ImageParam param;
  std::vector<int64_t> shape; // mlir::ShapedType::kDynamic for `?`
  mlir::Type elementType;
};

/// Everything a builder needs: the op, its inputs, the result type and the
/// names to give Funcs.
struct KernelContext {
  mlir::Operation *op = nullptr;
  Halide::Target target;
  KernelOptions options;
  /// Func name prefix: "matmul_3".
  std::string base;
  std::vector<TensorInput> inputs;
  mlir::RankedTensorType resultType;
  Halide::Type resultStorage;

  bool gpu() const { return target.has_gpu_feature(); }
  int resultRank() const { return static_cast<int>(resultType.getRank()); }
  std::optional<int64_t> resultStaticExtent(int axis) const;
  /// A Func named `base` (stage empty) or `base_stage`.
  Halide::Func func(const std::string &stage = "") const;
  /// An error naming the op: "tfc.slice: <message>".
  llvm::Error error(const llvm::Twine &message) const;
};

/// One Var per tensor axis, axis order, named "i0", "i1", ... .
std::vector<Halide::Var> axisVars(int rank);
/// Axis-ordered Vars as Exprs.
std::vector<Halide::Expr> asExprs(const std::vector<Halide::Var> &vars);

/// `f(vars) = value` with axis-ordered `vars`.
void define(Halide::Func &f, const std::vector<Halide::Var> &vars,
            const Halide::Expr &value);
/// `f(indices)` with axis-ordered `indices`.
Halide::Expr call(const Halide::Func &f,
                  const std::vector<Halide::Expr> &indices);
/// The FuncRef `f(indices)`, for update definitions.
Halide::FuncRef ref(Halide::Func &f, const std::vector<Halide::Expr> &indices);

/// The indices at which a broadcast operand is read for the result element
/// at axis-ordered `resultIndices` (numpy rule: aligned on the right; a
/// static 1 reads index 0; a `?` is assumed to equal the result's dim).
std::vector<Halide::Expr>
broadcastIndices(const TensorInput &operand,
                 const std::vector<Halide::Expr> &resultIndices);

/// Converts a Halide Bool to the stored form of i1 (UInt(8) 0/1).
Halide::Expr storeBool(const Halide::Expr &b);

/// -inf of f32 or the lowest value of an integer type.
Halide::Expr lowest(const Halide::Type &t);

//===----------------------------------------------------------------------===//
// Math shared by the elementwise and the fused kernels, so that a fused op
// computes the same values as the primitives it replaces
//===----------------------------------------------------------------------===//

/// erf to ~4e-7 relative (and absolute) on all of f32.
Halide::Expr accurateErf(const Halide::Expr &x);

/// 1 / (1 + e^-x), e^-x as 2^(-x log2 e) with the exponent clamped to
/// [-126, 126] (finite, normal) and a polynomial of the reduced argument
/// instead of Halide's exp: absolute error <= 1e-7, relative <= 2e-6 (the
/// rounding of -x log2 e at large |x|). gelu_tanh and silu share it.
Halide::Expr sigmoid(const Halide::Expr &x);

/// `name(x)` for the activation names of tfc.linear ("none", "relu", "gelu",
/// "gelu_tanh", "silu"), which tfc.relu, tfc.silu and tfc.gelu compute too;
/// an undefined Expr for an unknown name.
Halide::Expr activation(llvm::StringRef name, const Halide::Expr &x);

//===----------------------------------------------------------------------===//
// Schedules shared by several builders
//===----------------------------------------------------------------------===//

/// Fuses `innerToOuter` (loop vars of `f`'s stage, innermost first) into one
/// new Var and returns it; with a single var, returns it unchanged.
Halide::Var fuseAll(Halide::Stage stage,
                    const std::vector<Halide::Var> &innerToOuter,
                    const std::string &name);

/// The tail strategy for splitting a dimension of an *output* by `factor`:
/// ShiftInwards (no guards, recomputes a few points) when the extent is
/// statically at least `factor`, else GuardWithIf.
Halide::TailStrategy outputTail(std::optional<int64_t> extent, int factor);

/// Schedules a pointwise output Func `f` over axis-ordered `vars` with
/// static extents `shape` (kDynamic for `?`): CPU: vectorize the innermost
/// axis, parallel over the fused outer axes in chunks; GPU: 2-D gpu_tile.
void schedulePointwise(const KernelContext &ctx, Halide::Func f,
                       const std::vector<Halide::Var> &vars,
                       llvm::ArrayRef<int64_t> shape);

/// CPU: how many rows of `rowLength` elements make a parallel task.
int rowsPerTask(std::optional<int64_t> rowLength);

/// CPU: runs `f`'s row vars (innermost first) as parallel tasks of
/// `rowsPerTask` rows of the innermost row var (fused with the outer row
/// vars). Returns the Var of the loop over single rows inside a task:
/// compute per-row intermediates there.
Halide::Var parallelRows(Halide::Func f,
                         const std::vector<Halide::Var> &rowsInnerToOuter,
                         int rowsPerTask);

/// GPU: tiles a stage over axis-ordered `vars` (its pure vars), one thread
/// per point: 64x4 thread blocks over the innermost var and the fused outer
/// ones; 256 threads for one var; a single thread for none.
void gpuTileStage(Halide::Stage stage, const std::vector<Halide::Var> &vars);

/// CPU: vectorizes the update of the reduction Func `acc` over its RVar `r`
/// (which must walk contiguous memory) by splitting it into 16 x `vectors`
/// lanes and factoring the lanes out into an intermediate Func, computed at
/// `at`. With `vectors` > 1 the lanes are that many independent accumulator
/// chains (a chain of dependent adds runs at the add's latency, not its
/// throughput), summed into `acc` by one vector reduce. Returns the
/// intermediate.
Halide::Func vectorizeInnerReduction(Halide::Func acc, const Halide::RVar &r,
                                     const Halide::LoopLevel &at,
                                     int vectors = 1);

/// Adds to `pipeline` the lowering pass that lets Halide 14's x86 backend
/// emit `vdpbf16ps` for the bf16 matmul (MatmulKernel.cpp): its dot-product
/// pattern needs both operands of the f32 product to be casts of bf16
/// vectors, but vectorization leaves the broadcast A operand as
/// `broadcast(f32(bf16 pair), 16)`, which its lossless_cast does not see
/// through. The pass rewrites `broadcast(f32(x), n)` with a bf16 `x` into
/// `f32(broadcast(x, n))` (the same value). Other kernels have no such
/// expression.
void addBf16DotProductLowering(Halide::Pipeline &pipeline);

} // namespace tfc::codegen::detail

namespace tfc::codegen {
// The builders, one per family (ElementwiseKernels.cpp, MatmulKernel.cpp,
// ReductionKernels.cpp, DataMovementKernels.cpp). Each defines and schedules
// the output Func of `ctx.op` and returns it; an op of another family gets
// an error. buildKernel picks the builder by the op's kernel family.
llvm::Expected<Halide::Func> buildElementwise(detail::KernelContext &ctx);
llvm::Expected<Halide::Func> buildMatmul(detail::KernelContext &ctx);
llvm::Expected<Halide::Func> buildReduction(detail::KernelContext &ctx);
llvm::Expected<Halide::Func> buildDataMovement(detail::KernelContext &ctx);
/// tfc.pack_panels, a data movement op whose layout is the matmul kernel's
/// (MatmulKernel.cpp).
llvm::Expected<Halide::Func> buildPackPanels(detail::KernelContext &ctx);
} // namespace tfc::codegen

#endif // TFC_CODEGEN_KERNELSUPPORT_H
