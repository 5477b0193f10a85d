//===- Token.cpp - Tokens of the .tfm language ----------------------------===//

#include "frontend/Token.h"

namespace tfc {

const char *tokenKindName(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::Ident:
    return "identifier";
  case TokenKind::Int:
    return "integer";
  case TokenKind::Float:
    return "number";
  case TokenKind::String:
    return "string";
  case TokenKind::KwImport:
    return "'import'";
  case TokenKind::KwConfig:
    return "'config'";
  case TokenKind::KwBlock:
    return "'block'";
  case TokenKind::KwEntry:
    return "'entry'";
  case TokenKind::KwParam:
    return "'param'";
  case TokenKind::KwFor:
    return "'for'";
  case TokenKind::KwIn:
    return "'in'";
  case TokenKind::KwIf:
    return "'if'";
  case TokenKind::KwElse:
    return "'else'";
  case TokenKind::KwReturn:
    return "'return'";
  case TokenKind::KwAssert:
    return "'assert'";
  case TokenKind::KwTrue:
    return "'true'";
  case TokenKind::KwFalse:
    return "'false'";
  case TokenKind::KwAnd:
    return "'and'";
  case TokenKind::KwOr:
    return "'or'";
  case TokenKind::KwNot:
    return "'not'";
  case TokenKind::LParen:
    return "'('";
  case TokenKind::RParen:
    return "')'";
  case TokenKind::LBracket:
    return "'['";
  case TokenKind::RBracket:
    return "']'";
  case TokenKind::LBrace:
    return "'{'";
  case TokenKind::RBrace:
    return "'}'";
  case TokenKind::Comma:
    return "','";
  case TokenKind::Colon:
    return "':'";
  case TokenKind::Semi:
    return "';'";
  case TokenKind::Assign:
    return "'='";
  case TokenKind::EqEq:
    return "'=='";
  case TokenKind::NotEq:
    return "'!='";
  case TokenKind::Less:
    return "'<'";
  case TokenKind::LessEq:
    return "'<='";
  case TokenKind::Greater:
    return "'>'";
  case TokenKind::GreaterEq:
    return "'>='";
  case TokenKind::Plus:
    return "'+'";
  case TokenKind::Minus:
    return "'-'";
  case TokenKind::Star:
    return "'*'";
  case TokenKind::StarStar:
    return "'**'";
  case TokenKind::Slash:
    return "'/'";
  case TokenKind::Percent:
    return "'%'";
  case TokenKind::At:
    return "'@'";
  case TokenKind::DotDot:
    return "'..'";
  case TokenKind::Ellipsis:
    return "'...'";
  }
  return "token";
}

std::string describeToken(const Token &tok) {
  // Literals are named with their spelling so the user sees which one; long
  // spellings are cut because the caret already shows where it is.
  auto quoted = [&](const char *what) {
    std::string text(tok.text.substr(0, 32));
    if (tok.text.size() > 32)
      text += "...";
    return std::string(what) + " '" + text + "'";
  };
  switch (tok.kind) {
  case TokenKind::Ident:
    return quoted("identifier");
  case TokenKind::Int:
    return quoted("integer");
  case TokenKind::Float:
    return quoted("number");
  case TokenKind::String:
    return "string";
  default:
    return tokenKindName(tok.kind);
  }
}

TokenKind keywordKind(std::string_view text) {
  struct Keyword {
    std::string_view spelling;
    TokenKind kind;
  };
  static constexpr Keyword keywords[] = {
      {"import", TokenKind::KwImport}, {"config", TokenKind::KwConfig},
      {"block", TokenKind::KwBlock},   {"entry", TokenKind::KwEntry},
      {"param", TokenKind::KwParam},   {"for", TokenKind::KwFor},
      {"in", TokenKind::KwIn},         {"if", TokenKind::KwIf},
      {"else", TokenKind::KwElse},     {"return", TokenKind::KwReturn},
      {"assert", TokenKind::KwAssert}, {"true", TokenKind::KwTrue},
      {"false", TokenKind::KwFalse},   {"and", TokenKind::KwAnd},
      {"or", TokenKind::KwOr},         {"not", TokenKind::KwNot},
  };
  for (const Keyword &kw : keywords)
    if (kw.spelling == text)
      return kw.kind;
  return TokenKind::Ident;
}

} // namespace tfc
