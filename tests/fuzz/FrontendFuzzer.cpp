//===- FrontendFuzzer.cpp - libFuzzer target for the .tfm frontend --------===//
//
// Feeds arbitrary bytes to the lexer and parser (as a file and as a
// standalone expression), then prints the AST and the diagnostics, so any
// crash, hang, leak or undefined behaviour in those paths is found. Built by
// tests/fuzz/CMakeLists.txt with clang; run with scripts/fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "frontend/ASTPrinter.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "frontend/SourceLocation.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  llvm::raw_null_ostream sink;

  tfc::SourceManager sources;
  uint32_t fileId = sources.addBuffer("fuzz.tfm", text);
  tfc::DiagnosticEngine diags(sources);
  std::unique_ptr<tfc::ast::Module> module =
      tfc::parseModule(fileId, sources, diags);
  if (!module)
    __builtin_trap(); // parseModule always returns a module
  tfc::printAST(*module, sink);
  diags.print(sink);

  // The same bytes as a `--set name=<expr>` override.
  uint32_t exprId = sources.addBuffer("fuzz-expr", std::move(text));
  tfc::DiagnosticEngine exprDiags(sources);
  if (tfc::ast::ExprPtr expr =
          tfc::parseExpression(exprId, sources, exprDiags)) {
    if (exprDiags.hasErrors())
      __builtin_trap(); // a returned expression means it parsed cleanly
    tfc::printExpr(*expr, sink);
  }
  exprDiags.print(sink);
  return 0;
}
