//===- Parser.h - Recursive-descent parser of the .tfm language -*- C++ -*-===//
//
// Parses a file into an ast::Module following the grammar in
// docs/language.md. Errors are reported to the DiagnosticEngine as
// "expected X, found Y" at the offending token; the parser then resynchronises
// (at top level to the next declaration keyword, inside a body to the next
// statement or `}`) so one run reports every independent error, up to the
// engine's limit. Nesting is capped (kMaxNestingDepth) so no input can make
// the parser, or a later recursive walk of the tree, overflow the stack.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_PARSER_H
#define TFC_FRONTEND_PARSER_H

#include "frontend/AST.h"

#include <cstdint>
#include <memory>

namespace tfc {

class DiagnosticEngine;
class SourceManager;

/// How deep expressions, blocks and `else if` chains may nest. Each level
/// costs about ten parser stack frames; the AST is at most about twice as deep.
constexpr unsigned kMaxNestingDepth = 256;

/// Parses file `fileId` of `sources`. Always returns a module: with errors it
/// holds what could be parsed, so callers check `diags.hasErrors()`.
std::unique_ptr<ast::Module>
parseModule(uint32_t fileId, SourceManager &sources, DiagnosticEngine &diags);

/// Parses the whole of file `fileId` as one expression (e.g. a `--set d=1024`
/// override, added to the SourceManager as its own buffer). Returns null
/// when any error (lexical or syntactic) was reported.
ast::ExprPtr parseExpression(uint32_t fileId, SourceManager &sources,
                             DiagnosticEngine &diags);

} // namespace tfc

#endif // TFC_FRONTEND_PARSER_H
