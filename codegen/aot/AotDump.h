//===- AotDump.h - Readable Halide pipelines for tfc dump -------*- C++ -*-===//
//
// `tfc dump --emit=halide` shows, per kernel, what codegen built: the
// kernel's arguments, every Func's definitions (pure and update, with their
// reduction domains) and schedule (compute level, splits, loop kinds), and
// the loop nest Halide derives from them. It is the level between the fused
// IR and the lowered statement (`--emit=stmt`), where a schedule is judged.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_AOT_AOTDUMP_H
#define TFC_CODEGEN_AOT_AOTDUMP_H

#include "codegen/KernelBuilder.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tfc::codegen {

/// The kernel's arguments, Funcs (callees first) with their schedules, and
/// its loop nest, as text. Never throws: Halide errors become llvm::Error.
llvm::Expected<std::string> describePipeline(const Kernel &kernel);

/// The C++ source Halide's C backend writes for the kernel (`tfc dump
/// --emit=c`, `tfc emit`), produced in memory: no temporary file whose
/// failed write Halide would not notice.
llvm::Expected<std::string> cSource(const Kernel &kernel,
                                    const Halide::Target &target);

/// Halide's HTML statement view of the kernel (what a stmt_html output file
/// holds), produced in memory: Halide writes it to a pipe that tfc drains,
/// so no file exists whose failed write Halide would not notice, and the
/// caller writes the result with rt::AtomicFileWriter.
llvm::Expected<std::string> stmtHtml(const Kernel &kernel,
                                     const Halide::Target &target);

/// The PTX Halide generates for the kernel's GPU loops with a CUDA target
/// (`tfc dump --emit=ptx`): the `<name>_gpu_source_kernels` buffer that
/// Halide embeds in the lowered module and hands to the CUDA driver at run
/// time, as text (one PTX module: every GPU loop of the kernel is one
/// `.entry`). Empty when the kernel has no loop on the GPU. `target` must
/// have the CUDA feature.
llvm::Expected<std::string> ptxSource(const Kernel &kernel,
                                      const Halide::Target &target);

/// "in0: float32[3], in1: float32[2] -> matmul_3: float32[3]".
std::string describeArguments(const Kernel &kernel);

/// Halide 14's C backend declares the struct of a device allocation made
/// outside the GPU loops (an intermediate that Halide keeps per thread in
/// global memory, as GPT-2 attention's P V accumulator once was) with the
/// allocation's element type:
///   float *f_buffer = (float *)_12;   // _12 = _halide_buffer_init(...)
/// and then passes it to halide_device_malloc, which wants a
/// `halide_buffer_t *`: the source does not compile. Such a line of `text`
/// (C source of a CUDA target, cSource) is retyped to
/// `halide_buffer_t *f_buffer = _12;`. The allocation's device address,
/// `auto *_13 = _halide_buffer_get_device(f_buffer);`, is a uint64_t: its
/// `auto *` becomes `auto`.
std::string retypeDeviceBuffers(const std::string &text);

} // namespace tfc::codegen

#endif // TFC_CODEGEN_AOT_AOTDUMP_H
