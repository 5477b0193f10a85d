//===- AST.h - Abstract syntax tree of the .tfm language --------*- C++ -*-===//
//
// The parser produces this tree; the elaborator (MLIRGen) walks it. Every node
// carries the source location of its first token so that diagnostics from any
// later stage can point back at the model file.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_AST_H
#define TFC_FRONTEND_AST_H

#include "frontend/SourceLocation.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tfc::ast {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind {
    Int,
    Float,
    Bool,
    String,
    Ident,
    List,
    Unary,
    Binary,
    Call,
    Index,
  };
  Expr(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  SourceLoc getLoc() const { return loc; }

private:
  Kind kind;
  SourceLoc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

class IntExpr : public Expr {
public:
  IntExpr(SourceLoc loc, int64_t value) : Expr(Kind::Int, loc), value(value) {}
  int64_t value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Int; }
};

class FloatExpr : public Expr {
public:
  FloatExpr(SourceLoc loc, double value)
      : Expr(Kind::Float, loc), value(value) {}
  double value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Float; }
};

class BoolExpr : public Expr {
public:
  BoolExpr(SourceLoc loc, bool value) : Expr(Kind::Bool, loc), value(value) {}
  bool value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Bool; }
};

/// A string literal, possibly a template: "h.{i}.attn.c_attn.weight" is the
/// pieces ["h.", <i>, ".attn.c_attn.weight"]. A piece is literal text or an
/// expression parsed from inside `{...}` (with its own location).
class StringExpr : public Expr {
public:
  struct Piece {
    std::string text; // used when `hole` is null
    ExprPtr hole;
  };
  StringExpr(SourceLoc loc, std::vector<Piece> pieces)
      : Expr(Kind::String, loc), pieces(std::move(pieces)) {}
  std::vector<Piece> pieces;
  static bool classof(const Expr *e) { return e->getKind() == Kind::String; }
};

class IdentExpr : public Expr {
public:
  IdentExpr(SourceLoc loc, std::string name)
      : Expr(Kind::Ident, loc), name(std::move(name)) {}
  std::string name;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Ident; }
};

/// `[a, b, c]`: a list of static values or tensors (shapes, permutations,
/// concat operands).
class ListExpr : public Expr {
public:
  ListExpr(SourceLoc loc, std::vector<ExprPtr> elements)
      : Expr(Kind::List, loc), elements(std::move(elements)) {}
  std::vector<ExprPtr> elements;
  static bool classof(const Expr *e) { return e->getKind() == Kind::List; }
};

enum class UnaryOp { Neg, Not };
enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  MatMul,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or,
  Pow,
};

/// Spelling of an operator as written in source ("+", "@", "and", ...).
const char *spelling(UnaryOp op);
const char *spelling(BinaryOp op);

class UnaryExpr : public Expr {
public:
  UnaryExpr(SourceLoc loc, UnaryOp op, ExprPtr operand)
      : Expr(Kind::Unary, loc), op(op), operand(std::move(operand)) {}
  UnaryOp op;
  ExprPtr operand;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Unary; }
};

class BinaryExpr : public Expr {
public:
  /// `loc` is the operator's location: that is what a shape error points at.
  BinaryExpr(SourceLoc loc, BinaryOp op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, loc), op(op), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {}
  BinaryOp op;
  ExprPtr lhs, rhs;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }
};

/// A call argument: positional (`name` empty) or keyword (`axis=-1`).
struct Argument {
  SourceLoc loc;
  std::string name;
  ExprPtr value;
};

/// `callee(args...)`: a builtin op or a user/prelude block.
class CallExpr : public Expr {
public:
  CallExpr(SourceLoc loc, std::string callee, std::vector<Argument> args)
      : Expr(Kind::Call, loc), callee(std::move(callee)),
        args(std::move(args)) {}
  std::string callee;
  std::vector<Argument> args;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }
};

/// One subscript of `x[...]`: either an index expression or a slice
/// `start:end` with either bound optional (`:` alone is the whole axis).
struct Subscript {
  SourceLoc loc;
  bool isSlice = false;
  /// `...`: as many `:` as the other subscripts leave axes.
  bool isEllipsis = false;
  ExprPtr index; // when !isSlice
  ExprPtr start; // optional, when isSlice
  ExprPtr end;   // optional, when isSlice
  ExprPtr step;  // optional, when isSlice (`start:end:step`)
};

class IndexExpr : public Expr {
public:
  IndexExpr(SourceLoc loc, ExprPtr base, std::vector<Subscript> subscripts)
      : Expr(Kind::Index, loc), base(std::move(base)),
        subscripts(std::move(subscripts)) {}
  ExprPtr base;
  std::vector<Subscript> subscripts;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Index; }
};

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// `f32[batch, seq, d]`: an element type and dimension expressions. Each
/// dimension is an expression: an int, a config name, or a symbolic
/// dimension name such as `seq`.
struct TensorTypeExpr {
  SourceLoc loc;
  std::string dtype; // "f32", "f16", "bf16", "i32", "i64", "bool"
  std::vector<ExprPtr> dims;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind { Assign, Param, For, If, Return, Assert };
  Stmt(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  SourceLoc getLoc() const { return loc; }

private:
  Kind kind;
  SourceLoc loc;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

/// `x = e` or `q, k, v = e` (destructures a list or a block's results).
class AssignStmt : public Stmt {
public:
  struct Target {
    SourceLoc loc;
    std::string name;
  };
  AssignStmt(SourceLoc loc, std::vector<Target> targets, ExprPtr value)
      : Stmt(Kind::Assign, loc), targets(std::move(targets)),
        value(std::move(value)) {}
  std::vector<Target> targets;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assign; }
};

/// `param w: [d, 3 * d] = "h.{i}.attn.c_attn.weight"`: binds `w` to the
/// checkpoint tensor named by the string expression. `type.dtype` defaults to
/// "f32" when omitted.
class ParamStmt : public Stmt {
public:
  ParamStmt(SourceLoc loc, std::string name, TensorTypeExpr type,
            ExprPtr checkpointName)
      : Stmt(Kind::Param, loc), name(std::move(name)), type(std::move(type)),
        checkpointName(std::move(checkpointName)) {}
  std::string name;
  TensorTypeExpr type;
  ExprPtr checkpointName;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Param; }
};

/// `for i in lo..hi { body }`: unrolled at elaboration; `hi` exclusive.
class ForStmt : public Stmt {
public:
  ForStmt(SourceLoc loc, std::string var, ExprPtr lo, ExprPtr hi, Body body)
      : Stmt(Kind::For, loc), var(std::move(var)), lo(std::move(lo)),
        hi(std::move(hi)), body(std::move(body)) {}
  std::string var;
  ExprPtr lo, hi;
  Body body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::For; }
};

/// `if cond { ... } else { ... }` on a static (config-time) condition.
/// `else if` is an IfStmt as the only statement of `elseBody`.
class IfStmt : public Stmt {
public:
  IfStmt(SourceLoc loc, ExprPtr cond, Body thenBody, Body elseBody)
      : Stmt(Kind::If, loc), cond(std::move(cond)),
        thenBody(std::move(thenBody)), elseBody(std::move(elseBody)) {}
  ExprPtr cond;
  Body thenBody, elseBody;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::If; }
};

/// `return a, logits: x @ w`: values with optional output names. In an entry
/// the names become the model's output names; an unnamed identifier result
/// is named after the identifier.
class ReturnStmt : public Stmt {
public:
  struct Value {
    SourceLoc loc;
    std::string name; // empty when not given
    ExprPtr value;
  };
  ReturnStmt(SourceLoc loc, std::vector<Value> values)
      : Stmt(Kind::Return, loc), values(std::move(values)) {}
  std::vector<Value> values;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Return; }
};

/// `assert cond, "message"`: a static check evaluated at elaboration.
class AssertStmt : public Stmt {
public:
  AssertStmt(SourceLoc loc, ExprPtr cond, ExprPtr message)
      : Stmt(Kind::Assert, loc), cond(std::move(cond)),
        message(std::move(message)) {}
  ExprPtr cond;
  ExprPtr message; // optional
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assert; }
};

//===----------------------------------------------------------------------===//
// Top-level declarations
//===----------------------------------------------------------------------===//

/// `name = expr` inside `config { ... }`.
struct ConfigEntry {
  SourceLoc loc;
  std::string name;
  ExprPtr value;
};

/// `dim seq <= max_pos`: a symbolic dimension with an optional upper bound.
struct DimDecl {
  SourceLoc loc;
  std::string name;
  ExprPtr bound; // optional
};

/// A block or entry parameter. Blocks: `x` (a tensor), `heads: int`,
/// `eps: float = 1e-5`, `causal: bool`, `prefix: str`, `act: enum`,
/// `xs: list`. Entries: `ids: i32[batch, seq]` (always a tensor type).
struct ParamDecl {
  SourceLoc loc;
  std::string name;
  /// "" (tensor), "tensor", "int", "float", "bool", "str", "enum", "list",
  /// "dim", "any",
  /// or "typed" when `tensorType` holds an entry input type.
  std::string kind;
  std::optional<TensorTypeExpr> tensorType;
  ExprPtr defaultValue; // optional
};

struct BlockDecl {
  SourceLoc loc;
  std::string name;
  std::vector<ParamDecl> params;
  Body body;
};

/// `entry encode(ids: i32[batch, seq]) { ... }`: a function of the compiled
/// model. Conventional names: encode, forward, prefill, decode.
struct EntryDecl {
  SourceLoc loc;
  std::string name;
  std::vector<ParamDecl> inputs;
  Body body;
};

struct ImportDecl {
  SourceLoc loc;
  std::string path;
};

/// One parsed `.tfm` file.
struct Module {
  std::string fileName;
  /// The SourceManager's id of the file; SourceLoc{fileId, 0, 0} stands for
  /// the whole file (errors about what the file lacks).
  uint32_t fileId = 0;
  std::optional<std::string> modelName; // from `model NAME`
  SourceLoc modelLoc;
  std::vector<ImportDecl> imports;
  std::vector<ConfigEntry> config;
  std::vector<DimDecl> dims;
  std::vector<BlockDecl> blocks;
  std::vector<EntryDecl> entries;
};

} // namespace tfc::ast

#endif // TFC_FRONTEND_AST_H
