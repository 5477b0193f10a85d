//===- EmitCommand.cpp - tfc emit: a model as C++ sources -----------------===//
//
// tfc emit MODEL --target host|cuda -o DIR writes each kernel as C++ source
// (Halide's C backend), the project's runtime shim for the halide_*
// functions that code calls, the generated C++ API and the tfc runtime:
//
//   c++ -std=c++17 -O2 -march=native -I DIR -I DIR/include main.cpp \
//       DIR/*.cpp DIR/lib/libtfc_runtime.a -lpthread
//
// builds a program with no Halide, MLIR or LLVM. With --target cuda the
// kernels' host code embeds their PTX, and Halide's CUDA runtime ships as
// object code (lib/libhalide_runtime_cuda.a): Halide 14 has no source form
// of it. The implementation is shared with tfc compile (CompileCommand.cpp).
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"

using namespace tfc::driver;

CommandRunner tfc::driver::registerEmitCommand(CLI::App &app) {
  return registerAotCommand(
      app, /*emitSources=*/true, "emit",
      "Write a model as C++ sources (Halide's C backend) with a C++ API; "
      "builds with a C++ compiler alone");
}
