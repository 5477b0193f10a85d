//===- ASTPrinterTest.cpp - The `--emit=ast` dump -------------------------===//

#include "FrontendTestUtil.h"

#include "gtest/gtest.h"

using namespace tfc;
using namespace tfc::test;

namespace {

TEST(ASTPrinterTest, Module) {
  Source src("model gpt2_small\n"
             "config {\n"
             "  d = 768\n"
             "}\n"
             "block ln(x, eps: float = 1e-5) { return x }\n"
             "entry forward(ids: i32[batch, seq]) {\n"
             "  for i in 0..layers {\n"
             "    param w: [d, 3 * d] = \"h.{i}.attn.c_attn.weight\"\n"
             "    if i == 0 { x = w[:, 0:d] } else { x = -w }\n"
             "  }\n"
             "  assert d > 0, \"d\"\n"
             "  return logits: x, y\n"
             "}\n",
             "/some/dir/gpt2.tfm");
  std::unique_ptr<ast::Module> m = src.parse();
  ASSERT_FALSE(src.diags.hasErrors());
  EXPECT_EQ(astString(*m),
            "Module 'gpt2_small' (gpt2.tfm)\n"
            "  Config d = Int 768 @3:3\n"
            "  Block ln @5:1\n"
            "    Arg x @5:10\n"
            "    Arg eps: float = Float 1e-05 @5:13\n"
            "    Return Ident x @5:34\n"
            "  Entry forward @6:1\n"
            "    Input ids: i32[Ident batch, Ident seq] @6:15\n"
            "    For i in Int 0 .. Ident layers @7:3\n"
            "      Param w: f32[Ident d, Binary * (Int 3, Ident d)] = String "
            "\"h.{Ident i}.attn.c_attn.weight\" @8:5\n"
            "      If Binary == (Ident i, Int 0) @9:5\n"
            "        Then\n"
            "          Assign x = Index (Ident w)[:, Int 0:Ident d] @9:17\n"
            "        Else\n"
            "          Assign x = Unary - (Ident w) @9:40\n"
            "    Assert Binary > (Ident d, Int 0), String \"d\" @11:3\n"
            "    Return logits: Ident x, Ident y @12:3\n");
}

TEST(ASTPrinterTest, UnnamedModuleImportsAndDims) {
  Source src("import \"p.tfm\"\ndim seq <= 64\ndim b\n");
  std::unique_ptr<ast::Module> m = src.parse();
  EXPECT_EQ(astString(*m), "Module <unnamed> (test.tfm)\n"
                           "  Import \"p.tfm\" @1:1\n"
                           "  Dim seq <= Int 64 @2:1\n"
                           "  Dim b @3:1\n");
}

TEST(ASTPrinterTest, StringsAreEscaped) {
  Source src(R"("a\"b\\c\nd\te\{\}{x}")");
  ast::ExprPtr e = src.parseExpr();
  ASSERT_TRUE(e);
  EXPECT_EQ(exprString(*e), R"(String "a\"b\\c\nd\te\{\}{Ident x}")");
}

TEST(ASTPrinterTest, Floats) {
  Source a("0.1");
  EXPECT_EQ(exprString(*a.parseExpr()), "Float 0.1");
  Source b("1e300");
  EXPECT_EQ(exprString(*b.parseExpr()), "Float 1e+300");
  Source c("2.0");
  EXPECT_EQ(exprString(*c.parseExpr()), "Float 2.0");
  Source d("0.30000000000000004");
  EXPECT_EQ(exprString(*d.parseExpr()), "Float 0.30000000000000004");
}

} // namespace
