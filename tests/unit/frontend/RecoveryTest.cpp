//===- RecoveryTest.cpp - Every independent error in one run --------------===//

#include "FrontendTestUtil.h"

#include "gtest/gtest.h"

#include <random>

using namespace tfc;
using namespace tfc::ast;
using namespace tfc::test;

namespace {

TEST(RecoveryTest, ThreeIndependentErrors) {
  Source src("model m\n"
             "config {\n"
             "  d = 4\n"
             "  heads = * 2\n" // 1: missing operand
             "  layers = 3\n"
             "}\n"
             "block b(x) {\n"
             "  y = f(x\n" // 2: missing ')'
             "  return y\n"
             "}\n"
             "entry e(x: f32[n]) {\n"
             "  return x,\n" // 3: trailing comma
             "}\n");
  std::unique_ptr<Module> m = src.parse();
  EXPECT_EQ(src.messages(),
            (std::vector<std::string>{
                "4:11: expected an expression, found '*'",
                "9:3: expected ',' or ')' in the argument list, found "
                "'return'",
                "8:8: note: to match this '('",
                "13:1: expected a return value after ',', found '}'"}));
  // What parsed is kept.
  ASSERT_EQ(m->config.size(), 2u);
  EXPECT_EQ(m->config[1].name, "layers");
  ASSERT_EQ(m->blocks.size(), 1u);
  ASSERT_EQ(m->blocks[0].body.size(), 1u); // return y
  ASSERT_EQ(m->entries.size(), 1u);
}

TEST(RecoveryTest, StatementErrorsInOneBody) {
  Source src("entry f() {\n"
             "  a = (1 + \n"
             "  b = 2\n"
             "  c = ]\n"
             "  d = 3\n"
             "  e 4\n"
             "  f = [1, 2\n"
             "  g = 5\n"
             "}\n");
  std::unique_ptr<Module> m = src.parse();
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{
                "3:5: expected ')', found '='",
                "4:7: expected an expression, found ']'",
                "6:5: expected '=' after 'e', found integer '4'",
                "8:3: expected ',' or ']' in the list, found identifier 'g'"}));
  ASSERT_EQ(m->entries.size(), 1u);
  // b, d and g parsed.
  EXPECT_EQ(m->entries[0].body.size(), 2u);
}

TEST(RecoveryTest, MissingClosingBraceBeforeNextItem) {
  Source src("entry f() {\n"
             "  x = 1\n"
             "entry g() {\n"
             "  y = \n"
             "}\n");
  std::unique_ptr<Module> m = src.parse();
  EXPECT_EQ(src.messages(),
            (std::vector<std::string>{
                "3:1: expected '}' at the end of entry 'f', found 'entry'",
                "1:11: note: to match this '{'",
                "5:1: expected an expression, found '}'"}));
  EXPECT_EQ(m->entries.size(), 2u);
}

TEST(RecoveryTest, MissingBraceInNestedBodyReportedOnce) {
  Source src("entry f() {\n  for i in 0..2 {\n    if a {\n      x = 1\n");
  src.parse();
  std::vector<std::string> errors = src.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "5:1: expected '}' at the end of the 'if', found end "
                       "of file");
}

TEST(RecoveryTest, TopLevelGarbage) {
  Source src("x = 3\n"
             "model m\n"
             "}\n"
             "config { d = 1 }\n"
             "for i in 0..3 {}\n");
  std::unique_ptr<Module> m = src.parse();
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{
                "1:1: expected a declaration ('model', 'import', 'config', "
                "'dim', 'block' or 'entry'), found identifier 'x'",
                "3:1: expected a declaration ('model', 'import', 'config', "
                "'dim', 'block' or 'entry'), found '}'",
                "5:1: 'for' is only allowed inside a block or entry"}));
  EXPECT_TRUE(m->modelName);
  EXPECT_EQ(m->config.size(), 1u);
}

TEST(RecoveryTest, HeaderErrorStillParsesBody) {
  Source src("entry f(x: float[n], y) {\n"
             "  z = x +\n"
             "}\n"
             "block g(a: f32) { return a b }\n");
  std::unique_ptr<Module> m = src.parse();
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{
                "1:12: unknown element type 'float'; expected f32, f16, "
                "bf16, i32, i64 or bool (did you mean 'f32'?)",
                "3:1: expected an expression, found '}'",
                "4:12: unknown parameter kind 'f32'; expected tensor, int, "
                "float, bool, str, enum, list, dim or any (a block's tensor "
                "parameters "
                "take any element type and shape)",
                "4:30: expected '=' after 'b', found '}'"}));
  EXPECT_EQ(m->entries.size(), 1u);
  EXPECT_EQ(m->blocks.size(), 1u);
}

TEST(RecoveryTest, MisplacedElse) {
  Source src("entry f() {\n"
             "  if a { x = 1 }\n"
             "  y = 2\n"
             "  else { x = 2 }\n"
             "  z = 3\n"
             "}\n");
  std::unique_ptr<Module> m = src.parse();
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{"4:3: 'else' without a matching 'if'"}));
  EXPECT_EQ(m->entries[0].body.size(), 3u);
}

TEST(RecoveryTest, ErrorLimit) {
  std::string text = "entry f() {\n";
  for (int i = 0; i < 50; ++i)
    text += "  x = )\n";
  text += "}\n";
  Source src(text);
  src.parse();
  // 20 are kept; the engine knows it stopped early.
  EXPECT_EQ(src.diags.getDiagnostics().size(), 20u);
  EXPECT_GT(src.diags.getNumErrors(), 20u);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  src.diags.print(os);
  EXPECT_NE(os.str().find("too many errors; stopped after 20."),
            std::string::npos);
}

TEST(RecoveryTest, DuplicateModel) {
  Source src("model a\nmodel b\n");
  std::unique_ptr<Module> m = src.parse();
  EXPECT_EQ(src.messages(),
            (std::vector<std::string>{"2:1: duplicate 'model' declaration",
                                      "1:1: note: previous declaration is "
                                      "here"}));
  EXPECT_EQ(*m->modelName, "a");
}

TEST(RecoveryTest, RandomInputsTerminate) {
  // Not a fuzzer (see tests/fuzz), just a cheap guard that odd inputs end.
  const char *pieces[] = {"entry", "block", "config", "model", "dim",    "{",
                          "}",     "(",     ")",      "[",     "]",      ",",
                          "=",     "x",     "1",      "\"a{",  "}\"",    "for",
                          "in",    "..",    "if",     "else",  "return", "\n",
                          ":",     "f32",   "param",  "-",     "not"};
  std::mt19937 rng(42);
  for (int round = 0; round < 300; ++round) {
    std::string text;
    int n = rng() % 200;
    for (int i = 0; i < n; ++i) {
      text += pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];
      text += ' ';
    }
    Source src(text);
    std::unique_ptr<Module> m = src.parse();
    ASSERT_TRUE(m);
    astString(*m);
  }
}

} // namespace
