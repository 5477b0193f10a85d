//===- Token.h - Tokens of the .tfm language --------------------*- C++ -*-===//
//
// The lexer turns a source buffer into these tokens. A token does not own its
// spelling: `text` points into the SourceManager's copy of the file, which
// outlives every parse.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_TOKEN_H
#define TFC_FRONTEND_TOKEN_H

#include "frontend/SourceLocation.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tfc {

enum class TokenKind {
  Eof,
  Ident,
  Int,
  Float,
  String,

  // Keywords. `model`, `dim`, the dtype names and the parameter kinds are
  // ordinary identifiers that the parser recognises by position.
  KwImport,
  KwConfig,
  KwBlock,
  KwEntry,
  KwParam,
  KwFor,
  KwIn,
  KwIf,
  KwElse,
  KwReturn,
  KwAssert,
  KwTrue,
  KwFalse,
  KwAnd,
  KwOr,
  KwNot,

  // Punctuation and operators.
  LParen,    // (
  RParen,    // )
  LBracket,  // [
  RBracket,  // ]
  LBrace,    // {
  RBrace,    // }
  Comma,     // ,
  Colon,     // :
  Semi,      // ;
  Assign,    // =
  EqEq,      // ==
  NotEq,     // !=
  Less,      // <
  LessEq,    // <=
  Greater,   // >
  GreaterEq, // >=
  Plus,      // +
  Minus,     // -
  Star,      // *
  StarStar,  // **
  Slash,     // /
  Percent,   // %
  At,        // @
  DotDot,    // ..
  Ellipsis,  // ...
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  SourceLoc loc;
  /// The spelling. For a String it is the raw body between the quotes, with
  /// escapes and `{...}` holes left for the parser, which needs the offsets
  /// to give each hole its own location.
  std::string_view text;
  int64_t intValue = 0;    // Int
  double floatValue = 0.0; // Float
  bool malformed = false;  // an error was already reported for it

  bool is(TokenKind k) const { return kind == k; }
  bool isNot(TokenKind k) const { return kind != k; }
  bool isIdent(std::string_view name) const {
    return kind == TokenKind::Ident && text == name;
  }
};

/// A fixed name for a kind, used in "expected X" messages: "identifier",
/// "'('", "'for'", "end of file".
const char *tokenKindName(TokenKind kind);

/// How to name an actual token in "found Y": "identifier 'x'", "integer 3",
/// "'}'", "end of file".
std::string describeToken(const Token &tok);

/// The keyword kind for `text`, or Ident.
TokenKind keywordKind(std::string_view text);

} // namespace tfc

#endif // TFC_FRONTEND_TOKEN_H
