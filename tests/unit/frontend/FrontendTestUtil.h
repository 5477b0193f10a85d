//===- FrontendTestUtil.h - Helpers for the frontend unit tests -*- C++ -*-===//

#ifndef TFC_TESTS_UNIT_FRONTEND_FRONTENDTESTUTIL_H
#define TFC_TESTS_UNIT_FRONTEND_FRONTENDTESTUTIL_H

#include "frontend/AST.h"
#include "frontend/ASTPrinter.h"
#include "frontend/Diagnostics.h"
#include "frontend/Lexer.h"
#include "frontend/Parser.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace tfc::test {

/// Owns the sources and diagnostics for one test input.
struct Source {
  explicit Source(std::string text, std::string name = "test.tfm")
      : diags(sources) {
    fileId = sources.addBuffer(std::move(name), std::move(text));
  }

  std::vector<Token> lex() {
    Lexer lexer(sources.getContents(fileId), SourceLoc{fileId, 1, 1}, diags);
    return lexer.lexAll();
  }
  std::unique_ptr<ast::Module> parse() {
    return parseModule(fileId, sources, diags);
  }
  ast::ExprPtr parseExpr() { return parseExpression(fileId, sources, diags); }

  /// Errors as "line:col: message", notes as "line:col: note: message".
  std::vector<std::string> messages() const {
    std::vector<std::string> out;
    for (const Diagnostic &d : diags.getDiagnostics())
      out.push_back(std::to_string(d.loc.line) + ":" +
                    std::to_string(d.loc.col) + ": " +
                    (d.severity == Severity::Note ? "note: " : "") + d.message);
    return out;
  }
  /// Errors only, in the same format.
  std::vector<std::string> errors() const {
    std::vector<std::string> out;
    for (const Diagnostic &d : diags.getDiagnostics())
      if (d.severity == Severity::Error)
        out.push_back(std::to_string(d.loc.line) + ":" +
                      std::to_string(d.loc.col) + ": " + d.message);
    return out;
  }

  SourceManager sources;
  DiagnosticEngine diags;
  uint32_t fileId;
};

inline std::string exprString(const ast::Expr &e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printExpr(e, os);
  return os.str();
}

inline std::string astString(const ast::Module &m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printAST(m, os);
  return os.str();
}

inline std::string locString(SourceLoc loc) {
  return std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

} // namespace tfc::test

#endif // TFC_TESTS_UNIT_FRONTEND_FRONTENDTESTUTIL_H
