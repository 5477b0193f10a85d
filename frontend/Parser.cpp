//===- Parser.cpp - Recursive-descent parser of the .tfm language ---------===//
//
// One function per grammar rule of docs/language.md. Conventions:
//  - A rule that fails has reported exactly one error and returns null/false;
//    callers propagate the failure to the nearest statement or item, which
//    resynchronises. At most one error is reported per token, which keeps a
//    single mistake from producing a cascade.
//  - Every loop consumes a token per iteration or ends, and every recursion
//    goes through enterNesting(), so no input can hang the parser or overflow
//    its stack.
//
//===----------------------------------------------------------------------===//

#include "frontend/Parser.h"

#include "frontend/Diagnostics.h"
#include "frontend/Lexer.h"

#include "llvm/Support/Casting.h"

#include <deque>
#include <limits>
#include <utility>

namespace tfc {

using namespace ast;

namespace {

bool isDtypeName(std::string_view name) {
  return name == "f32" || name == "f16" || name == "bf16" || name == "i32" ||
         name == "i64" || name == "bool";
}

bool isParamKindName(std::string_view name) {
  return name == "tensor" || name == "int" || name == "float" ||
         name == "bool" || name == "str" || name == "enum" || name == "list" ||
         name == "dim" || name == "any";
}

/// The dtype a user probably meant when writing another language's name.
const char *suggestDtype(std::string_view name) {
  if (name == "float" || name == "float32" || name == "fp32")
    return "f32";
  if (name == "half" || name == "float16" || name == "fp16")
    return "f16";
  if (name == "bfloat16")
    return "bf16";
  if (name == "int" || name == "int32")
    return "i32";
  if (name == "int64" || name == "long")
    return "i64";
  return nullptr;
}

bool isTopLevelKeyword(TokenKind kind) {
  return kind == TokenKind::KwImport || kind == TokenKind::KwConfig ||
         kind == TokenKind::KwBlock || kind == TokenKind::KwEntry;
}

bool canStartExpression(TokenKind kind) {
  switch (kind) {
  case TokenKind::Int:
  case TokenKind::Float:
  case TokenKind::String:
  case TokenKind::KwTrue:
  case TokenKind::KwFalse:
  case TokenKind::Ident:
  case TokenKind::LParen:
  case TokenKind::LBracket:
  case TokenKind::Minus:
  case TokenKind::KwNot:
    return true;
  default:
    return false;
  }
}

std::optional<BinaryOp> comparisonOp(TokenKind kind) {
  switch (kind) {
  case TokenKind::EqEq:
    return BinaryOp::Eq;
  case TokenKind::NotEq:
    return BinaryOp::Ne;
  case TokenKind::Less:
    return BinaryOp::Lt;
  case TokenKind::LessEq:
    return BinaryOp::Le;
  case TokenKind::Greater:
    return BinaryOp::Gt;
  case TokenKind::GreaterEq:
    return BinaryOp::Ge;
  default:
    return std::nullopt;
  }
}

class Parser {
public:
  Parser(Lexer &lexer, DiagnosticEngine &diags, unsigned depth = 0,
         bool inTemplateHole = false)
      : lexer(lexer), diags(diags), depth(depth),
        inTemplateHole(inTemplateHole) {}

  std::unique_ptr<Module> parseFile(std::string fileName);
  /// An expression that must use up the whole input (a template hole or a
  /// standalone expression).
  ExprPtr parseWholeExpression();

private:
  //===--------------------------------------------------------------------===//
  // Token stream
  //===--------------------------------------------------------------------===//

  /// The token `n` ahead of the current one. Once the error limit is reached
  /// the stream looks exhausted, which ends every loop.
  const Token &peek(size_t n = 0) {
    if (diags.tooManyErrors()) {
      if (!sawErrorLimit && !inTemplateHole) {
        sawErrorLimit = true;
        // Counted but not printed: it makes the engine say that it stopped.
        diags.error(lastLoc, "too many errors emitted, stopping now");
      }
      stopToken.loc = lastLoc;
      return stopToken;
    }
    while (lookahead.size() <= n)
      lookahead.push_back(lexer.next());
    return lookahead[n];
  }
  const Token &tok() { return peek(0); }
  bool at(TokenKind kind) { return tok().is(kind); }

  Token consume() {
    Token t = tok();
    if (t.is(TokenKind::Eof))
      return t;
    lookahead.pop_front();
    ++consumed;
    prevLine = t.loc.line;
    lastLoc = t.loc;
    return t;
  }
  bool consumeIf(TokenKind kind) {
    if (!at(kind))
      return false;
    consume();
    return true;
  }
  /// True when the current token is the first on its line: statements need
  /// no separator, so a line break is the best hint of where one begins.
  bool atLineStart() { return tok().loc.line != prevLine; }

  //===--------------------------------------------------------------------===//
  // Diagnostics
  //===--------------------------------------------------------------------===//

  std::string describe(const Token &t) const {
    if (t.is(TokenKind::Eof) && inTemplateHole)
      return "'}'";
    return describeToken(t);
  }
  /// Reports unless an error was already reported at the current token.
  bool error(SourceLoc loc, std::string message) {
    if (lastErrorToken == consumed)
      return false;
    lastErrorToken = consumed;
    diags.error(loc, std::move(message));
    return true;
  }
  bool expected(const std::string &what) {
    return error(tok().loc, "expected " + what + ", found " + describe(tok()));
  }
  /// What a failed rule returns: false or a null node, whichever it returns.
  struct Failure {
    operator bool() const { return false; }
    template <typename T> operator std::unique_ptr<T>() const {
      return nullptr;
    }
  };
  /// Reports "expected X, found Y" for `return fail(...)`.
  Failure fail(const std::string &what) {
    expected(what);
    return {};
  }
  /// Expects the closing bracket of a pair; on error also points at the
  /// opening one.
  bool expectClosing(TokenKind close, SourceLoc open, const std::string &what) {
    if (consumeIf(close))
      return true;
    if (expected(what)) {
      const char *name = close == TokenKind::RParen     ? "'('"
                         : close == TokenKind::RBracket ? "'['"
                                                        : "'{'";
      diags.note(open, std::string("to match this ") + name);
    }
    return false;
  }

  //===--------------------------------------------------------------------===//
  // Nesting limit
  //===--------------------------------------------------------------------===//

  /// Restores the depth when a rule returns, so loops can add one level per
  /// iteration (a long `a + b + c ...` chain builds a deep tree too).
  struct NestingScope {
    explicit NestingScope(Parser &p) : p(p), saved(p.depth) {}
    ~NestingScope() { p.depth = saved; }
    Parser &p;
    unsigned saved;
  };
  bool enterNesting(SourceLoc loc, const char *what) {
    if (++depth <= kMaxNestingDepth)
      return true;
    nestingOverflow = true;
    error(loc, std::string(what) + " nested too deeply (the limit is " +
                   std::to_string(kMaxNestingDepth) + ")");
    return false;
  }
  bool enterExpr(SourceLoc loc) { return enterNesting(loc, "expression"); }

  //===--------------------------------------------------------------------===//
  // Recovery
  //===--------------------------------------------------------------------===//

  bool isTopLevelStart() {
    const Token &t = tok();
    if (isTopLevelKeyword(t.kind))
      return true;
    // `model` and `dim` are identifiers elsewhere (`dim(x, 1)`), so only a
    // line that starts with one and names something is taken as an item.
    return (t.isIdent("model") || t.isIdent("dim")) && atLineStart() &&
           peek(1).is(TokenKind::Ident);
  }
  /// `a = ...` or `a, b, c = ...`.
  bool isAssignmentStart() {
    if (!at(TokenKind::Ident))
      return false;
    size_t i = 1;
    while (i < 512 && peek(i).is(TokenKind::Comma) &&
           peek(i + 1).is(TokenKind::Ident))
      i += 2;
    return peek(i).is(TokenKind::Assign);
  }
  bool isStatementStart() {
    switch (tok().kind) {
    case TokenKind::KwParam:
    case TokenKind::KwFor:
    case TokenKind::KwIf:
    case TokenKind::KwReturn:
    case TokenKind::KwAssert:
      return true;
    default:
      return isAssignmentStart();
    }
  }
  void syncTopLevel() {
    while (!at(TokenKind::Eof) && !isTopLevelStart())
      consume();
  }
  /// Skips to the start of the next statement, the `}` that closes the
  /// current body, or the next top-level item. Braces opened while skipping
  /// are skipped as a whole.
  void syncStatement() {
    unsigned braces = 0;
    while (!at(TokenKind::Eof) && !isTopLevelStart()) {
      TokenKind kind = tok().kind;
      if (braces == 0) {
        if (kind == TokenKind::RBrace)
          return;
        if (kind == TokenKind::Semi) {
          consume();
          return;
        }
        if (atLineStart() && isStatementStart())
          return;
      }
      if (kind == TokenKind::LBrace)
        ++braces;
      else if (kind == TokenKind::RBrace)
        --braces;
      consume();
    }
  }

  //===--------------------------------------------------------------------===//
  // Grammar
  //===--------------------------------------------------------------------===//

  bool parseItem(Module &module);
  bool parseModel(Module &module);
  bool parseImport(Module &module);
  bool parseConfig(Module &module);
  bool parseDim(Module &module);
  bool parseBlock(Module &module);
  bool parseEntry(Module &module);
  bool parseParamList(std::vector<ParamDecl> &params, bool entryInputs);
  bool parseBlockParam(ParamDecl &param);
  bool parseEntryInput(ParamDecl &param);
  bool parseTensorType(TensorTypeExpr &type);
  /// After an error in a block or entry header: skips to the body's `{` so
  /// that errors inside the body are still found.
  bool skipToBody();

  bool parseBody(Body &body, const std::string &what);
  StmtPtr parseStatement();
  StmtPtr parseAssign();
  StmtPtr parseParamStmt();
  StmtPtr parseFor();
  StmtPtr parseIf();
  StmtPtr parseReturn();
  StmtPtr parseAssert();

  ExprPtr parseExpr();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseNot();
  ExprPtr parseComparison();
  ExprPtr parseAdditive();
  ExprPtr parseMultiplicative();
  ExprPtr parseUnary();
  ExprPtr parsePower();
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  ExprPtr parseList();
  bool parseArguments(std::vector<Argument> &args);
  bool parseSubscripts(std::vector<Subscript> &subscripts);
  bool parseSubscript(Subscript &sub);
  ExprPtr parseString(const Token &t);

  Lexer &lexer;
  DiagnosticEngine &diags;
  std::deque<Token> lookahead;
  Token stopToken; // Eof, returned once the error limit is reached
  size_t consumed = 0;
  size_t lastErrorToken = std::numeric_limits<size_t>::max();
  uint32_t prevLine = 0;
  SourceLoc lastLoc;
  unsigned depth;
  bool inTemplateHole;
  bool sawErrorLimit = false;
  /// Set when the nesting limit is hit: the current item is abandoned, since
  /// recovering inside it would only hit the limit again.
  bool nestingOverflow = false;
};

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

std::unique_ptr<Module> Parser::parseFile(std::string fileName) {
  auto module = std::make_unique<Module>();
  module->fileName = std::move(fileName);
  lastLoc = tok().loc;
  while (!at(TokenKind::Eof)) {
    size_t before = consumed;
    bool ok = parseItem(*module);
    nestingOverflow = false;
    if (ok)
      continue;
    if (consumed == before)
      consume();
    syncTopLevel();
  }
  return module;
}

ExprPtr Parser::parseWholeExpression() {
  lastLoc = tok().loc;
  ExprPtr e = parseExpr();
  if (!e)
    return nullptr;
  if (!at(TokenKind::Eof)) {
    expected(inTemplateHole ? "'}' after the template hole's expression"
                            : "end of expression");
    return nullptr;
  }
  return e;
}

bool Parser::parseItem(Module &module) {
  const Token &t = tok();
  switch (t.kind) {
  case TokenKind::KwImport:
    return parseImport(module);
  case TokenKind::KwConfig:
    return parseConfig(module);
  case TokenKind::KwBlock:
    return parseBlock(module);
  case TokenKind::KwEntry:
    return parseEntry(module);
  case TokenKind::Ident:
    if (t.text == "model")
      return parseModel(module);
    if (t.text == "dim")
      return parseDim(module);
    break;
  case TokenKind::KwParam:
  case TokenKind::KwFor:
  case TokenKind::KwIf:
  case TokenKind::KwReturn:
  case TokenKind::KwAssert:
    error(t.loc, std::string(tokenKindName(t.kind)) +
                     " is only allowed inside a block or entry");
    return false;
  default:
    break;
  }
  expected("a declaration ('model', 'import', 'config', 'dim', 'block' or "
           "'entry')");
  return false;
}

bool Parser::parseModel(Module &module) {
  SourceLoc loc = consume().loc;
  if (!at(TokenKind::Ident))
    return fail("model name after 'model'");
  Token name = consume();
  if (module.modelName) {
    if (error(loc, "duplicate 'model' declaration"))
      diags.note(module.modelLoc, "previous declaration is here");
    return true;
  }
  module.modelName = std::string(name.text);
  module.modelLoc = loc;
  return true;
}

bool Parser::parseImport(Module &module) {
  SourceLoc loc = consume().loc;
  if (!at(TokenKind::String))
    return fail("a file name string after 'import'");
  Token t = consume();
  ExprPtr e = parseString(t);
  auto *str = static_cast<StringExpr *>(e.get());
  std::string path;
  for (StringExpr::Piece &piece : str->pieces) {
    if (piece.hole) {
      error(piece.hole->getLoc(), "an import path cannot contain a template "
                                  "hole");
      return true;
    }
    path += piece.text;
  }
  module.imports.push_back({loc, std::move(path)});
  return true;
}

bool Parser::parseConfig(Module &module) {
  consume();
  if (!at(TokenKind::LBrace))
    return fail("'{' after 'config'");
  SourceLoc open = consume().loc;
  while (!at(TokenKind::RBrace)) {
    if (nestingOverflow)
      return false;
    if (at(TokenKind::Eof) || isTopLevelStart()) {
      if (expected("'}' at the end of 'config'"))
        diags.note(open, "to match this '{'");
      return false;
    }
    size_t before = consumed;
    if (at(TokenKind::Ident) && peek(1).is(TokenKind::Assign)) {
      Token name = consume();
      consume(); // =
      if (ExprPtr value = parseExpr()) {
        module.config.push_back(
            {name.loc, std::string(name.text), std::move(value)});
        consumeIf(TokenKind::Semi);
        continue;
      }
    } else {
      expected("a config entry 'name = value'");
    }
    if (consumed == before)
      consume();
    syncStatement();
  }
  consume(); // }
  return true;
}

bool Parser::parseDim(Module &module) {
  SourceLoc loc = consume().loc;
  if (!at(TokenKind::Ident))
    return fail("dimension name after 'dim'");
  Token name = consume();
  DimDecl dim{loc, std::string(name.text), nullptr};
  if (consumeIf(TokenKind::LessEq)) {
    dim.bound = parseExpr();
    if (!dim.bound)
      return false;
  } else if (comparisonOp(tok().kind)) {
    // Only an upper bound can be declared.
    return fail("'<=' before the bound of '" + dim.name + "'");
  }
  module.dims.push_back(std::move(dim));
  return true;
}

bool Parser::skipToBody() {
  while (!at(TokenKind::Eof) && !at(TokenKind::LBrace) &&
         !at(TokenKind::RBrace) && !isTopLevelStart())
    consume();
  return at(TokenKind::LBrace);
}

bool Parser::parseBlock(Module &module) {
  BlockDecl block;
  block.loc = consume().loc;
  if (!at(TokenKind::Ident))
    return fail("block name after 'block'");
  block.name = std::string(consume().text);
  bool headerOk = parseParamList(block.params, /*entryInputs=*/false);
  if (!headerOk && !skipToBody())
    return false;
  bool bodyOk = parseBody(block.body, "block '" + block.name + "'");
  module.blocks.push_back(std::move(block));
  return headerOk && bodyOk;
}

bool Parser::parseEntry(Module &module) {
  EntryDecl entry;
  entry.loc = consume().loc;
  if (!at(TokenKind::Ident))
    return fail("entry point name after 'entry'");
  entry.name = std::string(consume().text);
  bool headerOk = parseParamList(entry.inputs, /*entryInputs=*/true);
  if (!headerOk && !skipToBody())
    return false;
  bool bodyOk = parseBody(entry.body, "entry '" + entry.name + "'");
  module.entries.push_back(std::move(entry));
  return headerOk && bodyOk;
}

bool Parser::parseParamList(std::vector<ParamDecl> &params, bool entryInputs) {
  if (!at(TokenKind::LParen))
    return fail(entryInputs ? "'(' and the entry's inputs"
                            : "'(' and the block's parameters");
  SourceLoc open = consume().loc;
  while (!at(TokenKind::RParen)) {
    ParamDecl param;
    if (!(entryInputs ? parseEntryInput(param) : parseBlockParam(param)))
      return false;
    params.push_back(std::move(param));
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  return expectClosing(TokenKind::RParen, open,
                       entryInputs ? "',' or ')' after an input"
                                   : "',' or ')' after a parameter");
}

bool Parser::parseBlockParam(ParamDecl &param) {
  if (!at(TokenKind::Ident))
    return fail("parameter name");
  Token name = consume();
  param.loc = name.loc;
  param.name = std::string(name.text);
  if (consumeIf(TokenKind::Colon)) {
    const Token &kind = tok();
    if (!kind.is(TokenKind::Ident))
      return fail("a parameter kind (tensor, int, float, bool, str, enum, "
                  "list, dim or any)");
    if (!isParamKindName(kind.text)) {
      std::string message = "unknown parameter kind '" +
                            std::string(kind.text) +
                            "'; expected tensor, int, float, bool, str, enum, "
                            "list, dim or any";
      if (isDtypeName(kind.text))
        message += " (a block's tensor parameters take any element type and "
                   "shape)";
      error(kind.loc, std::move(message));
      return false;
    }
    param.kind = std::string(consume().text);
  }
  if (consumeIf(TokenKind::Assign)) {
    param.defaultValue = parseExpr();
    if (!param.defaultValue)
      return false;
  }
  return true;
}

bool Parser::parseEntryInput(ParamDecl &param) {
  if (!at(TokenKind::Ident))
    return fail("input name");
  Token name = consume();
  param.loc = name.loc;
  param.name = std::string(name.text);
  param.kind = "typed";
  if (!consumeIf(TokenKind::Colon))
    return fail("':' and a tensor type after input '" + param.name + "'");
  TensorTypeExpr type;
  if (!parseTensorType(type))
    return false;
  param.tensorType = std::move(type);
  if (at(TokenKind::Assign)) {
    error(tok().loc, "an entry input cannot have a default value");
    return false;
  }
  return true;
}

bool Parser::parseTensorType(TensorTypeExpr &type) {
  type.loc = tok().loc;
  type.dtype = "f32";
  if (at(TokenKind::Ident)) {
    const Token &dtype = tok();
    if (!isDtypeName(dtype.text)) {
      std::string message = "unknown element type '" + std::string(dtype.text) +
                            "'; expected f32, f16, bf16, i32, i64 or bool";
      if (const char *suggestion = suggestDtype(dtype.text))
        message += " (did you mean '" + std::string(suggestion) + "'?)";
      error(dtype.loc, std::move(message));
      return false;
    }
    type.dtype = std::string(consume().text);
    if (!at(TokenKind::LBracket))
      return fail("'[' and the shape after the element type");
  } else if (!at(TokenKind::LBracket)) {
    return fail("a tensor type such as 'f32[batch, seq]'");
  }
  SourceLoc open = consume().loc;
  if (!at(TokenKind::RBracket)) {
    while (true) {
      ExprPtr dim = parseExpr();
      if (!dim)
        return false;
      type.dims.push_back(std::move(dim));
      if (!consumeIf(TokenKind::Comma))
        break;
    }
  }
  return expectClosing(TokenKind::RBracket, open,
                       "',' or ']' in the tensor shape");
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool Parser::parseBody(Body &body, const std::string &what) {
  if (!at(TokenKind::LBrace))
    return fail("'{' to begin the body of " + what);
  NestingScope scope(*this);
  // Checked before taking the `{` so that recovery skips the whole body.
  if (!enterNesting(tok().loc, "statement"))
    return false;
  SourceLoc open = consume().loc;
  while (true) {
    if (nestingOverflow)
      return false;
    if (consumeIf(TokenKind::RBrace))
      return true;
    if (at(TokenKind::Eof) || isTopLevelStart()) {
      if (expected("'}' at the end of " + what))
        diags.note(open, "to match this '{'");
      return false;
    }
    size_t before = consumed;
    if (StmtPtr stmt = parseStatement()) {
      body.push_back(std::move(stmt));
      consumeIf(TokenKind::Semi);
      continue;
    }
    if (consumed == before)
      consume();
    syncStatement();
  }
}

StmtPtr Parser::parseStatement() {
  const Token &t = tok();
  switch (t.kind) {
  case TokenKind::KwParam:
    return parseParamStmt();
  case TokenKind::KwFor:
    return parseFor();
  case TokenKind::KwIf:
    return parseIf();
  case TokenKind::KwReturn:
    return parseReturn();
  case TokenKind::KwAssert:
    return parseAssert();
  case TokenKind::KwElse:
    error(t.loc, "'else' without a matching 'if'");
    return nullptr;
  case TokenKind::Ident:
    if (peek(1).is(TokenKind::Assign) || peek(1).is(TokenKind::Comma))
      return parseAssign();
    {
      // `x := 1` or `f(x)`: point after the name. A lone name at the end
      // of a line is more likely left over from the line before.
      Token name = consume();
      if (atLineStart())
        error(name.loc, "expected a statement, found " + describe(name));
      else
        expected("'=' after '" + std::string(name.text) + "'");
    }
    return nullptr;
  default:
    expected("a statement");
    return nullptr;
  }
}

StmtPtr Parser::parseAssign() {
  std::vector<AssignStmt::Target> targets;
  SourceLoc loc = tok().loc;
  while (true) {
    if (!at(TokenKind::Ident))
      return fail("a name to assign to");
    Token name = consume();
    targets.push_back({name.loc, std::string(name.text)});
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (!consumeIf(TokenKind::Assign))
    return fail("'='");
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  return std::make_unique<AssignStmt>(loc, std::move(targets),
                                      std::move(value));
}

StmtPtr Parser::parseParamStmt() {
  SourceLoc loc = consume().loc;
  if (!at(TokenKind::Ident))
    return fail("parameter name after 'param'");
  std::string name(consume().text);
  if (!consumeIf(TokenKind::Colon))
    return fail("':' and the stored tensor type after '" + name + "'");
  TensorTypeExpr type;
  if (!parseTensorType(type))
    return nullptr;
  if (!consumeIf(TokenKind::Assign))
    return fail("'=' and a checkpoint tensor name after the type of '" + name +
                "'");
  ExprPtr checkpointName = parseExpr();
  if (!checkpointName)
    return nullptr;
  return std::make_unique<ParamStmt>(loc, std::move(name), std::move(type),
                                     std::move(checkpointName));
}

StmtPtr Parser::parseFor() {
  SourceLoc loc = consume().loc;
  if (!at(TokenKind::Ident))
    return fail("loop variable name after 'for'");
  std::string var(consume().text);
  if (!consumeIf(TokenKind::KwIn))
    return fail("'in' after the loop variable");
  ExprPtr lo = parseExpr();
  if (!lo)
    return nullptr;
  if (!consumeIf(TokenKind::DotDot))
    return fail("'..' in the loop range");
  ExprPtr hi = parseExpr();
  if (!hi)
    return nullptr;
  Body body;
  if (!parseBody(body, "the 'for' loop"))
    return nullptr;
  return std::make_unique<ForStmt>(loc, std::move(var), std::move(lo),
                                   std::move(hi), std::move(body));
}

StmtPtr Parser::parseIf() {
  SourceLoc loc = consume().loc;
  ExprPtr cond = parseExpr();
  if (!cond)
    return nullptr;
  Body thenBody, elseBody;
  if (!parseBody(thenBody, "the 'if'"))
    return nullptr;
  if (at(TokenKind::KwElse)) {
    consume();
    if (at(TokenKind::KwIf)) {
      // `else if` nests an IfStmt, so a long chain is deep in the tree too.
      NestingScope scope(*this);
      if (!enterNesting(tok().loc, "statement"))
        return nullptr;
      StmtPtr elseIf = parseIf();
      if (!elseIf)
        return nullptr;
      elseBody.push_back(std::move(elseIf));
    } else if (at(TokenKind::LBrace)) {
      if (!parseBody(elseBody, "the 'else'"))
        return nullptr;
    } else {
      return fail("'{' or 'if' after 'else'");
    }
  }
  return std::make_unique<IfStmt>(loc, std::move(cond), std::move(thenBody),
                                  std::move(elseBody));
}

StmtPtr Parser::parseReturn() {
  SourceLoc loc = consume().loc;
  std::vector<ReturnStmt::Value> values;
  // `return` alone: the next token cannot start a value, or it starts the
  // next statement on a new line.
  bool hasValues =
      canStartExpression(tok().kind) && !(atLineStart() && isAssignmentStart());
  while (hasValues) {
    ReturnStmt::Value value;
    value.loc = tok().loc;
    if (at(TokenKind::Ident) && peek(1).is(TokenKind::Colon)) {
      value.name = std::string(consume().text);
      consume(); // :
    }
    value.value = parseExpr();
    if (!value.value)
      return nullptr;
    values.push_back(std::move(value));
    if (!consumeIf(TokenKind::Comma))
      break;
    if (!canStartExpression(tok().kind))
      return fail("a return value after ','");
  }
  return std::make_unique<ReturnStmt>(loc, std::move(values));
}

StmtPtr Parser::parseAssert() {
  SourceLoc loc = consume().loc;
  ExprPtr cond = parseExpr();
  if (!cond)
    return nullptr;
  ExprPtr message;
  if (consumeIf(TokenKind::Comma)) {
    message = parseExpr();
    if (!message)
      return nullptr;
  }
  return std::make_unique<AssertStmt>(loc, std::move(cond), std::move(message));
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ExprPtr Parser::parseExpr() {
  NestingScope scope(*this);
  if (!enterExpr(tok().loc))
    return nullptr;
  return parseOr();
}

ExprPtr Parser::parseOr() {
  NestingScope scope(*this);
  ExprPtr lhs = parseAnd();
  while (lhs && at(TokenKind::KwOr)) {
    SourceLoc loc = consume().loc;
    if (!enterExpr(loc))
      return nullptr;
    ExprPtr rhs = parseAnd();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, BinaryOp::Or, std::move(lhs),
                                       std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseAnd() {
  NestingScope scope(*this);
  ExprPtr lhs = parseNot();
  while (lhs && at(TokenKind::KwAnd)) {
    SourceLoc loc = consume().loc;
    if (!enterExpr(loc))
      return nullptr;
    ExprPtr rhs = parseNot();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, BinaryOp::And, std::move(lhs),
                                       std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseNot() {
  if (!at(TokenKind::KwNot))
    return parseComparison();
  SourceLoc loc = consume().loc;
  NestingScope scope(*this);
  if (!enterExpr(loc))
    return nullptr;
  ExprPtr operand = parseNot();
  if (!operand)
    return nullptr;
  return std::make_unique<UnaryExpr>(loc, UnaryOp::Not, std::move(operand));
}

ExprPtr Parser::parseComparison() {
  ExprPtr lhs = parseAdditive();
  if (!lhs)
    return nullptr;
  std::optional<BinaryOp> op = comparisonOp(tok().kind);
  if (!op)
    return lhs;
  SourceLoc loc = consume().loc;
  ExprPtr rhs = parseAdditive();
  if (!rhs)
    return nullptr;
  if (comparisonOp(tok().kind)) {
    error(tok().loc, "comparisons cannot be chained; combine them with 'and'");
    return nullptr;
  }
  return std::make_unique<BinaryExpr>(loc, *op, std::move(lhs), std::move(rhs));
}

ExprPtr Parser::parseAdditive() {
  NestingScope scope(*this);
  ExprPtr lhs = parseMultiplicative();
  while (lhs && (at(TokenKind::Plus) || at(TokenKind::Minus))) {
    BinaryOp op = at(TokenKind::Plus) ? BinaryOp::Add : BinaryOp::Sub;
    SourceLoc loc = consume().loc;
    if (!enterExpr(loc))
      return nullptr;
    ExprPtr rhs = parseMultiplicative();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseMultiplicative() {
  NestingScope scope(*this);
  ExprPtr lhs = parseUnary();
  while (lhs) {
    BinaryOp op;
    switch (tok().kind) {
    case TokenKind::Star:
      op = BinaryOp::Mul;
      break;
    case TokenKind::Slash:
      op = BinaryOp::Div;
      break;
    case TokenKind::Percent:
      op = BinaryOp::Mod;
      break;
    case TokenKind::At:
      op = BinaryOp::MatMul;
      break;
    default:
      return lhs;
    }
    SourceLoc loc = consume().loc;
    if (!enterExpr(loc))
      return nullptr;
    ExprPtr rhs = parseUnary();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  if (!at(TokenKind::Minus))
    return parsePower();
  SourceLoc loc = consume().loc;
  NestingScope scope(*this);
  if (!enterExpr(loc))
    return nullptr;
  ExprPtr operand = parseUnary();
  if (!operand)
    return nullptr;
  return std::make_unique<UnaryExpr>(loc, UnaryOp::Neg, std::move(operand));
}

// `a ** b` binds tighter than unary minus on its left and is right-
// associative, as in Python: `-2 ** 2` is -4, `2 ** -1` is 0.5 and
// `2 ** 3 ** 2` is 2 ** 9.
ExprPtr Parser::parsePower() {
  NestingScope scope(*this);
  ExprPtr base = parsePostfix();
  if (!base || !at(TokenKind::StarStar))
    return base;
  SourceLoc loc = consume().loc;
  if (!enterExpr(loc))
    return nullptr;
  ExprPtr exponent = parseUnary();
  if (!exponent)
    return nullptr;
  return std::make_unique<BinaryExpr>(loc, BinaryOp::Pow, std::move(base),
                                      std::move(exponent));
}

ExprPtr Parser::parsePostfix() {
  NestingScope scope(*this);
  SourceLoc start = tok().loc;
  ExprPtr e = parsePrimary();
  while (e) {
    if (at(TokenKind::LParen)) {
      auto *callee = llvm::dyn_cast<IdentExpr>(e.get());
      if (!callee) {
        error(tok().loc, "only a name can be called");
        return nullptr;
      }
      std::vector<Argument> args;
      if (!parseArguments(args))
        return nullptr;
      e = std::make_unique<CallExpr>(start, std::move(callee->name),
                                     std::move(args));
    } else if (at(TokenKind::LBracket)) {
      if (!enterExpr(tok().loc))
        return nullptr;
      std::vector<Subscript> subscripts;
      if (!parseSubscripts(subscripts))
        return nullptr;
      e = std::make_unique<IndexExpr>(start, std::move(e),
                                      std::move(subscripts));
    } else {
      break;
    }
  }
  return e;
}

bool Parser::parseArguments(std::vector<Argument> &args) {
  SourceLoc open = consume().loc;
  bool sawKeyword = false;
  while (!at(TokenKind::RParen)) {
    Argument arg;
    arg.loc = tok().loc;
    if (at(TokenKind::Ident) && peek(1).is(TokenKind::Assign)) {
      arg.name = std::string(consume().text);
      consume(); // =
      sawKeyword = true;
    } else if (sawKeyword && canStartExpression(tok().kind)) {
      error(tok().loc, "positional argument after a keyword argument");
      return false;
    }
    arg.value = parseExpr();
    if (!arg.value)
      return false;
    args.push_back(std::move(arg));
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  return expectClosing(TokenKind::RParen, open,
                       "',' or ')' in the argument list");
}

bool Parser::parseSubscripts(std::vector<Subscript> &subscripts) {
  SourceLoc open = consume().loc;
  bool sawEllipsis = false;
  while (true) {
    Subscript sub;
    sub.loc = tok().loc;
    if (!parseSubscript(sub))
      return false;
    if (sub.isEllipsis && std::exchange(sawEllipsis, true)) {
      error(sub.loc, "only one '...' may appear in a subscript");
      return false;
    }
    subscripts.push_back(std::move(sub));
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  return expectClosing(TokenKind::RBracket, open,
                       "',' or ']' in the subscript");
}

/// `...`, `index`, or `[start] : [end] [: [step]]`.
bool Parser::parseSubscript(Subscript &sub) {
  auto endsPart = [&] {
    return at(TokenKind::Comma) || at(TokenKind::RBracket) ||
           at(TokenKind::Colon);
  };
  if (consumeIf(TokenKind::Ellipsis)) {
    sub.isEllipsis = sub.isSlice = true;
    return true;
  }
  if (!at(TokenKind::Colon)) {
    ExprPtr e = parseExpr();
    if (!e)
      return false;
    if (!at(TokenKind::Colon)) {
      sub.index = std::move(e);
      return true;
    }
    sub.start = std::move(e);
  }
  consume(); // the first ':'
  sub.isSlice = true;
  if (!endsPart() && !(sub.end = parseExpr()))
    return false;
  if (!consumeIf(TokenKind::Colon))
    return true;
  if (!endsPart() && !(sub.step = parseExpr()))
    return false;
  return true;
}

ExprPtr Parser::parsePrimary() {
  const Token &t = tok();
  switch (t.kind) {
  case TokenKind::Int: {
    Token lit = consume();
    return std::make_unique<IntExpr>(lit.loc, lit.intValue);
  }
  case TokenKind::Float: {
    Token lit = consume();
    return std::make_unique<FloatExpr>(lit.loc, lit.floatValue);
  }
  case TokenKind::String: {
    Token lit = consume();
    return parseString(lit);
  }
  case TokenKind::KwTrue:
  case TokenKind::KwFalse: {
    Token lit = consume();
    return std::make_unique<BoolExpr>(lit.loc, lit.is(TokenKind::KwTrue));
  }
  case TokenKind::Ident: {
    Token name = consume();
    return std::make_unique<IdentExpr>(name.loc, std::string(name.text));
  }
  case TokenKind::LParen: {
    SourceLoc open = consume().loc;
    ExprPtr inner = parseExpr();
    if (!inner)
      return nullptr;
    if (!expectClosing(TokenKind::RParen, open, "')'"))
      return nullptr;
    return inner;
  }
  case TokenKind::LBracket:
    return parseList();
  default:
    expected("an expression");
    return nullptr;
  }
}

ExprPtr Parser::parseList() {
  SourceLoc open = consume().loc;
  std::vector<ExprPtr> elements;
  while (!at(TokenKind::RBracket)) {
    ExprPtr e = parseExpr();
    if (!e)
      return nullptr;
    elements.push_back(std::move(e));
    if (!consumeIf(TokenKind::Comma))
      break;
  }
  if (!expectClosing(TokenKind::RBracket, open, "',' or ']' in the list"))
    return nullptr;
  return std::make_unique<ListExpr>(open, std::move(elements));
}

/// Splits a string token's raw body into text and `{expr}` holes. Strings
/// never span lines, so a byte at body offset `i` is at column
/// `loc.col + 1 + i`; each hole is lexed and parsed on its own with that
/// starting location.
ExprPtr Parser::parseString(const Token &t) {
  std::string_view body = t.text;
  std::vector<StringExpr::Piece> pieces;
  std::string text;
  auto locAt = [&](size_t offset) {
    return SourceLoc{t.loc.fileId, t.loc.line,
                     t.loc.col + 1 + static_cast<uint32_t>(offset)};
  };
  auto flushText = [&] {
    if (!text.empty())
      pieces.push_back({std::move(text), nullptr});
    text.clear();
  };
  size_t i = 0;
  while (i < body.size()) {
    char c = body[i];
    if (c == '\\' && i + 1 < body.size()) {
      char n = body[i + 1];
      text += n == 'n' ? '\n' : n == 't' ? '\t' : n; // the lexer checked it
      i += 2;
      continue;
    }
    // An unterminated string may be cut inside a hole; it was reported, so
    // keep it as text.
    if (t.malformed || (c != '{' && c != '}')) {
      text += c;
      ++i;
      continue;
    }
    if (c == '}') {
      diags.error(locAt(i), "unmatched '}' in string; write '\\}' for a "
                            "literal '}'");
      ++i;
      continue;
    }
    size_t close = body.find('}', i + 1);
    if (close == std::string_view::npos) {
      diags.error(locAt(i), "unterminated template hole; write '\\{' for a "
                            "literal '{'");
      break;
    }
    std::string_view holeText = body.substr(i + 1, close - i - 1);
    if (holeText.find_first_not_of(" \t") == std::string_view::npos) {
      diags.error(locAt(i), "empty template hole");
    } else {
      Lexer holeLexer(holeText, locAt(i + 1), diags, /*inTemplateHole=*/true);
      Parser holeParser(holeLexer, diags, depth, /*inTemplateHole=*/true);
      if (ExprPtr hole = holeParser.parseWholeExpression()) {
        flushText();
        pieces.push_back({"", std::move(hole)});
      }
    }
    i = close + 1;
  }
  flushText();
  return std::make_unique<StringExpr>(t.loc, std::move(pieces));
}

} // namespace

std::unique_ptr<Module> parseModule(uint32_t fileId, SourceManager &sources,
                                    DiagnosticEngine &diags) {
  Lexer lexer(sources.getContents(fileId), SourceLoc{fileId, 1, 1}, diags);
  Parser parser(lexer, diags);
  return parser.parseFile(sources.getName(fileId));
}

ExprPtr parseExpression(uint32_t fileId, SourceManager &sources,
                        DiagnosticEngine &diags) {
  unsigned errorsBefore = diags.getNumErrors();
  Lexer lexer(sources.getContents(fileId), SourceLoc{fileId, 1, 1}, diags);
  Parser parser(lexer, diags);
  ExprPtr expr = parser.parseWholeExpression();
  // A lexical error (say a stray `$`) leaves a well-formed tree behind, but
  // the caller was promised null on any error.
  if (diags.getNumErrors() != errorsBefore)
    return nullptr;
  return expr;
}

} // namespace tfc
