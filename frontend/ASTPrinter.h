//===- ASTPrinter.h - Readable dump of a parsed .tfm file -------*- C++ -*-===//
//
// `tfc dump --emit=ast`: one line per declaration and statement, indented by
// nesting and ending in `@line:col`; expressions are written inline in a
// prefix form that shows the tree (`Binary * (Int 3, Ident d)`).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_ASTPRINTER_H
#define TFC_FRONTEND_ASTPRINTER_H

#include "frontend/AST.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tfc {

void printAST(const ast::Module &module, llvm::raw_ostream &os);

/// One expression in the inline form used by printAST.
void printExpr(const ast::Expr &expr, llvm::raw_ostream &os);

} // namespace tfc

#endif // TFC_FRONTEND_ASTPRINTER_H
