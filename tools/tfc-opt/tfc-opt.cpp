//===- tfc-opt.cpp - mlir-opt for the tfc dialect -------------------------===//
//
// Parses, verifies, transforms and prints IR that uses the tfc dialect. The
// passes, the fusion report and the default pipeline are registered by the
// passes library (passes/Pipeline.h); this file registers them and runs
// MlirOptMain, on a thread with a large stack, after a nesting check of the
// input, writing -o only on success. The lit tests drive the dialect and the
// passes through it:
//
//   tfc-opt --fuse-attention in.mlir          one pass (passes/Passes.td)
//   tfc-opt --tfc-default-pipeline in.mlir    the default pipeline
//   tfc-opt --tfc-default-pipeline="disable=fuse-attention,merge-qkv"
//   tfc-opt --tfc-default-pipeline --tfc-fusion-report -o /dev/null in.mlir
//                                             the fusion report on stdout
//   tfc-opt --tfc-default-pipeline="disable=merge-qkv"
//           --tfc-fusion-report="disabled=merge-qkv" ...
//
//===----------------------------------------------------------------------===//

#include "ir/TfcDialect.h"
#include "passes/Pipeline.h"
#include "runtime/FileWriter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

#include <string>

namespace {

/// The deepest nesting of brackets ({ ( [ <) in MLIR text, outside string
/// literals and `//` comments. MLIR's parser (and its verifier and printer)
/// recurse once per level, so input nested deeply enough overflows any
/// stack; over-counting (a `>` in a string) only makes the check stricter.
size_t nestingDepth(llvm::StringRef text) {
  size_t depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        break;
      continue;
    }
    if (c == '{' || c == '(' || c == '[' || c == '<')
      deepest = std::max(deepest, ++depth);
    else if ((c == '}' || c == ')' || c == ']' ||
              (c == '>' && (i == 0 || text[i - 1] != '-'))) &&
             depth > 0)
      --depth;
  }
  return deepest;
}

/// Far deeper than any real IR (a model's is under 10), and far shallower
/// than what kParserStackBytes holds.
constexpr size_t kMaxNesting = 1000;
/// The stack the parser, passes and printer run on.
constexpr unsigned kParserStackBytes = 256u << 20;

/// Writes `text` to stdout ("-") or with rt::writeFileAtomically to `path`.
mlir::LogicalResult writeOutput(llvm::StringRef path, llvm::StringRef text) {
  if (path == "-") {
    llvm::outs() << text;
    llvm::outs().flush();
    if (!llvm::outs().has_error())
      return mlir::success();
    llvm::errs() << "error: cannot write to stdout: "
                 << llvm::outs().error().message() << "\n";
    llvm::outs().clear_error();
    return mlir::failure();
  }
  tfc::rt::Status written =
      tfc::rt::writeFileAtomically(path.str(), text.data(), text.size());
  if (written.ok())
    return mlir::success();
  llvm::errs() << "error: " << written.message() << "\n";
  return mlir::failure();
}

/// What mlir::MlirOptMain(argc, argv, ...) does, with the input's nesting
/// checked before it is parsed.
mlir::LogicalResult optMain(llvm::StringRef inputFilename,
                            llvm::StringRef outputFilename,
                            mlir::DialectRegistry &registry) {
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return mlir::success();
  }
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return mlir::failure();
  }
  size_t depth = nestingDepth(file->getBuffer());
  if (depth > kMaxNesting) {
    llvm::errs() << "error: " << inputFilename << ": the input nests "
                 << depth << " levels deep (the limit is " << kMaxNesting
                 << ")\n";
    return mlir::failure();
  }
  // The output is built in memory and written only on success: a failed run
  // (invalid IR, a failing pass, a full disk) leaves an existing -o file as
  // it was (docs/runtime.md, "How outputs are written").
  std::string output;
  llvm::raw_string_ostream os(output);
  if (mlir::failed(mlir::MlirOptMain(os, std::move(file), registry, config)))
    return mlir::failure();
  return writeOutput(outputFilename, os.str());
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // SIGXFSZ ignored (a write past `ulimit -f` is an error message) and
  // temporary files removed on SIGINT/SIGTERM/SIGHUP/SIGQUIT.
  tfc::rt::installTempFileCleanup();
  mlir::DialectRegistry registry;
  registry.insert<mlir::tfc::TfcDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  // canonicalize, cse, symbol-dce, inline, ...; the tfc passes, the fusion
  // report and the default pipeline.
  mlir::registerTransformsPasses();
  tfc::registerTfcPassesAndPipeline();
  std::pair<std::string, std::string> files = mlir::registerAndParseCLIOptions(
      argc, argv, "tfc optimizer driver\n", registry);
  // The main thread's stack (8 MiB) is too small for MLIR's recursion on
  // legitimately nested input; the work runs on a thread with a large one.
  mlir::LogicalResult result = mlir::failure();
  llvm::thread worker(std::optional<unsigned>(kParserStackBytes), [&] {
    result = optMain(files.first, files.second, registry);
  });
  worker.join();
  return mlir::asMainReturnCode(result);
}
