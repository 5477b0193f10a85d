//===- AotProcessSafety.h - Fatal errors and signals in the tools -*- C++ -*-===//
//
// What the tfc tools install before doing anything, so that no input ends
// the process with an abort and no interrupted run leaves files behind:
//
//  - rt::installTempFileCleanup(): SIGINT/SIGTERM/SIGHUP/SIGQUIT remove the
//    registered temporary files (runtime/FileWriter.h) and re-raise;
//    SIGXFSZ is ignored, so a write past RLIMIT_FSIZE fails with EFBIG and
//    becomes an error message.
//  - LLVM's fatal-error and bad-alloc handlers, in both LLVMs of the process
//    (MLIR's LLVM 19, and the LLVM 14 that libHalide14 carries, found by
//    symbol version): "LLVM ERROR: ... / abort" becomes "error: ..." on
//    stderr, the temporary files are removed, and the process exits with
//    status 1. These are a last line of defence: every write tfc does
//    itself is checked, and Halide's compilations that tfc keeps run in
//    memory, so no known input reaches them.
//
// It lives in TfcAot (which every tool that compiles kernels links) rather
// than in tools/tfc so that each command can call it; calling it more than
// once is harmless.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_CODEGEN_AOT_AOTPROCESSSAFETY_H
#define TFC_CODEGEN_AOT_AOTPROCESSSAFETY_H

namespace tfc::codegen {

/// Installs the handlers above. Idempotent and thread-safe.
void installProcessSafetyHandlers();

} // namespace tfc::codegen

#endif // TFC_CODEGEN_AOT_AOTPROCESSSAFETY_H
