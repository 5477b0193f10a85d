//===- ParserTest.cpp - Each construct of docs/language.md ----------------===//

#include "FrontendTestUtil.h"

#include "gtest/gtest.h"

using namespace tfc;
using namespace tfc::ast;
using namespace tfc::test;
using llvm::cast;
using llvm::dyn_cast;

namespace {

/// Parses `text` as one expression and prints it; "<error>" plus the errors
/// when it does not parse.
std::string expr(const std::string &text) {
  Source src(text);
  ExprPtr e = src.parseExpr();
  if (!e || src.diags.hasErrors()) {
    std::string out = "<error>";
    for (const std::string &m : src.errors())
      out += " " + m;
    return out;
  }
  return exprString(*e);
}

/// Parses an entry body and returns the module; fails the test on errors.
std::unique_ptr<Module> parseOk(Source &src) {
  std::unique_ptr<Module> m = src.parse();
  EXPECT_FALSE(src.diags.hasErrors());
  for (const std::string &e : src.messages())
    ADD_FAILURE() << e;
  return m;
}

TEST(ParserTest, EmptyFile) {
  Source src("");
  std::unique_ptr<Module> m = parseOk(src);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->modelName);
  EXPECT_EQ(m->fileName, "test.tfm");
}

TEST(ParserTest, OnlyComments) {
  Source src("# nothing here\n// nor here\n");
  parseOk(src);
}

TEST(ParserTest, ModelAndImport) {
  Source src("model gpt2_small\nimport \"prelude.tfm\"\nimport \"a\\\\b\"");
  std::unique_ptr<Module> m = parseOk(src);
  ASSERT_TRUE(m->modelName);
  EXPECT_EQ(*m->modelName, "gpt2_small");
  EXPECT_EQ(locString(m->modelLoc), "1:1");
  ASSERT_EQ(m->imports.size(), 2u);
  EXPECT_EQ(m->imports[0].path, "prelude.tfm");
  EXPECT_EQ(locString(m->imports[0].loc), "2:1");
  EXPECT_EQ(m->imports[1].path, "a\\b");
}

TEST(ParserTest, Config) {
  Source src("config {\n  d = 768\n  d_ff = 4 * d; eps = 1e-5 act = gelu\n"
             "  causal = true\n}");
  std::unique_ptr<Module> m = parseOk(src);
  ASSERT_EQ(m->config.size(), 5u);
  EXPECT_EQ(m->config[0].name, "d");
  EXPECT_EQ(locString(m->config[0].loc), "2:3");
  EXPECT_EQ(exprString(*m->config[1].value), "Binary * (Int 4, Ident d)");
  EXPECT_EQ(exprString(*m->config[2].value), "Float 1e-05");
  EXPECT_EQ(exprString(*m->config[3].value), "Ident gelu");
  EXPECT_EQ(exprString(*m->config[4].value), "Bool true");
  EXPECT_EQ(locString(m->config[2].loc), "3:17");
}

TEST(ParserTest, EmptyConfig) {
  Source src("config {}\nconfig {\n}");
  std::unique_ptr<Module> m = parseOk(src);
  EXPECT_TRUE(m->config.empty());
}

TEST(ParserTest, Dims) {
  Source src("dim seq <= max_pos\ndim batch\ndim past <= 2 * n");
  std::unique_ptr<Module> m = parseOk(src);
  ASSERT_EQ(m->dims.size(), 3u);
  EXPECT_EQ(m->dims[0].name, "seq");
  EXPECT_EQ(exprString(*m->dims[0].bound), "Ident max_pos");
  EXPECT_EQ(m->dims[1].name, "batch");
  EXPECT_FALSE(m->dims[1].bound);
  EXPECT_EQ(locString(m->dims[2].loc), "3:1");
}

TEST(ParserTest, BlockParams) {
  Source src("block ffn(x, w1: tensor, heads: int, eps: float = 1e-5, "
             "causal: bool = false, prefix: str = \"h\", act: enum = relu, "
             "xs: list = [1, 2],) {\n  return x\n}");
  std::unique_ptr<Module> m = parseOk(src);
  ASSERT_EQ(m->blocks.size(), 1u);
  const BlockDecl &b = m->blocks[0];
  EXPECT_EQ(b.name, "ffn");
  EXPECT_EQ(locString(b.loc), "1:1");
  ASSERT_EQ(b.params.size(), 8u);
  EXPECT_EQ(b.params[0].name, "x");
  EXPECT_EQ(b.params[0].kind, "");
  EXPECT_FALSE(b.params[0].defaultValue);
  EXPECT_FALSE(b.params[0].tensorType);
  EXPECT_EQ(locString(b.params[0].loc), "1:11");
  EXPECT_EQ(b.params[1].kind, "tensor");
  EXPECT_EQ(b.params[2].kind, "int");
  EXPECT_EQ(b.params[3].kind, "float");
  EXPECT_EQ(exprString(*b.params[3].defaultValue), "Float 1e-05");
  EXPECT_EQ(b.params[4].kind, "bool");
  EXPECT_EQ(b.params[5].kind, "str");
  EXPECT_EQ(b.params[6].kind, "enum");
  EXPECT_EQ(exprString(*b.params[6].defaultValue), "Ident relu");
  EXPECT_EQ(b.params[7].kind, "list");
  ASSERT_EQ(b.body.size(), 1u);
  EXPECT_TRUE(llvm::isa<ReturnStmt>(b.body[0].get()));
}

TEST(ParserTest, DimAndAnyParams) {
  Source src("block pos(table, seq: dim, past: dim = 0, x: any) {}");
  std::unique_ptr<Module> m = parseOk(src);
  ASSERT_EQ(m->blocks[0].params.size(), 4u);
  EXPECT_EQ(m->blocks[0].params[1].kind, "dim");
  EXPECT_EQ(m->blocks[0].params[2].kind, "dim");
  EXPECT_EQ(exprString(*m->blocks[0].params[2].defaultValue), "Int 0");
  EXPECT_EQ(m->blocks[0].params[3].kind, "any");
}

TEST(ParserTest, BlockWithoutParams) {
  Source src("block nothing() {}");
  std::unique_ptr<Module> m = parseOk(src);
  ASSERT_EQ(m->blocks.size(), 1u);
  EXPECT_TRUE(m->blocks[0].params.empty());
  EXPECT_TRUE(m->blocks[0].body.empty());
}

TEST(ParserTest, EntryInputs) {
  Source src("entry decode(ids: i32[batch, seq], past_k: f32[layers, batch, "
             "heads, past, dh],\n  x: [batch, 4 * d], s: bf16[], m: bool[b],"
             " h: f16[1], l: i64[2],) {}");
  std::unique_ptr<Module> m = parseOk(src);
  ASSERT_EQ(m->entries.size(), 1u);
  const EntryDecl &e = m->entries[0];
  EXPECT_EQ(e.name, "decode");
  ASSERT_EQ(e.inputs.size(), 7u);
  EXPECT_EQ(e.inputs[0].kind, "typed");
  ASSERT_TRUE(e.inputs[0].tensorType);
  EXPECT_EQ(e.inputs[0].tensorType->dtype, "i32");
  ASSERT_EQ(e.inputs[0].tensorType->dims.size(), 2u);
  EXPECT_EQ(exprString(*e.inputs[0].tensorType->dims[1]), "Ident seq");
  EXPECT_EQ(locString(e.inputs[0].tensorType->loc), "1:19");
  EXPECT_EQ(e.inputs[1].tensorType->dims.size(), 5u);
  // No element type means f32.
  EXPECT_EQ(e.inputs[2].tensorType->dtype, "f32");
  EXPECT_EQ(exprString(*e.inputs[2].tensorType->dims[1]),
            "Binary * (Int 4, Ident d)");
  EXPECT_EQ(locString(e.inputs[2].loc), "2:3");
  EXPECT_EQ(e.inputs[3].tensorType->dtype, "bf16");
  EXPECT_TRUE(e.inputs[3].tensorType->dims.empty());
  EXPECT_EQ(e.inputs[4].tensorType->dtype, "bool");
  EXPECT_EQ(e.inputs[5].tensorType->dtype, "f16");
  EXPECT_EQ(e.inputs[6].tensorType->dtype, "i64");
}

/// The statements of `entry f() { <body> }`.
struct Body_ {
  explicit Body_(const std::string &body)
      : src("entry f() {\n" + body + "\n}") {
    module = parseOk(src);
    if (module && module->entries.size() == 1)
      stmts = &module->entries[0].body;
  }
  size_t size() const { return stmts ? stmts->size() : 0; }
  const Stmt *operator[](size_t i) const { return (*stmts)[i].get(); }
  Source src;
  std::unique_ptr<Module> module;
  const Body *stmts = nullptr;
};

TEST(ParserTest, Assign) {
  Body_ b("x = a + 1");
  ASSERT_EQ(b.size(), 1u);
  const auto *s = dyn_cast<AssignStmt>(b[0]);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->targets.size(), 1u);
  EXPECT_EQ(s->targets[0].name, "x");
  EXPECT_EQ(locString(s->getLoc()), "2:1");
  EXPECT_EQ(exprString(*s->value), "Binary + (Ident a, Int 1)");
}

TEST(ParserTest, Destructuring) {
  Body_ b("q, k, v = split(x, 3, -1)\na,b=c;");
  ASSERT_EQ(b.size(), 2u);
  const auto *s = cast<AssignStmt>(b[0]);
  ASSERT_EQ(s->targets.size(), 3u);
  EXPECT_EQ(s->targets[1].name, "k");
  EXPECT_EQ(locString(s->targets[1].loc), "2:4");
  EXPECT_EQ(locString(s->targets[2].loc), "2:7");
  EXPECT_EQ(cast<AssignStmt>(b[1])->targets.size(), 2u);
}

TEST(ParserTest, ParamStatement) {
  Body_ b("param w: [d, 3 * d] = \"h.{i}.attn.c_attn.weight\"\n"
          "param emb: bf16[vocab, d] = \"wte\";");
  ASSERT_EQ(b.size(), 2u);
  const auto *p = cast<ParamStmt>(b[0]);
  EXPECT_EQ(p->name, "w");
  EXPECT_EQ(p->type.dtype, "f32");
  ASSERT_EQ(p->type.dims.size(), 2u);
  EXPECT_EQ(exprString(*p->type.dims[1]), "Binary * (Int 3, Ident d)");
  EXPECT_EQ(exprString(*p->checkpointName),
            "String \"h.{Ident i}.attn.c_attn.weight\"");
  EXPECT_EQ(locString(p->getLoc()), "2:1");
  EXPECT_EQ(cast<ParamStmt>(b[1])->type.dtype, "bf16");
}

TEST(ParserTest, For) {
  Body_ b("for i in 0..layers {\n  x = f(x, i)\n}\nfor j in a + 1 .. 2 * b {}");
  ASSERT_EQ(b.size(), 2u);
  const auto *f = cast<ForStmt>(b[0]);
  EXPECT_EQ(f->var, "i");
  EXPECT_EQ(exprString(*f->lo), "Int 0");
  EXPECT_EQ(exprString(*f->hi), "Ident layers");
  ASSERT_EQ(f->body.size(), 1u);
  EXPECT_EQ(locString(f->body[0]->getLoc()), "3:3");
  const auto *g = cast<ForStmt>(b[1]);
  EXPECT_EQ(exprString(*g->lo), "Binary + (Ident a, Int 1)");
  EXPECT_EQ(exprString(*g->hi), "Binary * (Int 2, Ident b)");
  EXPECT_TRUE(g->body.empty());
}

TEST(ParserTest, IfElse) {
  Body_ b("if causal { x = 1 }\nif a { x = 1 } else { x = 2 }");
  ASSERT_EQ(b.size(), 2u);
  const auto *i = cast<IfStmt>(b[0]);
  EXPECT_EQ(exprString(*i->cond), "Ident causal");
  EXPECT_EQ(i->thenBody.size(), 1u);
  EXPECT_TRUE(i->elseBody.empty());
  const auto *j = cast<IfStmt>(b[1]);
  EXPECT_EQ(j->thenBody.size(), 1u);
  EXPECT_EQ(j->elseBody.size(), 1u);
  EXPECT_TRUE(llvm::isa<AssignStmt>(j->elseBody[0].get()));
}

TEST(ParserTest, ElseIf) {
  Body_ b("if a == 1 {\n x = 1\n} else if a == 2 {\n x = 2\n}\n"
          "else if a == 3 { x = 3 } else { x = 4 }");
  ASSERT_EQ(b.size(), 1u);
  const auto *i = cast<IfStmt>(b[0]);
  ASSERT_EQ(i->elseBody.size(), 1u);
  const auto *j = dyn_cast<IfStmt>(i->elseBody[0].get());
  ASSERT_TRUE(j);
  EXPECT_EQ(locString(j->getLoc()), "4:8");
  EXPECT_EQ(exprString(*j->cond), "Binary == (Ident a, Int 2)");
  ASSERT_EQ(j->elseBody.size(), 1u);
  const auto *k = dyn_cast<IfStmt>(j->elseBody[0].get());
  ASSERT_TRUE(k);
  ASSERT_EQ(k->elseBody.size(), 1u);
  EXPECT_TRUE(llvm::isa<AssignStmt>(k->elseBody[0].get()));
}

TEST(ParserTest, Return) {
  Body_ b("return a, logits: x @ w, [1, 2]");
  ASSERT_EQ(b.size(), 1u);
  const auto *r = cast<ReturnStmt>(b[0]);
  ASSERT_EQ(r->values.size(), 3u);
  EXPECT_EQ(r->values[0].name, "");
  EXPECT_EQ(exprString(*r->values[0].value), "Ident a");
  EXPECT_EQ(r->values[1].name, "logits");
  EXPECT_EQ(locString(r->values[1].loc), "2:11");
  EXPECT_EQ(exprString(*r->values[1].value), "Binary @ (Ident x, Ident w)");
  EXPECT_EQ(exprString(*r->values[2].value), "List [Int 1, Int 2]");
}

TEST(ParserTest, ReturnNothing) {
  Body_ b("if a { return }\nreturn;");
  ASSERT_EQ(b.size(), 2u);
  const auto *i = cast<IfStmt>(b[0]);
  EXPECT_TRUE(cast<ReturnStmt>(i->thenBody[0].get())->values.empty());
  EXPECT_TRUE(cast<ReturnStmt>(b[1])->values.empty());
}

TEST(ParserTest, ReturnThenStatementOnNextLine) {
  // `return` alone on its line does not swallow the next statement.
  Body_ b("return\nx = 1");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_TRUE(cast<ReturnStmt>(b[0])->values.empty());
}

TEST(ParserTest, Assert) {
  Body_ b("assert d % heads == 0, \"heads must divide d\"\nassert ok");
  ASSERT_EQ(b.size(), 2u);
  const auto *a = cast<AssertStmt>(b[0]);
  EXPECT_EQ(exprString(*a->cond),
            "Binary == (Binary % (Ident d, Ident heads), Int 0)");
  EXPECT_EQ(exprString(*a->message), "String \"heads must divide d\"");
  EXPECT_FALSE(cast<AssertStmt>(b[1])->message);
}

TEST(ParserTest, Semicolons) {
  Body_ b("x = 1; y = 2; for i in 0..2 { z = 3; }; return x;");
  EXPECT_EQ(b.size(), 4u);
}

TEST(ParserTest, StatementsWithoutSeparators) {
  Body_ b("x = 1 y = 2 return x");
  EXPECT_EQ(b.size(), 3u);
}

TEST(ParserTest, ContextualKeywordsAsNames) {
  Body_ b("n = dim(x, 1)\nmodel = 3\ndim = model + n\nf32 = cast(x, f32)");
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(exprString(*cast<AssignStmt>(b[0])->value),
            "Call dim(Ident x, Int 1)");
  EXPECT_EQ(exprString(*cast<AssignStmt>(b[3])->value),
            "Call cast(Ident x, Ident f32)");
}

TEST(ParserTest, Literals) {
  EXPECT_EQ(expr("768"), "Int 768");
  EXPECT_EQ(expr("50_257"), "Int 50257");
  EXPECT_EQ(expr("1.0"), "Float 1.0");
  EXPECT_EQ(expr(".5"), "Float 0.5");
  EXPECT_EQ(expr("1.5e-12"), "Float 1.5e-12");
  EXPECT_EQ(expr("true"), "Bool true");
  EXPECT_EQ(expr("false"), "Bool false");
  EXPECT_EQ(expr("\"abc\""), "String \"abc\"");
  EXPECT_EQ(expr("\"\""), "String \"\"");
  EXPECT_EQ(expr("name"), "Ident name");
  EXPECT_EQ(expr("[]"), "List []");
  EXPECT_EQ(expr("[a, [1, 2], ]"), "List [Ident a, List [Int 1, Int 2]]");
}

TEST(ParserTest, Precedence) {
  EXPECT_EQ(expr("a + b * c"),
            "Binary + (Ident a, Binary * (Ident b, Ident c))");
  EXPECT_EQ(expr("a * b + c"),
            "Binary + (Binary * (Ident a, Ident b), Ident c)");
  EXPECT_EQ(expr("a - b - c"),
            "Binary - (Binary - (Ident a, Ident b), Ident c)");
  EXPECT_EQ(expr("a / b % c @ d"),
            "Binary @ (Binary % (Binary / (Ident a, Ident b), Ident c), "
            "Ident d)");
  EXPECT_EQ(expr("x @ w + b"),
            "Binary + (Binary @ (Ident x, Ident w), Ident b)");
  EXPECT_EQ(expr("-a @ b"), "Binary @ (Unary - (Ident a), Ident b)");
  EXPECT_EQ(expr("- -a"), "Unary - (Unary - (Ident a))");
  EXPECT_EQ(expr("-x[0]"), "Unary - (Index (Ident x)[Int 0])");
  EXPECT_EQ(expr("(a + b) * c"),
            "Binary * (Binary + (Ident a, Ident b), Ident c)");
  EXPECT_EQ(expr("a + b == c * d"),
            "Binary == (Binary + (Ident a, Ident b), Binary * (Ident c, "
            "Ident d))");
  EXPECT_EQ(expr("not a == b"), "Unary not (Binary == (Ident a, Ident b))");
  EXPECT_EQ(expr("not not a"), "Unary not (Unary not (Ident a))");
  EXPECT_EQ(expr("a or b and c"),
            "Binary or (Ident a, Binary and (Ident b, Ident c))");
  EXPECT_EQ(expr("a and b or c"),
            "Binary or (Binary and (Ident a, Ident b), Ident c)");
  EXPECT_EQ(expr("not a and b"), "Binary and (Unary not (Ident a), Ident b)");
  EXPECT_EQ(expr("a < b"), "Binary < (Ident a, Ident b)");
  EXPECT_EQ(expr("a <= b"), "Binary <= (Ident a, Ident b)");
  EXPECT_EQ(expr("a > b"), "Binary > (Ident a, Ident b)");
  EXPECT_EQ(expr("a >= b"), "Binary >= (Ident a, Ident b)");
  EXPECT_EQ(expr("a != b"), "Binary != (Ident a, Ident b)");
}

TEST(ParserTest, ComparisonsDoNotChain) {
  EXPECT_EQ(expr("a < b < c"),
            "<error> 1:7: comparisons cannot be chained; combine them with "
            "'and'");
}

TEST(ParserTest, OperatorLocations) {
  Source src("a +\n  b * c");
  ExprPtr e = src.parseExpr();
  ASSERT_TRUE(e);
  const auto *add = cast<BinaryExpr>(e.get());
  EXPECT_EQ(locString(add->getLoc()), "1:3");
  EXPECT_EQ(locString(add->lhs->getLoc()), "1:1");
  EXPECT_EQ(locString(add->rhs->getLoc()), "2:5");
}

TEST(ParserTest, Calls) {
  EXPECT_EQ(expr("f()"), "Call f()");
  EXPECT_EQ(expr("softmax(x, axis=-1)"),
            "Call softmax(Ident x, axis=Unary - (Int 1))");
  EXPECT_EQ(expr("layer_norm(x + a, g, b, 1e-5,)"),
            "Call layer_norm(Binary + (Ident x, Ident a), Ident g, Ident b, "
            "Float 1e-05)");
  EXPECT_EQ(expr("sum(x, axis=1, keepdim=true)"),
            "Call sum(Ident x, axis=Int 1, keepdim=Bool true)");
  EXPECT_EQ(expr("(f)(x)"), "Call f(Ident x)");
  EXPECT_EQ(expr("f(x)[0]"), "Index (Call f(Ident x))[Int 0]");
}

TEST(ParserTest, CallAndArgumentLocations) {
  Source src("ffn(x,\n    act=gelu)");
  ExprPtr e = src.parseExpr();
  ASSERT_TRUE(e);
  const auto *call = cast<CallExpr>(e.get());
  EXPECT_EQ(locString(call->getLoc()), "1:1");
  ASSERT_EQ(call->args.size(), 2u);
  EXPECT_EQ(call->args[0].name, "");
  EXPECT_EQ(locString(call->args[0].loc), "1:5");
  EXPECT_EQ(call->args[1].name, "act");
  EXPECT_EQ(locString(call->args[1].loc), "2:5");
  EXPECT_EQ(locString(call->args[1].value->getLoc()), "2:9");
}

TEST(ParserTest, OnlyNamesCanBeCalled) {
  EXPECT_EQ(expr("f(x)(y)"), "<error> 1:5: only a name can be called");
  EXPECT_EQ(expr("x[0](y)"), "<error> 1:5: only a name can be called");
  EXPECT_EQ(expr("3(y)"), "<error> 1:2: only a name can be called");
}

TEST(ParserTest, PositionalAfterKeyword) {
  EXPECT_EQ(expr("f(a=1, b)"),
            "<error> 1:8: positional argument after a keyword argument");
}

TEST(ParserTest, Slices) {
  EXPECT_EQ(expr("w[:, 0:d]"), "Index (Ident w)[:, Int 0:Ident d]");
  EXPECT_EQ(expr("x[0]"), "Index (Ident x)[Int 0]");
  EXPECT_EQ(expr("x[a:]"), "Index (Ident x)[Ident a:]");
  EXPECT_EQ(expr("x[:b]"), "Index (Ident x)[:Ident b]");
  EXPECT_EQ(expr("x[-1, 1:-1, :]"),
            "Index (Ident x)[Unary - (Int 1), Int 1:Unary - (Int 1), :]");
  EXPECT_EQ(expr("x[0][1]"), "Index (Index (Ident x)[Int 0])[Int 1]");
  EXPECT_EQ(expr("[1, 2][i]"), "Index (List [Int 1, Int 2])[Ident i]");
  EXPECT_EQ(expr("x[]"), "<error> 1:3: expected an expression, found ']'");
  EXPECT_EQ(expr("x[1:2:3]"), "Index (Ident x)[Int 1:Int 2:Int 3]");
  EXPECT_EQ(expr("x[::2]"), "Index (Ident x)[::Int 2]");
  EXPECT_EQ(expr("x[1::]"), "Index (Ident x)[Int 1:]");
  EXPECT_EQ(expr("x[..., 0::2]"), "Index (Ident x)[..., Int 0::Int 2]");
  EXPECT_EQ(expr("x[1:2:3:4]"),
            "<error> 1:8: expected ',' or ']' in the subscript, found ':'");
  EXPECT_EQ(expr("x[..., ...]"),
            "<error> 1:8: only one '...' may appear in a subscript");
}

TEST(ParserTest, Power) {
  EXPECT_EQ(expr("-2 ** 2"), "Unary - (Binary ** (Int 2, Int 2))");
  EXPECT_EQ(expr("2 ** 3 ** 2"), "Binary ** (Int 2, Binary ** (Int 3, Int 2))");
  EXPECT_EQ(expr("2 ** -1"), "Binary ** (Int 2, Unary - (Int 1))");
  EXPECT_EQ(expr("a * b ** 2"),
            "Binary * (Ident a, Binary ** (Ident b, Int 2))");
  EXPECT_EQ(expr("x[0] ** f(y)"),
            "Binary ** (Index (Ident x)[Int 0], Call f(Ident y))");
  EXPECT_EQ(expr("2 **"),
            "<error> 1:5: expected an expression, found end of file");
}

TEST(ParserTest, SubscriptStructure) {
  Source src("w[:, d:2 * d]");
  ExprPtr e = src.parseExpr();
  ASSERT_TRUE(e);
  const auto *index = cast<IndexExpr>(e.get());
  EXPECT_EQ(locString(index->getLoc()), "1:1");
  ASSERT_EQ(index->subscripts.size(), 2u);
  const Subscript &all = index->subscripts[0];
  EXPECT_TRUE(all.isSlice);
  EXPECT_FALSE(all.start);
  EXPECT_FALSE(all.end);
  EXPECT_EQ(locString(all.loc), "1:3");
  const Subscript &part = index->subscripts[1];
  EXPECT_TRUE(part.isSlice);
  EXPECT_FALSE(part.index);
  EXPECT_EQ(exprString(*part.start), "Ident d");
  EXPECT_EQ(exprString(*part.end), "Binary * (Int 2, Ident d)");
  EXPECT_EQ(locString(part.loc), "1:6");
}

TEST(ParserTest, TemplateHoles) {
  Source src("\"h.{i}.attn.{ 2 * j + 1 }.w\\{x\\}\"");
  ExprPtr e = src.parseExpr();
  ASSERT_TRUE(e);
  EXPECT_FALSE(src.diags.hasErrors());
  const auto *s = cast<StringExpr>(e.get());
  ASSERT_EQ(s->pieces.size(), 5u);
  EXPECT_EQ(s->pieces[0].text, "h.");
  EXPECT_FALSE(s->pieces[0].hole);
  ASSERT_TRUE(s->pieces[1].hole);
  EXPECT_EQ(exprString(*s->pieces[1].hole), "Ident i");
  EXPECT_EQ(locString(s->pieces[1].hole->getLoc()), "1:5");
  EXPECT_EQ(s->pieces[2].text, ".attn.");
  ASSERT_TRUE(s->pieces[3].hole);
  EXPECT_EQ(exprString(*s->pieces[3].hole),
            "Binary + (Binary * (Int 2, Ident j), Int 1)");
  // The `+` is at column 21 of the file.
  EXPECT_EQ(locString(s->pieces[3].hole->getLoc()), "1:21");
  EXPECT_EQ(s->pieces[4].text, ".w{x}");
}

TEST(ParserTest, StringEscapes) {
  Source src(R"("a\"b\\c\nd\te\{\}")");
  ExprPtr e = src.parseExpr();
  ASSERT_TRUE(e);
  const auto *s = cast<StringExpr>(e.get());
  ASSERT_EQ(s->pieces.size(), 1u);
  EXPECT_EQ(s->pieces[0].text, "a\"b\\c\nd\te{}");
}

TEST(ParserTest, TemplateHoleOnLaterLine) {
  Source src("\n\n   x = \"a{i}\"");
  std::unique_ptr<Module> m = src.parse(); // an error: not in a body
  Source src2("entry f() {\n\n   x = \"a{foo(i, 2)}\" }");
  std::unique_ptr<Module> m2 = parseOk(src2);
  const auto *a = cast<AssignStmt>(m2->entries[0].body[0].get());
  const auto *s = cast<StringExpr>(a->value.get());
  ASSERT_EQ(s->pieces.size(), 2u);
  EXPECT_EQ(locString(s->getLoc()), "3:8");
  EXPECT_EQ(locString(s->pieces[1].hole->getLoc()), "3:11");
  const auto *call = cast<CallExpr>(s->pieces[1].hole.get());
  EXPECT_EQ(locString(call->args[1].value->getLoc()), "3:18");
}

TEST(ParserTest, TemplateHoleErrors) {
  Source src("entry f() {\n"
             "a = \"x{}y\"\n"
             "b = \"x{i\"\n"
             "c = \"x}\"\n"
             "d = \"{i j}\"\n"
             "e = \"{i +}\"\n"
             "f = \"{#}\"\n"
             "}");
  src.parse();
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{
                "2:7: empty template hole",
                "3:7: unterminated template hole; write '\\{' for a literal "
                "'{'",
                "4:7: unmatched '}' in string; write '\\}' for a literal '}'",
                "5:9: expected '}' after the template hole's expression, "
                "found identifier 'j'",
                "6:10: expected an expression, found '}'",
                "7:7: unexpected character '#'",
                "7:8: expected an expression, found '}'"}));
}

TEST(ParserTest, ParseExpressionRejectsTrailingTokens) {
  EXPECT_EQ(expr("1 2"), "<error> 1:3: expected end of expression, found "
                         "integer '2'");
  EXPECT_EQ(expr(""), "<error> 1:1: expected an expression, found end of file");
}

TEST(ParserTest, ParseExpressionFailsOnLexicalErrors) {
  // Found by the fuzzer: a stray character used to leave a non-null result.
  Source src("1 $ + 2");
  EXPECT_FALSE(src.parseExpr());
  EXPECT_EQ(src.errors(),
            (std::vector<std::string>{"1:3: unexpected character '$'"}));
}

TEST(ParserTest, NestingLimit) {
  // Within the limit: fine.
  EXPECT_EQ(expr(std::string(200, '(') + "x" + std::string(200, ')')),
            "Ident x");
  // Beyond: an error, not a stack overflow.
  std::string deep = std::string(5000, '(') + "x" + std::string(5000, ')');
  std::string result = expr(deep);
  EXPECT_EQ(result.substr(0, 40), "<error> 1:257: expression nested too dee");
  EXPECT_EQ(expr(std::string(5000, '[')).substr(0, 38),
            "<error> 1:257: expression nested too d");
  EXPECT_EQ(expr(std::string(5000, '-') + "x").substr(0, 30),
            "<error> 1:256: expression nest");
  std::string nots;
  for (int i = 0; i < 3000; ++i)
    nots += "not ";
  EXPECT_EQ(expr(nots + "x").substr(0, 30), "<error> 1:1021: expression nes");
}

TEST(ParserTest, LongOperatorChainsAreLimited) {
  // A left-deep chain builds a deep tree; later passes walk it recursively.
  std::string chain = "a";
  for (int i = 0; i < 100; ++i)
    chain += " + a";
  EXPECT_EQ(expr(chain).substr(0, 11), "Binary + (B");
  for (int i = 0; i < 10000; ++i)
    chain += " + a";
  EXPECT_NE(expr(chain).find("expression nested too deeply"),
            std::string::npos);
  std::string index = "x";
  for (int i = 0; i < 10000; ++i)
    index += "[0]";
  EXPECT_NE(expr(index).find("expression nested too deeply"),
            std::string::npos);
}

TEST(ParserTest, StatementNestingLimit) {
  std::string body;
  for (int i = 0; i < 1000; ++i)
    body += "if a {\n";
  for (int i = 0; i < 1000; ++i)
    body += "}\n";
  Source src("entry f() {\n" + body + "}\nentry g() { x = }");
  std::unique_ptr<Module> m = src.parse();
  std::vector<std::string> errors = src.errors();
  ASSERT_EQ(errors.size(), 2u);
  // The condition of the 256th `if` is the 257th level.
  EXPECT_EQ(errors[0],
            "257:4: expression nested too deeply (the limit is 256)");
  // Parsing went on after the deep part.
  EXPECT_EQ(errors[1], "2003:17: expected an expression, found '}'");
  ASSERT_EQ(m->entries.size(), 2u);
}

TEST(ParserTest, LongElseIfChainIsLimited) {
  std::string chain = "if a { x = 1 }";
  for (int i = 0; i < 1000; ++i)
    chain += " else if a { x = 1 }";
  Source src("entry f() {\n" + chain + "\n}");
  src.parse();
  std::vector<std::string> errors = src.errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("nested too deeply"), std::string::npos);
}

} // namespace
