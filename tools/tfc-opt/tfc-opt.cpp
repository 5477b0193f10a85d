//===- tfc-opt.cpp - mlir-opt for the tfc dialect -------------------------===//
//
// Parses, verifies, transforms and prints IR that uses the tfc dialect. The
// lit tests drive the dialect and the passes through it.
//
//===----------------------------------------------------------------------===//

#include "ir/TfcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::tfc::TfcDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  // canonicalize, cse, symbol-dce, inline, ...; the tfc passes register
  // themselves here once passes/ provides a registration function.
  mlir::registerTransformsPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tfc optimizer driver\n", registry));
}
