//===- AotProcessSafety.cpp - Fatal errors and signals in the tools -------===//

#include "codegen/aot/AotProcessSafety.h"

#include "runtime/FileWriter.h"

#include "llvm/Support/ErrorHandling.h"

#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <unistd.h>

namespace {

/// Both LLVMs call handlers of this type (LLVM 14 and 19 agree).
using FatalHandler = void (*)(void *userData, const char *reason,
                              bool genCrashDiag);
using InstallFn = void (*)(FatalHandler, void *);

void writeStderr(const char *text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0)
      return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

/// Never returns: LLVM would abort() after a handler that does.
[[noreturn]] void onFatalError(void *userData, const char *reason, bool) {
  writeStderr("error: ");
  writeStderr(userData ? static_cast<const char *>(userData) : "");
  writeStderr(reason ? reason : "unknown error");
  writeStderr("\n");
  tfc::rt::removeTempPaths();
  ::_exit(1);
}

void onFatalErrorHandler(void *userData, const char *reason, bool crash) {
  onFatalError(userData, reason, crash);
}

/// Installs the handlers in Halide's LLVM 14, when it is loaded.
void installInHalidesLLVM() {
  static const char kPrefix[] = "internal compiler error (Halide's LLVM): ";
  static const char kOutOfMemory[] = "out of memory (Halide's LLVM): ";
  if (auto fatal = reinterpret_cast<InstallFn>(::dlvsym(
          RTLD_DEFAULT, "_ZN4llvm27install_fatal_error_handlerEPFvPvPKcbES0_",
          "LLVM_14")))
    fatal(onFatalErrorHandler, const_cast<char *>(kPrefix));
  if (auto badAlloc = reinterpret_cast<InstallFn>(::dlvsym(
          RTLD_DEFAULT,
          "_ZN4llvm31install_bad_alloc_error_handlerEPFvPvPKcbES0_",
          "LLVM_14")))
    badAlloc(onFatalErrorHandler, const_cast<char *>(kOutOfMemory));
}

} // namespace

void tfc::codegen::installProcessSafetyHandlers() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true))
    return;
  tfc::rt::installTempFileCleanup();
  static const char kPrefix[] = "internal compiler error (LLVM): ";
  static const char kOutOfMemory[] = "out of memory (LLVM): ";
  llvm::install_fatal_error_handler(onFatalErrorHandler,
                                    const_cast<char *>(kPrefix));
  llvm::install_bad_alloc_error_handler(onFatalErrorHandler,
                                        const_cast<char *>(kOutOfMemory));
  installInHalidesLLVM();
}
