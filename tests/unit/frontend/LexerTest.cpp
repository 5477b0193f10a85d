//===- LexerTest.cpp - Tokens, locations and lexical errors ---------------===//

#include "FrontendTestUtil.h"

#include "gtest/gtest.h"

using namespace tfc;
using namespace tfc::test;

namespace {

std::vector<TokenKind> kinds(const std::vector<Token> &tokens) {
  std::vector<TokenKind> out;
  for (const Token &t : tokens)
    out.push_back(t.kind);
  return out;
}

TEST(LexerTest, EveryKeyword) {
  Source src("import config block entry param for in if else return assert "
             "true false and or not");
  using K = TokenKind;
  EXPECT_EQ(kinds(src.lex()),
            (std::vector<K>{K::KwImport, K::KwConfig, K::KwBlock, K::KwEntry,
                            K::KwParam, K::KwFor, K::KwIn, K::KwIf, K::KwElse,
                            K::KwReturn, K::KwAssert, K::KwTrue, K::KwFalse,
                            K::KwAnd, K::KwOr, K::KwNot, K::Eof}));
  EXPECT_FALSE(src.diags.hasErrors());
}

TEST(LexerTest, ContextualWordsAreIdentifiers) {
  // `model` and `dim` are keywords only by position; dtype and kind names
  // are identifiers everywhere.
  Source src("model dim f32 bf16 i64 bool tensor enum list _x9 Foo_Bar");
  std::vector<Token> tokens = src.lex();
  ASSERT_EQ(tokens.size(), 12u);
  for (size_t i = 0; i + 1 < tokens.size(); ++i)
    EXPECT_EQ(tokens[i].kind, TokenKind::Ident) << i;
  EXPECT_EQ(tokens[0].text, "model");
  EXPECT_EQ(tokens[10].text, "Foo_Bar");
}

TEST(LexerTest, EveryPunctuator) {
  Source src("( ) [ ] { } , : ; = == != < <= > >= + - * / % @ ..");
  using K = TokenKind;
  EXPECT_EQ(kinds(src.lex()),
            (std::vector<K>{K::LParen,  K::RParen, K::LBracket, K::RBracket,
                            K::LBrace,  K::RBrace, K::Comma,    K::Colon,
                            K::Semi,    K::Assign, K::EqEq,     K::NotEq,
                            K::Less,    K::LessEq, K::Greater,  K::GreaterEq,
                            K::Plus,    K::Minus,  K::Star,     K::Slash,
                            K::Percent, K::At,     K::DotDot,   K::Eof}));
  EXPECT_FALSE(src.diags.hasErrors());
}

TEST(LexerTest, PunctuatorsWithoutSpaces) {
  Source src("a<=b>=c==d!=e<f>g=h");
  using K = TokenKind;
  EXPECT_EQ(
      kinds(src.lex()),
      (std::vector<K>{K::Ident, K::LessEq, K::Ident, K::GreaterEq, K::Ident,
                      K::EqEq, K::Ident, K::NotEq, K::Ident, K::Less, K::Ident,
                      K::Greater, K::Ident, K::Assign, K::Ident, K::Eof}));
}

TEST(LexerTest, Locations) {
  // Lines and columns are 1-based; a tab is one column.
  Source src("model m\n\tx = 1\n  # comment\n  y");
  std::vector<Token> t = src.lex();
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(locString(t[0].loc), "1:1");
  EXPECT_EQ(locString(t[1].loc), "1:7");
  EXPECT_EQ(locString(t[2].loc), "2:2");
  EXPECT_EQ(locString(t[3].loc), "2:4");
  EXPECT_EQ(locString(t[4].loc), "2:6");
  EXPECT_EQ(locString(t[5].loc), "4:3");
  EXPECT_EQ(t[6].kind, TokenKind::Eof);
  EXPECT_EQ(locString(t[6].loc), "4:4");
  EXPECT_EQ(t[0].loc.fileId, src.fileId);
}

TEST(LexerTest, CrLfLineEndings) {
  Source src("a\r\nb\r\n");
  std::vector<Token> t = src.lex();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(locString(t[1].loc), "2:1");
  EXPECT_FALSE(src.diags.hasErrors());
}

TEST(LexerTest, Comments) {
  Source src("a # hash comment ( \"\n// slash comment\nb / c // end");
  std::vector<Token> t = src.lex();
  using K = TokenKind;
  EXPECT_EQ(kinds(t),
            (std::vector<K>{K::Ident, K::Ident, K::Slash, K::Ident, K::Eof}));
  EXPECT_EQ(locString(t[1].loc), "3:1");
}

TEST(LexerTest, Integers) {
  Source src("0 768 50_257 1_000_000 9223372036854775807");
  std::vector<Token> t = src.lex();
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[0].intValue, 0);
  EXPECT_EQ(t[1].intValue, 768);
  EXPECT_EQ(t[2].intValue, 50257);
  EXPECT_EQ(t[2].text, "50_257");
  EXPECT_EQ(t[3].intValue, 1000000);
  EXPECT_EQ(t[4].intValue, INT64_MAX);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(t[i].kind, TokenKind::Int);
  EXPECT_FALSE(src.diags.hasErrors());
}

TEST(LexerTest, IntegerOverflowIsAnError) {
  Source src("x 9223372036854775808 99999999999999999999999 y");
  std::vector<Token> t = src.lex();
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[1].kind, TokenKind::Int);
  EXPECT_TRUE(t[1].malformed);
  EXPECT_EQ(t[3].kind, TokenKind::Ident);
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{
                "1:3: integer literal is too large (the limit is "
                "9223372036854775807)",
                "1:23: integer literal is too large (the limit is "
                "9223372036854775807)"}));
}

TEST(LexerTest, Floats) {
  Source src("1.0 1e-5 .5 1.5e-12 2E+3 3e2 1_0.2_5 1e-400");
  std::vector<Token> t = src.lex();
  ASSERT_EQ(t.size(), 9u);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(t[i].kind, TokenKind::Float) << i;
  EXPECT_DOUBLE_EQ(t[0].floatValue, 1.0);
  EXPECT_DOUBLE_EQ(t[1].floatValue, 1e-5);
  EXPECT_DOUBLE_EQ(t[2].floatValue, 0.5);
  EXPECT_DOUBLE_EQ(t[3].floatValue, 1.5e-12);
  EXPECT_DOUBLE_EQ(t[4].floatValue, 2000.0);
  EXPECT_DOUBLE_EQ(t[5].floatValue, 300.0);
  EXPECT_DOUBLE_EQ(t[6].floatValue, 10.25);
  EXPECT_EQ(t[7].floatValue, 0.0); // underflow rounds to zero
  EXPECT_FALSE(src.diags.hasErrors());
}

TEST(LexerTest, FloatOverflowIsAnError) {
  Source src("1e999");
  src.lex();
  EXPECT_EQ(src.errors(), (std::vector<std::string>{
                              "1:1: floating-point literal is too large"}));
}

TEST(LexerTest, RangeIsNotAFloat) {
  Source src("0..layers 1 .. 2 a..b");
  using K = TokenKind;
  std::vector<Token> t = src.lex();
  EXPECT_EQ(kinds(t),
            (std::vector<K>{K::Int, K::DotDot, K::Ident, K::Int, K::DotDot,
                            K::Int, K::Ident, K::DotDot, K::Ident, K::Eof}));
  EXPECT_EQ(t[0].intValue, 0);
  EXPECT_EQ(locString(t[1].loc), "1:2");
  EXPECT_FALSE(src.diags.hasErrors());
}

TEST(LexerTest, NumberSuffixIsAnError) {
  Source src("12abc 3e x");
  std::vector<Token> t = src.lex();
  using K = TokenKind;
  EXPECT_EQ(kinds(t), (std::vector<K>{K::Int, K::Int, K::Ident, K::Eof}));
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{"1:3: invalid suffix 'abc' on number",
                                      "1:8: invalid suffix 'e' on number"}));
}

TEST(LexerTest, StringKeepsRawBody) {
  Source src(R"(x = "h.{i}.attn\n\"q\"\{\}\\" y)");
  std::vector<Token> t = src.lex();
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[2].kind, TokenKind::String);
  EXPECT_EQ(t[2].text, R"(h.{i}.attn\n\"q\"\{\}\\)");
  EXPECT_EQ(locString(t[2].loc), "1:5");
  EXPECT_EQ(t[3].kind, TokenKind::Ident);
  EXPECT_FALSE(src.diags.hasErrors());
}

TEST(LexerTest, StringWithUtf8) {
  Source src("\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\" # \xC3\xA9");
  std::vector<Token> t = src.lex();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].kind, TokenKind::String);
  EXPECT_FALSE(src.diags.hasErrors());
}

TEST(LexerTest, UnterminatedString) {
  Source src("a = \"abc\nb = 1");
  std::vector<Token> t = src.lex();
  using K = TokenKind;
  // The string ends at the line so the next line lexes normally.
  EXPECT_EQ(kinds(t), (std::vector<K>{K::Ident, K::Assign, K::String, K::Ident,
                                      K::Assign, K::Int, K::Eof}));
  EXPECT_TRUE(t[2].malformed);
  EXPECT_EQ(t[2].text, "abc");
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{"1:5: unterminated string"}));
}

TEST(LexerTest, UnterminatedStringAtEof) {
  Source src("\"abc\\");
  src.lex();
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{"1:1: unterminated string"}));
}

TEST(LexerTest, BadEscape) {
  Source src(R"("a\qb\x" z)");
  std::vector<Token> t = src.lex();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].kind, TokenKind::String);
  EXPECT_EQ(
      src.errors(),
      (std::vector<std::string>{
          R"(1:3: invalid escape sequence '\q' (valid: \" \\ \n \t \{ \}))",
          R"(1:6: invalid escape sequence '\x' (valid: \" \\ \n \t \{ \}))"}));
}

TEST(LexerTest, UnknownCharactersAreSkipped) {
  Source src("a $ b ? c ! d & e | f ` g . h");
  std::vector<Token> t = src.lex();
  EXPECT_EQ(t.size(), 9u); // a..h and Eof
  EXPECT_EQ(
      src.errors(),
      (std::vector<std::string>{
          "1:3: unexpected character '$'", "1:7: unexpected character '?'",
          "1:11: unexpected character '!'; use 'not'",
          "1:15: unexpected character '&'; use 'and'",
          "1:19: unexpected character '|'; use 'or'",
          "1:23: unexpected character '`'", "1:27: unexpected character '.'"}));
}

TEST(LexerTest, NonAsciiOutsideStrings) {
  Source src("a \xC3\xA9 b \x01 c");
  std::vector<Token> t = src.lex();
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{
                "1:3: unexpected character '\xC3\xA9' (U+00E9)",
                "1:8: unexpected character control character 0x01"}));
}

TEST(LexerTest, NulBytes) {
  std::string text = "a";
  text += '\0';
  text += "b \"x";
  text += '\0';
  text += "y\" # c";
  text += '\0';
  Source src(text);
  std::vector<Token> t = src.lex();
  using K = TokenKind;
  EXPECT_EQ(kinds(t), (std::vector<K>{K::Ident, K::Ident, K::String, K::Eof}));
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{"1:2: unexpected null character",
                                      "1:7: unexpected null character",
                                      "1:14: unexpected null character"}));
}

TEST(LexerTest, InvalidUtf8) {
  // A run of bad bytes is one error; lexing goes on after it.
  Source src("a \xFF\xFE\xFD b \"\xC3\x28\" # \xE9\nc \xED\xA0\x80 "
             "\xC0\xAF \xF4\x90\x80\x80");
  std::vector<Token> t = src.lex();
  using K = TokenKind;
  EXPECT_EQ(kinds(t),
            (std::vector<K>{K::Ident, K::Ident, K::String, K::Ident, K::Eof}));
  EXPECT_EQ(
      src.errors(),
      (std::vector<std::string>{
          "1:3: invalid UTF-8 byte 0xFF", "1:10: invalid UTF-8 byte 0xC3",
          "1:16: invalid UTF-8 byte 0xE9", "2:3: invalid UTF-8 byte 0xED",
          "2:7: invalid UTF-8 byte 0xC0", "2:10: invalid UTF-8 byte 0xF4"}));
}

TEST(LexerTest, Utf8SequenceLength) {
  EXPECT_EQ(utf8SequenceLength("a", 0), 1u);
  EXPECT_EQ(utf8SequenceLength("\xC3\xA9", 0), 2u);
  EXPECT_EQ(utf8SequenceLength("\xE2\x82\xAC", 0), 3u);
  EXPECT_EQ(utf8SequenceLength("\xF0\x9F\x98\x80", 0), 4u);
  EXPECT_EQ(utf8SequenceLength("\xC3", 0), 0u);             // truncated
  EXPECT_EQ(utf8SequenceLength("\xC1\xBF", 0), 0u);         // overlong
  EXPECT_EQ(utf8SequenceLength("\xE0\x80\x80", 0), 0u);     // overlong
  EXPECT_EQ(utf8SequenceLength("\xED\xA0\x80", 0), 0u);     // surrogate
  EXPECT_EQ(utf8SequenceLength("\xF4\x90\x80\x80", 0), 0u); // > U+10FFFF
  EXPECT_EQ(utf8SequenceLength("\x80", 0), 0u);
}

TEST(LexerTest, ByteOrderMarkIsSkipped) {
  Source src("\xEF\xBB\xBFmodel m");
  std::vector<Token> t = src.lex();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].text, "model");
  EXPECT_EQ(locString(t[0].loc), "1:1");
  EXPECT_FALSE(src.diags.hasErrors());
}

TEST(LexerTest, TemplateHoleMode) {
  // A hole starts mid-line and has no comments.
  Source src("unused");
  Lexer lexer("i # 2", SourceLoc{src.fileId, 3, 10}, src.diags,
              /*inTemplateHole=*/true);
  std::vector<Token> t = lexer.lexAll();
  using K = TokenKind;
  EXPECT_EQ(kinds(t), (std::vector<K>{K::Ident, K::Int, K::Eof}));
  EXPECT_EQ(locString(t[0].loc), "3:10");
  EXPECT_EQ(locString(t[1].loc), "3:14");
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{"3:12: unexpected character '#'"}));
}

TEST(LexerTest, StopsAtErrorLimit) {
  Source src(std::string(100, '$') + " a");
  std::vector<Token> t = src.lex();
  EXPECT_EQ(t.back().kind, TokenKind::Eof);
  EXPECT_TRUE(src.diags.tooManyErrors());
  EXPECT_EQ(src.diags.getDiagnostics().size(), 20u);
}

TEST(LexerTest, DescribeToken) {
  Source src("foo 12 1.5 \"s\" ) for");
  std::vector<Token> t = src.lex();
  EXPECT_EQ(describeToken(t[0]), "identifier 'foo'");
  EXPECT_EQ(describeToken(t[1]), "integer '12'");
  EXPECT_EQ(describeToken(t[2]), "number '1.5'");
  EXPECT_EQ(describeToken(t[3]), "string");
  EXPECT_EQ(describeToken(t[4]), "')'");
  EXPECT_EQ(describeToken(t[5]), "'for'");
  EXPECT_EQ(describeToken(t[6]), "end of file");
}

} // namespace
