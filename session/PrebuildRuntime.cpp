//===- PrebuildRuntime.cpp - Halide's runtime, built with tfc -------------===//
//
// tfc-prebuild-runtime DIR: writes Halide's standalone runtime for this
// machine (codegen::hostTarget) into DIR under the name the kernel cache
// looks for (session::writeRuntime). The build runs it into
// TFC_PREBUILT_RUNTIME_DIR, so that a cold start with an empty kernel cache
// folder loads that runtime instead of compiling it on the compile threads.
// Runtimes of earlier builds in DIR (other names) are removed.
//
//===----------------------------------------------------------------------===//

#include "session/KernelDiskCache.h"

#include "codegen/KernelBuilder.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: tfc-prebuild-runtime DIR\n";
    return 2;
  }
  std::string dir = argv[1];
  std::set<std::string> before;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::filename(it->path()).starts_with("runtime-"))
      before.insert(it->path());
  llvm::Expected<std::string> written =
      tfc::session::writeRuntime(dir, tfc::codegen::hostTarget());
  if (!written) {
    llvm::errs() << "tfc-prebuild-runtime: "
                 << llvm::toString(written.takeError()) << "\n";
    return 1;
  }
  for (const std::string &path : before)
    if (path != *written)
      llvm::sys::fs::remove(path);
  return 0;
}
