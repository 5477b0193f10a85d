//===- Lexer.cpp - Tokenizer of the .tfm language -------------------------===//

#include "frontend/Lexer.h"

#include "frontend/Diagnostics.h"

#include <charconv>
#include <cstdio>
#include <limits>
#include <string>

namespace tfc {

namespace {

bool isIdentStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(unsigned char c) { return isIdentStart(c) || isDigit(c); }

std::string hexByte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%02X", c);
  return buf;
}

/// How an unexpected character is named in a message: printable ASCII
/// quoted, anything else by its code.
std::string describeChar(std::string_view text, size_t pos, unsigned length) {
  unsigned char c = static_cast<unsigned char>(text[pos]);
  if (c >= 0x20 && c < 0x7F)
    return "'" + std::string(1, static_cast<char>(c)) + "'";
  if (c < 0x80)
    return "control character " + hexByte(c);
  // A valid multi-byte character: show it and its code point.
  uint32_t cp = c & (0xFF >> (length + 1));
  for (unsigned i = 1; i < length; ++i)
    cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  char buf[16];
  std::snprintf(buf, sizeof(buf), "U+%04X", cp);
  return "'" + std::string(text.substr(pos, length)) + "' (" + buf + ")";
}

} // namespace

unsigned utf8SequenceLength(std::string_view text, size_t pos) {
  auto at = [&](size_t i) -> unsigned {
    return pos + i < text.size() ? static_cast<unsigned char>(text[pos + i])
                                 : 0x100; // never a continuation byte
  };
  auto cont = [&](size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) {
    unsigned b = at(i);
    return b >= lo && b <= hi;
  };
  unsigned b0 = at(0);
  if (b0 < 0x80)
    return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF)
    return cont(1) ? 2 : 0;
  if (b0 == 0xE0)
    return cont(1, 0xA0) && cont(2) ? 3 : 0; // no overlong forms
  if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF)
    return cont(1) && cont(2) ? 3 : 0;
  if (b0 == 0xED)
    return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0; // no surrogates
  if (b0 == 0xF0)
    return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (b0 >= 0xF1 && b0 <= 0xF3)
    return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (b0 == 0xF4)
    return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0; // <= U+10FFFF
  return 0;
}

Lexer::Lexer(std::string_view buffer, SourceLoc start, DiagnosticEngine &diags,
             bool inTemplateHole)
    : buffer(buffer), fileId(start.fileId), line(start.line ? start.line : 1),
      col(start.col ? start.col : 1), diags(diags),
      inTemplateHole(inTemplateHole) {
  // A UTF-8 byte order mark is invisible in editors: skip it without moving
  // the column.
  if (!inTemplateHole && buffer.substr(0, 3) == "\xEF\xBB\xBF")
    pos = 3;
}

void Lexer::advance(size_t n) {
  for (size_t i = 0; i < n && pos < buffer.size(); ++i, ++pos) {
    if (buffer[pos] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
}

void Lexer::skipOddByte() {
  if (peekByte() == 0) {
    diags.error(here(), "unexpected null character");
    advance();
    return;
  }
  unsigned length = utf8SequenceLength(buffer, pos);
  if (length != 0) {
    advance(length);
    return;
  }
  diags.error(here(), "invalid UTF-8 byte " + hexByte(peekByte()));
  advance();
  // Report a run of garbage once: skip the bytes that cannot start a valid
  // character either.
  while (!atEnd() && peekByte() >= 0x80 && utf8SequenceLength(buffer, pos) == 0)
    advance();
}

void Lexer::skipLineComment() {
  while (!atEnd() && peekByte() != '\n') {
    unsigned char c = peekByte();
    if (c == 0 || c >= 0x80)
      skipOddByte();
    else
      advance();
  }
}

void Lexer::skipTrivia() {
  while (!atEnd()) {
    unsigned char c = peekByte();
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
        c == '\v') {
      advance();
    } else if (!inTemplateHole &&
               (c == '#' || (c == '/' && peekByte(1) == '/'))) {
      skipLineComment();
    } else {
      return;
    }
  }
}

Token Lexer::makeToken(TokenKind kind, SourceLoc loc, size_t begin) {
  Token tok;
  tok.kind = kind;
  tok.loc = loc;
  tok.text = buffer.substr(begin, pos - begin);
  return tok;
}

Token Lexer::lexIdentifier() {
  SourceLoc loc = here();
  size_t begin = pos;
  while (!atEnd() && isIdentChar(peekByte()))
    advance();
  Token tok = makeToken(TokenKind::Ident, loc, begin);
  tok.kind = keywordKind(tok.text);
  return tok;
}

Token Lexer::lexNumber() {
  SourceLoc loc = here();
  size_t begin = pos;
  bool isFloat = false;
  auto digits = [&] {
    while (!atEnd() && (isDigit(peekByte()) || peekByte() == '_'))
      advance();
  };
  if (peekByte() == '.') {
    isFloat = true;
    advance();
    digits();
  } else {
    digits();
    // `0..n` is a range, so a dot makes a fraction only before a digit.
    if (peekByte() == '.' && isDigit(peekByte(1))) {
      isFloat = true;
      advance();
      digits();
    }
  }
  unsigned char e = peekByte();
  if ((e == 'e' || e == 'E') &&
      (isDigit(peekByte(1)) ||
       ((peekByte(1) == '+' || peekByte(1) == '-') && isDigit(peekByte(2))))) {
    isFloat = true;
    advance(2);
    digits();
  }
  Token tok =
      makeToken(isFloat ? TokenKind::Float : TokenKind::Int, loc, begin);

  // `12abc` would otherwise lex as two tokens and give a confusing parse
  // error; name the real problem instead.
  if (!atEnd() && isIdentChar(peekByte())) {
    SourceLoc suffixLoc = here();
    size_t suffixBegin = pos;
    while (!atEnd() && isIdentChar(peekByte()))
      advance();
    diags.error(suffixLoc,
                "invalid suffix '" +
                    std::string(buffer.substr(suffixBegin, pos - suffixBegin)) +
                    "' on number");
    tok.malformed = true;
  }

  std::string clean;
  for (char c : tok.text)
    if (c != '_')
      clean += c;

  if (!isFloat) {
    int64_t value = 0;
    bool overflow = false;
    for (char c : clean) {
      int digit = c - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        overflow = true;
        break;
      }
      value = value * 10 + digit;
    }
    if (overflow) {
      diags.error(loc, "integer literal is too large (the limit is "
                       "9223372036854775807)");
      tok.malformed = true;
      value = 0;
    }
    tok.intValue = value;
    return tok;
  }

  // from_chars does not depend on the C locale, unlike strtod.
  double value = 0.0;
  auto result =
      std::from_chars(clean.data(), clean.data() + clean.size(), value);
  if (result.ec == std::errc::result_out_of_range) {
    // Underflow rounds to zero; overflow is an error.
    bool negativeExponent = clean.find("e-") != std::string::npos ||
                            clean.find("E-") != std::string::npos;
    if (negativeExponent) {
      value = 0.0;
    } else {
      diags.error(loc, "floating-point literal is too large");
      tok.malformed = true;
      value = 0.0;
    }
  } else if (result.ec != std::errc()) {
    value = 0.0; // cannot happen for the shapes lexed above
  }
  tok.floatValue = value;
  return tok;
}

Token Lexer::lexString() {
  SourceLoc loc = here();
  advance(); // opening quote
  size_t bodyBegin = pos;
  while (true) {
    // Strings end at the line: a missing quote is then reported where it
    // happened instead of swallowing the rest of the file.
    if (atEnd() || peekByte() == '\n') {
      diags.error(loc, "unterminated string");
      Token tok = makeToken(TokenKind::String, loc, bodyBegin);
      tok.malformed = true;
      return tok;
    }
    unsigned char c = peekByte();
    if (c == '"') {
      Token tok = makeToken(TokenKind::String, loc, bodyBegin);
      advance();
      return tok;
    }
    if (c == '\\') {
      unsigned char n = peekByte(1);
      if (atEnd(1) || n == '\n') {
        advance(); // the unterminated-string check reports it
        continue;
      }
      if (n == '"' || n == '\\' || n == 'n' || n == 't' || n == '{' ||
          n == '}') {
        advance(2);
        continue;
      }
      std::string shown;
      if (n >= 0x20 && n < 0x7F)
        shown = "'\\" + std::string(1, static_cast<char>(n)) + "'";
      else
        shown = "'\\' followed by byte " + hexByte(n);
      diags.error(here(), "invalid escape sequence " + shown +
                              " (valid: \\\" \\\\ \\n \\t \\{ \\})");
      advance(); // the next character is lexed as ordinary string text
      continue;
    }
    if (c == 0 || c >= 0x80) {
      skipOddByte();
      continue;
    }
    advance();
  }
}

Token Lexer::next() {
  while (true) {
    skipTrivia();
    if (atEnd() || diags.tooManyErrors()) {
      Token eof;
      eof.kind = TokenKind::Eof;
      eof.loc = here();
      eof.text = buffer.substr(buffer.size());
      return eof;
    }

    SourceLoc loc = here();
    size_t begin = pos;
    unsigned char c = peekByte();
    if (isIdentStart(c))
      return lexIdentifier();
    if (isDigit(c) || (c == '.' && isDigit(peekByte(1))))
      return lexNumber();
    if (c == '"') {
      if (inTemplateHole) {
        // The enclosing string ended at its first unescaped quote, so a
        // quote here can only come from a `\"` escape.
        diags.error(loc, "a template hole cannot contain a string");
        advance();
        continue;
      }
      return lexString();
    }

    auto single = [&](TokenKind kind) {
      advance();
      return makeToken(kind, loc, begin);
    };
    auto pair = [&](char second, TokenKind two, TokenKind one) {
      if (peekByte(1) == static_cast<unsigned char>(second)) {
        advance(2);
        return makeToken(two, loc, begin);
      }
      advance();
      return makeToken(one, loc, begin);
    };

    switch (c) {
    case '(':
      return single(TokenKind::LParen);
    case ')':
      return single(TokenKind::RParen);
    case '[':
      return single(TokenKind::LBracket);
    case ']':
      return single(TokenKind::RBracket);
    case '{':
      return single(TokenKind::LBrace);
    case '}':
      return single(TokenKind::RBrace);
    case ',':
      return single(TokenKind::Comma);
    case ':':
      return single(TokenKind::Colon);
    case ';':
      return single(TokenKind::Semi);
    case '+':
      return single(TokenKind::Plus);
    case '-':
      return single(TokenKind::Minus);
    case '*':
      return pair('*', TokenKind::StarStar, TokenKind::Star);
    case '/':
      return single(TokenKind::Slash);
    case '%':
      return single(TokenKind::Percent);
    case '@':
      return single(TokenKind::At);
    case '=':
      return pair('=', TokenKind::EqEq, TokenKind::Assign);
    case '<':
      return pair('=', TokenKind::LessEq, TokenKind::Less);
    case '>':
      return pair('=', TokenKind::GreaterEq, TokenKind::Greater);
    case '.':
      if (peekByte(1) == '.' && peekByte(2) == '.') {
        advance(3);
        return makeToken(TokenKind::Ellipsis, loc, begin);
      }
      if (peekByte(1) == '.') {
        advance(2);
        return makeToken(TokenKind::DotDot, loc, begin);
      }
      diags.error(loc, "unexpected character '.'");
      advance();
      continue;
    case '!':
      if (peekByte(1) == '=') {
        advance(2);
        return makeToken(TokenKind::NotEq, loc, begin);
      }
      diags.error(loc, "unexpected character '!'; use 'not'");
      advance();
      continue;
    case '&':
      diags.error(loc, "unexpected character '&'; use 'and'");
      advance(peekByte(1) == '&' ? 2 : 1);
      continue;
    case '|':
      diags.error(loc, "unexpected character '|'; use 'or'");
      advance(peekByte(1) == '|' ? 2 : 1);
      continue;
    case 0:
      diags.error(loc, "unexpected null character");
      advance();
      continue;
    default:
      break;
    }

    if (c >= 0x80) {
      unsigned length = utf8SequenceLength(buffer, pos);
      if (length == 0) {
        skipOddByte(); // reports the invalid bytes
        continue;
      }
      diags.error(loc,
                  "unexpected character " + describeChar(buffer, pos, length));
      advance(length);
      continue;
    }
    diags.error(loc, "unexpected character " + describeChar(buffer, pos, 1));
    advance();
  }
}

std::vector<Token> Lexer::lexAll() {
  std::vector<Token> tokens;
  do
    tokens.push_back(next());
  while (tokens.back().isNot(TokenKind::Eof));
  return tokens;
}

} // namespace tfc
