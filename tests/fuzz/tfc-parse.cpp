//===- tfc-parse.cpp - Parse a .tfm file and report its syntax errors -----===//
//
//   tfc-parse [--dump-ast | --expr] <file | ->
//
// Prints diagnostics to stderr; with --dump-ast prints the AST to stdout;
// with --expr parses the whole file as one expression and prints it. Exits 1
// when there were errors, 0 otherwise. A test driver for the frontend alone,
// usable while the full `tfc` CLI is elsewhere.
//
//===----------------------------------------------------------------------===//

#include "frontend/ASTPrinter.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "frontend/SourceLocation.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

int main(int argc, char **argv) {
  bool dumpAST = false, expr = false;
  const char *path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--dump-ast") == 0) {
      dumpAST = true;
    } else if (std::strcmp(argv[i], "--expr") == 0) {
      expr = true;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      llvm::errs() << "tfc-parse: unknown option '" << argv[i] << "'\n";
      return 1;
    } else if (!path) {
      path = argv[i];
    } else {
      path = nullptr;
      break;
    }
  }
  if (!path) {
    llvm::errs() << "usage: tfc-parse [--dump-ast | --expr] <file | ->\n";
    return 1;
  }

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                                   /*RequiresNullTerminator=*/
                                                   false);
  if (!buffer) {
    llvm::errs() << "tfc-parse: cannot read '" << path
                 << "': " << buffer.getError().message() << "\n";
    return 1;
  }

  tfc::SourceManager sources;
  uint32_t fileId =
      sources.addBuffer(std::strcmp(path, "-") == 0 ? "<stdin>" : path,
                        (*buffer)->getBuffer().str());
  tfc::DiagnosticEngine diags(sources);
  if (expr) {
    tfc::ast::ExprPtr e = tfc::parseExpression(fileId, sources, diags);
    if (e) {
      tfc::printExpr(*e, llvm::outs());
      llvm::outs() << "\n";
    }
  } else {
    std::unique_ptr<tfc::ast::Module> module =
        tfc::parseModule(fileId, sources, diags);
    if (dumpAST)
      tfc::printAST(*module, llvm::outs());
  }
  llvm::outs().flush();
  diags.print(llvm::errs());
  return diags.hasErrors() ? 1 : 0;
}
