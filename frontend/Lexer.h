//===- Lexer.h - Tokenizer of the .tfm language -----------------*- C++ -*-===//
//
// Turns a buffer into tokens on demand. Errors (unknown characters, bad
// numbers, unterminated strings, bad escapes, NUL bytes, invalid UTF-8) are
// reported to the DiagnosticEngine and skipped, so lexing always continues and
// always ends with an Eof token.
//
// Columns count bytes from 1; a tab is one column. This matches how
// DiagnosticEngine draws its caret (byte by byte, keeping tabs).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_LEXER_H
#define TFC_FRONTEND_LEXER_H

#include "frontend/Token.h"

#include <string_view>
#include <vector>

namespace tfc {

class DiagnosticEngine;

class Lexer {
public:
  /// Lexes `buffer`, whose first byte is at `start`. A template hole is lexed
  /// with `inTemplateHole` set: it starts mid-line, has no comments, and its
  /// end-of-input is the hole's closing `}`.
  Lexer(std::string_view buffer, SourceLoc start, DiagnosticEngine &diags,
        bool inTemplateHole = false);

  /// The next token; Eof at the end (and forever after), or as soon as the
  /// diagnostic engine has reached its error limit.
  Token next();

  /// Every token up to and including Eof.
  std::vector<Token> lexAll();

  uint32_t getFileId() const { return fileId; }

private:
  SourceLoc here() const { return {fileId, line, col}; }
  unsigned char peekByte(size_t ahead = 0) const {
    return pos + ahead < buffer.size()
               ? static_cast<unsigned char>(buffer[pos + ahead])
               : 0;
  }
  bool atEnd(size_t ahead = 0) const { return pos + ahead >= buffer.size(); }
  void advance(size_t n = 1);

  void skipTrivia();
  void skipLineComment();
  /// Skips one non-ASCII character or NUL inside a comment or string,
  /// reporting it if it is not valid UTF-8 (a run of bad bytes is reported
  /// once).
  void skipOddByte();

  Token lexIdentifier();
  Token lexNumber();
  Token lexString();
  Token makeToken(TokenKind kind, SourceLoc loc, size_t begin);

  std::string_view buffer;
  size_t pos = 0;
  uint32_t fileId;
  uint32_t line;
  uint32_t col;
  DiagnosticEngine &diags;
  bool inTemplateHole;
};

/// Length of the valid UTF-8 sequence starting at `text[pos]` (1 to 4), or
/// 0 when the bytes there are not valid UTF-8 (overlong forms, surrogates and
/// code points above U+10FFFF are invalid).
unsigned utf8SequenceLength(std::string_view text, size_t pos);

} // namespace tfc

#endif // TFC_FRONTEND_LEXER_H
