//===- Elaborator.cpp - AST to tfc dialect (MLIRGen) ----------------------===//
//
// Statements, expressions, blocks and entry points. The tensor builtins live
// in Builtins.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontend/ElaboratorImpl.h"
#include "ir/TfcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

#include <sys/resource.h>

using namespace tfc;
using llvm::dyn_cast;
using llvm::isa;

ElaboratorImpl::ElaboratorImpl(mlir::MLIRContext &context,
                               DiagnosticEngine &diags,
                               const ElaborateOptions &options)
    : context(context), diags(diags), options(options), builder(&context) {}

//===----------------------------------------------------------------------===//
// Scopes
//===----------------------------------------------------------------------===//

const Value *ElaboratorImpl::lookup(const std::string &name) const {
  if (!frames.empty()) {
    const Frame &frame = frames.back();
    for (auto it = frame.scopes.rbegin(); it != frame.scopes.rend(); ++it) {
      auto found = it->names.find(name);
      if (found != it->names.end())
        return &found->second;
    }
  }
  if (auto dim = entryDimNames.find(name); dim != entryDimNames.end())
    return &dim->second;
  auto found = config.find(name);
  if (found != config.end())
    return &found->second;
  return nullptr;
}

void ElaboratorImpl::assign(const std::string &name, Value value) {
  // Assignment updates the innermost enclosing binding of the frame, which
  // is how a loop carries `x` from one layer to the next.
  Frame &frame = frames.back();
  for (auto it = frame.scopes.rbegin(); it != frame.scopes.rend(); ++it) {
    auto found = it->names.find(name);
    if (found != it->names.end()) {
      found->second = std::move(value);
      return;
    }
  }
  frame.scopes.back().names[name] = std::move(value);
}

void ElaboratorImpl::define(const std::string &name, Value value) {
  frames.back().scopes.back().names[name] = std::move(value);
}

bool ElaboratorImpl::step(SourceLoc at) { return charge(1, at); }

bool ElaboratorImpl::charge(int64_t work, SourceLoc at) {
  if (exhausted)
    return false;
  steps += work;
  if (steps > ElaborationLimits::maxSteps ||
      numOps > ElaborationLimits::maxOps) {
    exhausted = true;
    diags.error(at, "model is too large to elaborate (more than " +
                        std::to_string(ElaborationLimits::maxSteps) +
                        " evaluation steps or " +
                        std::to_string(ElaborationLimits::maxOps) + " ops)");
    return false;
  }
  return true;
}

bool ElaboratorImpl::enterEval(SourceLoc at) {
  // The stack grows down on every platform tfc runs on; measure both ways
  // all the same.
  auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  size_t used = here < stackBase ? stackBase - here : here - stackBase;
  if (used <= stackBudget)
    return true;
  if (!evalTooDeep) {
    evalTooDeep = true;
    diags.error(at, "expressions, statements and block calls are nested too "
                    "deeply (is a block recursive?)");
  }
  // Everything still being evaluated would fail the same way.
  exhausted = true;
  return false;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

ElaboratorImpl::Flow ElaboratorImpl::execBody(const ast::Body &body) {
  Flow result = Flow::Normal;
  for (const ast::StmtPtr &stmt : body) {
    if (exhausted || diags.tooManyErrors())
      return Flow::Failed;
    Flow flow = execStmt(*stmt);
    if (flow == Flow::Returned)
      return flow;
    if (flow == Flow::Failed)
      result = Flow::Failed; // keep going to report later errors too
  }
  return result;
}

ElaboratorImpl::Flow ElaboratorImpl::execStmt(const ast::Stmt &stmt) {
  if (!step(stmt.getLoc()) || !enterEval(stmt.getLoc()))
    return Flow::Failed;

  if (auto *assignStmt = dyn_cast<ast::AssignStmt>(&stmt))
    return execAssign(*assignStmt);
  if (auto *paramStmt = dyn_cast<ast::ParamStmt>(&stmt))
    return execParam(*paramStmt);
  if (auto *forStmt = dyn_cast<ast::ForStmt>(&stmt))
    return execFor(*forStmt);
  if (auto *ifStmt = dyn_cast<ast::IfStmt>(&stmt))
    return execIf(*ifStmt);
  if (auto *returnStmt = dyn_cast<ast::ReturnStmt>(&stmt))
    return execReturn(*returnStmt);
  if (auto *assertStmt = dyn_cast<ast::AssertStmt>(&stmt))
    return execAssert(*assertStmt);
  return Flow::Failed;
}

ElaboratorImpl::Flow
ElaboratorImpl::execAssign(const ast::AssignStmt &assignStmt) {
  MaybeValue value = eval(*assignStmt.value);
  if (!value) {
    for (const auto &target : assignStmt.targets)
      assign(target.name, Value::none()); // poison: no cascading errors
    return Flow::Failed;
  }
  if (assignStmt.targets.size() == 1) {
    assign(assignStmt.targets[0].name, *value);
    return Flow::Normal;
  }
  if (!value->is(Value::Kind::List) ||
      value->getList().size() != assignStmt.targets.size()) {
    std::string found =
        value->is(Value::Kind::List)
            ? std::to_string(value->getList().size()) + " values"
            : "a " + value->describe();
    diags.error(assignStmt.getLoc(),
                "cannot unpack " + found + " into " +
                    std::to_string(assignStmt.targets.size()) + " names");
    for (const auto &target : assignStmt.targets)
      assign(target.name, Value::none());
    return Flow::Failed;
  }
  for (size_t i = 0; i < assignStmt.targets.size(); ++i)
    assign(assignStmt.targets[i].name, value->getList()[i]);
  return Flow::Normal;
}

ElaboratorImpl::Flow
ElaboratorImpl::execParam(const ast::ParamStmt &paramStmt) {
  auto fail = [&] {
    assign(paramStmt.name, Value::none());
    return Flow::Failed;
  };
  MaybeValue nameValue = eval(*paramStmt.checkpointName);
  if (!nameValue)
    return fail();
  if (!nameValue->is(Value::Kind::Str)) {
    diags.error(paramStmt.checkpointName->getLoc(),
                "a parameter's checkpoint name must be a string, got " +
                    nameValue->describe());
    return fail();
  }
  const std::string &name = nameValue->getStr();
  if (name.empty()) {
    diags.error(paramStmt.checkpointName->getLoc(), "empty checkpoint name");
    return fail();
  }
  const std::string &dtype = paramStmt.type.dtype;
  if (dtype != "f32" && dtype != "f16" && dtype != "bf16") {
    diags.error(paramStmt.type.loc,
                "parameters are stored as f32, f16 or bf16, not " + dtype);
    return fail();
  }
  std::vector<int64_t> shape;
  SymShape symShape;
  if (!evalParamShape(paramStmt, shape, symShape) ||
      !declareParam(paramStmt, name, shape, symShape))
    return fail();
  // One tfc.param per checkpoint tensor per entry: tied weights share it.
  mlir::Value value;
  auto existing = paramValues.find(name);
  if (existing != paramValues.end()) {
    value = existing->second;
  } else {
    std::optional<mlir::Location> at = opLocation(paramStmt.getLoc());
    if (!at)
      return fail();
    value = builder.create<mlir::tfc::ParamOp>(
        *at, tensorType("f32", symShape), name)->getResult(0);
    paramValues[name] = value;
  }
  TensorValue tensor{value, "f32", symShape, paramStmt.getLoc(),
                     "`" + paramStmt.name + "`"};
  assign(paramStmt.name, Value::ofTensor(tensor));
  return Flow::Normal;
}

bool ElaboratorImpl::evalParamShape(const ast::ParamStmt &paramStmt,
                                    std::vector<int64_t> &shape,
                                    SymShape &symShape) {
  const std::string &dtype = paramStmt.type.dtype;
  for (const ast::ExprPtr &dimExpr : paramStmt.type.dims) {
    MaybeValue dim = eval(*dimExpr);
    if (!dim)
      return false;
    if (!dim->is(Value::Kind::Int)) {
      diags.error(dimExpr->getLoc(),
                  "parameter dimensions must be static ints, got " +
                      dim->describe());
      return false;
    }
    if (dim->getInt() <= 0 || dim->getInt() > ElaborationLimits::maxDimSize) {
      diags.error(dimExpr->getLoc(), "parameter dimension must be positive "
                                     "and at most 2^40, got " +
                                         dim->str());
      return false;
    }
    shape.push_back(dim->getInt());
    symShape.push_back(SymDim::of(dim->getInt()));
  }
  if (shape.size() > ElaborationLimits::maxRank) {
    diags.error(paramStmt.type.loc,
                "tensors have at most " +
                    std::to_string(ElaborationLimits::maxRank) + " dimensions");
    return false;
  }
  return checkShape(dtype, symShape, paramStmt.type.loc,
                    "parameter '" + paramStmt.name + "'");
}

bool ElaboratorImpl::declareParam(const ast::ParamStmt &paramStmt,
                                  const std::string &name,
                                  const std::vector<int64_t> &shape,
                                  const SymShape &symShape) {
  const std::string &dtype = paramStmt.type.dtype;
  auto known = paramIndex.find(name);
  if (known != paramIndex.end()) {
    const ParamEntry &entry = params[known->second];
    if (entry.shape != shape) {
      diags.error(paramStmt.getLoc(),
                  "checkpoint tensor '" + name + "' declared as " +
                      shapeToString(dtype, symShape) + " but earlier as " +
                      shapeToString(entry.dtype, [&] {
                        SymShape s;
                        for (int64_t d : entry.shape)
                          s.push_back(SymDim::of(d));
                        return s;
                      }()));
      diags.note(entry.loc, "earlier declaration is here");
      return false;
    }
    return true;
  }
  ParamEntry entry;
  entry.name = name;
  entry.dtype = dtype;
  entry.shape = shape;
  entry.loc = paramStmt.getLoc();
  paramIndex[name] = params.size();
  params.push_back(std::move(entry));
  return true;
}

ElaboratorImpl::Flow ElaboratorImpl::execFor(const ast::ForStmt &forStmt) {
  MaybeValue lo = eval(*forStmt.lo);
  MaybeValue hi = eval(*forStmt.hi);
  if (!lo || !hi)
    return Flow::Failed;
  if (!lo->is(Value::Kind::Int) || !hi->is(Value::Kind::Int)) {
    diags.error(forStmt.getLoc(), "loop bounds must be ints, got " +
                                      lo->describe() + " .. " + hi->describe());
    return Flow::Failed;
  }
  int64_t trips = 0;
  if (__builtin_sub_overflow(hi->getInt(), lo->getInt(), &trips) ||
      trips > ElaborationLimits::maxLoopTrips) {
    diags.error(forStmt.getLoc(),
                "loop " + lo->str() + " .. " + hi->str() +
                    " is over the limit of " +
                    std::to_string(ElaborationLimits::maxLoopTrips) +
                    " iterations");
    return Flow::Failed;
  }
  Flow result = Flow::Normal;
  for (int64_t i = lo->getInt(); i < hi->getInt(); ++i) {
    frames.back().scopes.emplace_back();
    define(forStmt.var, Value::ofInt(i));
    Flow flow = execBody(forStmt.body);
    frames.back().scopes.pop_back();
    if (flow == Flow::Returned) {
      result = flow;
      break;
    }
    if (flow == Flow::Failed) {
      // The same error would repeat on every iteration.
      result = flow;
      break;
    }
  }
  return result;
}

ElaboratorImpl::Flow ElaboratorImpl::execIf(const ast::IfStmt &ifStmt) {
  MaybeValue cond = eval(*ifStmt.cond);
  if (!cond)
    return Flow::Failed;
  if (!cond->is(Value::Kind::Bool)) {
    diags.error(ifStmt.cond->getLoc(),
                "`if` needs a static bool condition, got " + cond->describe());
    return Flow::Failed;
  }
  frames.back().scopes.emplace_back();
  Flow flow = execBody(cond->getBool() ? ifStmt.thenBody : ifStmt.elseBody);
  frames.back().scopes.pop_back();
  return flow;
}

ElaboratorImpl::Flow
ElaboratorImpl::execReturn(const ast::ReturnStmt &returnStmt) {
  // Collect locally: evaluating a value may call blocks, which return
  // through `returned` themselves.
  std::vector<std::pair<std::string, Value>> results;
  bool ok = true;
  for (const auto &result : returnStmt.values) {
    MaybeValue value = eval(*result.value);
    if (!value) {
      ok = false;
      continue;
    }
    std::string name = result.name;
    if (name.empty())
      if (auto *ident = dyn_cast<ast::IdentExpr>(result.value.get()))
        name = ident->name;
    results.emplace_back(name, *value);
  }
  returned = std::move(results);
  returnLoc = returnStmt.getLoc();
  return ok ? Flow::Returned : Flow::Failed;
}

ElaboratorImpl::Flow
ElaboratorImpl::execAssert(const ast::AssertStmt &assertStmt) {
  MaybeValue cond = eval(*assertStmt.cond);
  if (!cond)
    return Flow::Failed;
  if (!cond->is(Value::Kind::Bool)) {
    diags.error(assertStmt.cond->getLoc(),
                "`assert` needs a static bool condition, got " +
                    cond->describe());
    return Flow::Failed;
  }
  if (cond->getBool())
    return Flow::Normal;
  std::string message = "assertion failed";
  if (assertStmt.message) {
    MaybeValue text = eval(*assertStmt.message);
    if (text)
      message += ": " + text->str();
  }
  diags.error(assertStmt.getLoc(), message);
  return Flow::Failed;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

MaybeValue ElaboratorImpl::eval(const ast::Expr &expr) {
  if (!step(expr.getLoc()) || !enterEval(expr.getLoc()))
    return std::nullopt;
  switch (expr.getKind()) {
  case ast::Expr::Kind::Int:
    return Value::ofInt(llvm::cast<ast::IntExpr>(expr).value);
  case ast::Expr::Kind::Float:
    return Value::ofFloat(llvm::cast<ast::FloatExpr>(expr).value);
  case ast::Expr::Kind::Bool:
    return Value::ofBool(llvm::cast<ast::BoolExpr>(expr).value);
  case ast::Expr::Kind::String:
    return evalString(llvm::cast<ast::StringExpr>(expr));
  case ast::Expr::Kind::Ident: {
    const auto &ident = llvm::cast<ast::IdentExpr>(expr);
    const Value *value = lookup(ident.name);
    if (!value) {
      diags.error(expr.getLoc(), "unknown name '" + ident.name + "'");
      if (frames.size() > 1 && frames.back().block)
        diags.note(frames.back().block->loc,
                   "a block sees its parameters, its own names, the config "
                   "and the dimension names of the entry's inputs; for the "
                   "size of an axis of a tensor, use `dim(x, axis)`");
      return std::nullopt;
    }
    if (value->is(Value::Kind::None))
      return std::nullopt; // poisoned by an earlier error
    if (value->isTensor()) {
      // Name the tensor after the variable for later messages, but keep
      // where it was produced.
      TensorValue tensor = value->getTensor();
      tensor.description = "`" + ident.name + "`";
      return Value::ofTensor(std::move(tensor));
    }
    return *value;
  }
  case ast::Expr::Kind::List: {
    const auto &list = llvm::cast<ast::ListExpr>(expr);
    std::vector<Value> elements;
    for (const ast::ExprPtr &element : list.elements) {
      MaybeValue value = eval(*element);
      if (!value)
        return std::nullopt;
      elements.push_back(std::move(*value));
    }
    Value result = Value::ofList(std::move(elements));
    if (result.getListDepth() > ElaborationLimits::maxListDepth) {
      diags.error(expr.getLoc(),
                  "lists nested more than " +
                      std::to_string(ElaborationLimits::maxListDepth) +
                      " deep");
      return std::nullopt;
    }
    return result;
  }
  case ast::Expr::Kind::Unary:
    return evalUnary(llvm::cast<ast::UnaryExpr>(expr));
  case ast::Expr::Kind::Binary:
    return evalBinary(llvm::cast<ast::BinaryExpr>(expr));
  case ast::Expr::Kind::Call:
    return evalCall(llvm::cast<ast::CallExpr>(expr));
  case ast::Expr::Kind::Index:
    return evalIndex(llvm::cast<ast::IndexExpr>(expr));
  }
  return std::nullopt;
}

MaybeValue ElaboratorImpl::evalString(const ast::StringExpr &expr) {
  std::string out;
  for (const auto &piece : expr.pieces) {
    if (!piece.hole) {
      out += piece.text;
    } else {
      MaybeValue value = eval(*piece.hole);
      if (!value)
        return std::nullopt;
      if (value->isTensor() || value->is(Value::Kind::List)) {
        diags.error(piece.hole->getLoc(),
                    "cannot put a " + value->describe() + " in a string");
        return std::nullopt;
      }
      out += value->str();
    }
    if (out.size() > ElaborationLimits::maxStringSize) {
      diags.error(expr.getLoc(), "string is longer than 65536 characters");
      return std::nullopt;
    }
    if (!charge(static_cast<int64_t>(out.size() / 64), expr.getLoc()))
      return std::nullopt;
  }
  return Value::ofStr(std::move(out));
}

MaybeValue ElaboratorImpl::evalUnary(const ast::UnaryExpr &expr) {
  MaybeValue operand = eval(*expr.operand);
  if (!operand)
    return std::nullopt;
  if (expr.op == ast::UnaryOp::Not) {
    if (operand->is(Value::Kind::Bool))
      return Value::ofBool(!operand->getBool());
    if (operand->isTensor() && operand->getTensor().dtype == "bool")
      return unaryOp(buildUnary<mlir::tfc::NotOp>, operand->getTensor(),
                     expr.getLoc(), "not");
    diags.error(expr.getLoc(),
                "`not` needs a bool or a bool tensor, got " +
                    operand->describe());
    return std::nullopt;
  }
  // Negation.
  switch (operand->getKind()) {
  case Value::Kind::Int:
    if (operand->getInt() == INT64_MIN) {
      diags.error(expr.getLoc(), "integer overflow in negation");
      return std::nullopt;
    }
    return Value::ofInt(-operand->getInt());
  case Value::Kind::Float:
    return Value::ofFloat(-operand->getFloat());
  case Value::Kind::Dim: {
    SymDim dim = operand->getDim();
    bool overflow = __builtin_sub_overflow(int64_t(0), dim.constant,
                                           &dim.constant);
    for (auto &term : dim.terms)
      overflow |= __builtin_sub_overflow(int64_t(0), term.second, &term.second);
    if (overflow) {
      diags.error(expr.getLoc(), "integer overflow in negation");
      return std::nullopt;
    }
    return Value::ofDim(dim);
  }
  case Value::Kind::Tensor:
    if (operand->getTensor().dtype == "bool") {
      diags.error(expr.getLoc(), "cannot negate a bool tensor");
      return std::nullopt;
    }
    return unaryOp(buildUnary<mlir::tfc::NegOp>, operand->getTensor(),
                   expr.getLoc(), "-");
  default:
    diags.error(expr.getLoc(), "cannot negate a " + operand->describe());
    return std::nullopt;
  }
}

static bool checkedArith(ast::BinaryOp op, int64_t a, int64_t b,
                         int64_t &out) {
  switch (op) {
  case ast::BinaryOp::Add:
    return !__builtin_add_overflow(a, b, &out);
  case ast::BinaryOp::Sub:
    return !__builtin_sub_overflow(a, b, &out);
  case ast::BinaryOp::Mul:
    return !__builtin_mul_overflow(a, b, &out);
  default:
    return false;
  }
}

MaybeValue ElaboratorImpl::evalStaticBinary(ast::BinaryOp op, const Value &lhs,
                                            const Value &rhs, SourceLoc at) {
  using K = Value::Kind;
  using B = ast::BinaryOp;
  switch (op) {
  case B::And:
  case B::Or:
    if (!lhs.is(K::Bool) || !rhs.is(K::Bool))
      return badStaticOperands(op, lhs, rhs, at);
    return Value::ofBool(op == B::And ? lhs.getBool() && rhs.getBool()
                                      : lhs.getBool() || rhs.getBool());
  case B::Eq:
  case B::Ne:
  case B::Lt:
  case B::Le:
  case B::Gt:
  case B::Ge:
    return staticCompare(op, lhs, rhs, at);
  case B::Pow:
    return staticPow(lhs, rhs, at);
  default:
    break;
  }
  if (op == B::Add && ((lhs.is(K::Str) && rhs.is(K::Str)) ||
                       (lhs.is(K::List) && rhs.is(K::List))))
    return staticJoin(lhs, rhs, at);
  if (lhs.is(K::Int) && rhs.is(K::Int))
    return staticIntArith(op, lhs.getInt(), rhs.getInt(), at);
  if (lhs.isNumber() && rhs.isNumber())
    return staticFloatArith(op, lhs.asDouble(), rhs.asDouble(), at);
  std::optional<SymDim> a = lhs.asDim(), b = rhs.asDim();
  if (a && b)
    return staticDimArith(op, *a, *b, at);
  return badStaticOperands(op, lhs, rhs, at);
}

MaybeValue ElaboratorImpl::badStaticOperands(ast::BinaryOp op, const Value &lhs,
                                             const Value &rhs, SourceLoc at) {
  diags.error(at, std::string("cannot apply `") + ast::spelling(op) + "` to " +
                      lhs.describe() + " and " + rhs.describe());
  return std::nullopt;
}

MaybeValue ElaboratorImpl::staticCompare(ast::BinaryOp op, const Value &lhs,
                                         const Value &rhs, SourceLoc at) {
  using K = Value::Kind;
  using B = ast::BinaryOp;
  // Equality on any matching static kinds.
  if (op == B::Eq || op == B::Ne) {
    if (lhs.is(K::Str) && rhs.is(K::Str) &&
        !charge(static_cast<int64_t>(lhs.getStr().size() / 64), at))
      return std::nullopt;
    bool equal;
    if (lhs.isNumber() && rhs.isNumber())
      equal = lhs.asDouble() == rhs.asDouble();
    else if (lhs.asDim() && rhs.asDim())
      equal = *lhs.asDim() == *rhs.asDim();
    else if (lhs.getKind() == rhs.getKind() &&
             (lhs.is(K::Bool) || lhs.is(K::Str) || lhs.is(K::Enum)))
      equal = lhs.is(K::Bool) ? lhs.getBool() == rhs.getBool()
                              : lhs.getStr() == rhs.getStr();
    else
      return badStaticOperands(op, lhs, rhs, at);
    return Value::ofBool(op == B::Eq ? equal : !equal);
  }
  if (!lhs.isNumber() || !rhs.isNumber())
    return badStaticOperands(op, lhs, rhs, at);
  double a = lhs.asDouble(), b = rhs.asDouble();
  bool result = op == B::Lt   ? a < b
                : op == B::Le ? a <= b
                : op == B::Gt ? a > b
                              : a >= b;
  if (lhs.is(K::Int) && rhs.is(K::Int)) {
    int64_t x = lhs.getInt(), y = rhs.getInt();
    result = op == B::Lt   ? x < y
             : op == B::Le ? x <= y
             : op == B::Gt ? x > y
                           : x >= y;
  }
  return Value::ofBool(result);
}

MaybeValue ElaboratorImpl::staticJoin(const Value &lhs, const Value &rhs,
                                      SourceLoc at) {
  if (lhs.is(Value::Kind::Str)) {
    size_t size = lhs.getStr().size() + rhs.getStr().size();
    if (size > ElaborationLimits::maxStringSize) {
      diags.error(at, "string is longer than 65536 characters");
      return std::nullopt;
    }
    // Copying is work too: a loop joining long strings must reach the
    // step limit, not run for minutes.
    if (!charge(static_cast<int64_t>(size / 64), at))
      return std::nullopt;
    return Value::ofStr(lhs.getStr() + rhs.getStr());
  }
  size_t size = lhs.getList().size() + rhs.getList().size();
  if (size > ElaborationLimits::maxListSize) {
    diags.error(at, "list is longer than the limit of 2^20 elements");
    return std::nullopt;
  }
  if (!charge(static_cast<int64_t>(size), at))
    return std::nullopt;
  std::vector<Value> joined = lhs.getList();
  joined.insert(joined.end(), rhs.getList().begin(), rhs.getList().end());
  return Value::ofList(std::move(joined));
}

MaybeValue ElaboratorImpl::staticIntArith(ast::BinaryOp op, int64_t a,
                                          int64_t b, SourceLoc at) {
  using B = ast::BinaryOp;
  if (op == B::Div || op == B::Mod) {
    if (b == 0) {
      diags.error(at, "division by zero");
      return std::nullopt;
    }
    if (a == INT64_MIN && b == -1) {
      diags.error(at, "integer overflow");
      return std::nullopt;
    }
    if (op == B::Mod)
      return Value::ofInt(a % b);
    if (a % b != 0) {
      diags.error(at, std::to_string(a) + " / " + std::to_string(b) +
                          " is not an exact integer division (write "
                          "`1.0 * a / b` for a float)");
      return std::nullopt;
    }
    return Value::ofInt(a / b);
  }
  if (op == B::MatMul)
    return badStaticOperands(op, Value::ofInt(a), Value::ofInt(b), at);
  int64_t out = 0;
  if (!checkedArith(op, a, b, out)) {
    diags.error(at,
                std::string("integer overflow in `") + ast::spelling(op) + "`");
    return std::nullopt;
  }
  return Value::ofInt(out);
}

MaybeValue ElaboratorImpl::staticFloatArith(ast::BinaryOp op, double a,
                                            double b, SourceLoc at) {
  using B = ast::BinaryOp;
  switch (op) {
  case B::Add:
    return Value::ofFloat(a + b);
  case B::Sub:
    return Value::ofFloat(a - b);
  case B::Mul:
    return Value::ofFloat(a * b);
  case B::Div:
  case B::Mod:
    if (b == 0) {
      diags.error(at, "division by zero");
      return std::nullopt;
    }
    return Value::ofFloat(op == B::Div ? a / b : std::fmod(a, b));
  default:
    return badStaticOperands(op, Value::ofFloat(a), Value::ofFloat(b), at);
  }
}

MaybeValue ElaboratorImpl::staticPow(const Value &lhs, const Value &rhs,
                                     SourceLoc at) {
  if (!lhs.isNumber() || !rhs.isNumber())
    return badStaticOperands(ast::BinaryOp::Pow, lhs, rhs, at);
  // An int to a non-negative int power stays an int, as in Python.
  if (lhs.is(Value::Kind::Int) && rhs.is(Value::Kind::Int) &&
      rhs.getInt() >= 0) {
    int64_t base = lhs.getInt(), exponent = rhs.getInt(), out = 1;
    bool overflow = false;
    for (; exponent > 0 && !overflow; exponent >>= 1) {
      if (exponent & 1)
        overflow |= __builtin_mul_overflow(out, base, &out);
      if (exponent > 1)
        overflow |= __builtin_mul_overflow(base, base, &base);
    }
    if (overflow) {
      diags.error(at, "integer overflow in `" + lhs.str() + " ** " + rhs.str() +
                          "`");
      return std::nullopt;
    }
    return Value::ofInt(out);
  }
  return staticMath("**", std::pow(lhs.asDouble(), rhs.asDouble()), {lhs, rhs},
                    at);
}

MaybeValue ElaboratorImpl::staticMath(const std::string &what, double result,
                                      llvm::ArrayRef<Value> args,
                                      SourceLoc at) {
  bool finiteArgs = llvm::all_of(
      args, [](const Value &v) { return std::isfinite(v.asDouble()); });
  if (std::isfinite(result) || !finiteArgs)
    return Value::ofFloat(result);
  std::string call = "`" + what + "` of ";
  for (size_t i = 0; i < args.size(); ++i)
    call += (i ? " and " : "") + args[i].str();
  diags.error(at, call + (std::isnan(result)
                              ? " is not a real number"
                              : " is infinite or too large for a float"));
  return std::nullopt;
}

MaybeValue ElaboratorImpl::staticDimArith(ast::BinaryOp op, const SymDim &a,
                                          const SymDim &b, SourceLoc at) {
  using B = ast::BinaryOp;
  std::string spelled = ast::spelling(op);
  // Dimension arithmetic: sums of symbols with integer coefficients.
  SymDim out;
  auto overflow = [&]() -> MaybeValue {
    diags.error(at, "integer overflow in `" + spelled + "` of dimensions " +
                        a.str() + " and " + b.str());
    return std::nullopt;
  };
  if (op == B::Add || op == B::Sub) {
    out = a;
    if (!checkedArith(op, a.constant, b.constant, out.constant))
      return overflow();
    for (const auto &[name, coeff] : b.terms) {
      int64_t &sum = out.terms[name];
      if (!checkedArith(op, sum, coeff, sum))
        return overflow();
      if (sum == 0)
        out.terms.erase(name);
    }
    return Value::ofDim(out);
  }
  if (op == B::Mul && (a.isStatic() || b.isStatic())) {
    const SymDim &sym = a.isStatic() ? b : a;
    int64_t k = a.isStatic() ? a.constant : b.constant;
    if (__builtin_mul_overflow(sym.constant, k, &out.constant))
      return overflow();
    for (const auto &[name, coeff] : sym.terms) {
      int64_t product = 0;
      if (__builtin_mul_overflow(coeff, k, &product))
        return overflow();
      if (product != 0)
        out.terms[name] = product;
    }
    return Value::ofDim(out);
  }
  diags.error(at, "dimension arithmetic supports `+`, `-` and `*` by an "
                  "int; cannot compute " +
                      a.str() + " " + spelled + " " + b.str());
  return std::nullopt;
}

MaybeValue ElaboratorImpl::evalBinary(const ast::BinaryExpr &expr) {
  MaybeValue lhs = eval(*expr.lhs);
  MaybeValue rhs = eval(*expr.rhs);
  if (!lhs || !rhs)
    return std::nullopt;
  if (lhs->isTensor() || rhs->isTensor())
    return tensorBinary(expr.op, *lhs, *rhs, expr.getLoc());
  return evalStaticBinary(expr.op, *lhs, *rhs, expr.getLoc());
}

MaybeValue ElaboratorImpl::evalIndex(const ast::IndexExpr &expr) {
  MaybeValue base = eval(*expr.base);
  if (!base)
    return std::nullopt;
  if (base->isTensor())
    return indexTensor(base->getTensor(), expr.subscripts, expr.getLoc());
  if (base->is(Value::Kind::List) || base->is(Value::Kind::Str)) {
    if (expr.subscripts.size() != 1 || expr.subscripts[0].isSlice) {
      diags.error(expr.getLoc(), "a " + base->describe() +
                                     " takes one index, not a slice");
      return std::nullopt;
    }
    MaybeValue index = eval(*expr.subscripts[0].index);
    if (!index)
      return std::nullopt;
    if (!index->is(Value::Kind::Int)) {
      diags.error(expr.subscripts[0].loc,
                  "index must be an int, got " + index->describe());
      return std::nullopt;
    }
    int64_t size = base->is(Value::Kind::List)
                       ? static_cast<int64_t>(base->getList().size())
                       : static_cast<int64_t>(base->getStr().size());
    int64_t i = index->getInt();
    if (i < 0 && i >= -size)
      i += size;
    if (i < 0 || i >= size) {
      diags.error(expr.subscripts[0].loc,
                  "index " + std::to_string(index->getInt()) +
                      " is out of range for a " + base->describe() +
                      " of length " + std::to_string(size));
      return std::nullopt;
    }
    if (base->is(Value::Kind::List))
      return base->getList()[i];
    return Value::ofStr(std::string(1, base->getStr()[i]));
  }
  diags.error(expr.getLoc(), "cannot index a " + base->describe());
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

MaybeValue ElaboratorImpl::evalArg(const ast::Expr &expr) {
  auto pre = preEvaluated.find(&expr);
  if (pre != preEvaluated.end())
    return pre->second;
  // In argument position an unknown bare name is an enum symbol, so that
  // `activation(x, gelu_tanh)` and `cast(mask, f32)` read naturally.
  if (auto *ident = dyn_cast<ast::IdentExpr>(&expr))
    if (!lookup(ident->name))
      return Value::ofEnum(ident->name);
  return eval(expr);
}

std::optional<std::vector<Value>>
ElaboratorImpl::bindArgs(const ast::CallExpr &call,
                         const std::vector<ArgSpec> &specs) {
  std::vector<std::optional<Value>> bound(specs.size());
  bool ok = true;
  size_t positional = 0;
  for (const ast::Argument &arg : call.args) {
    size_t slot;
    if (arg.name.empty()) {
      slot = positional++;
      if (slot >= specs.size()) {
        diags.error(arg.loc, "too many arguments to `" + call.callee +
                                 "`: it takes " +
                                 std::to_string(specs.size()));
        ok = false;
        continue;
      }
    } else {
      auto it = std::find_if(specs.begin(), specs.end(),
                             [&](const ArgSpec &s) { return s.name == arg.name; });
      if (it == specs.end()) {
        diags.error(arg.loc, "`" + call.callee + "` has no parameter named '" +
                                 arg.name + "'");
        ok = false;
        continue;
      }
      slot = static_cast<size_t>(it - specs.begin());
    }
    if (bound[slot]) {
      diags.error(arg.loc, "parameter '" + specs[slot].name + "' of `" +
                               call.callee + "` is given twice");
      ok = false;
      continue;
    }
    MaybeValue value = evalArg(*arg.value);
    if (!value) {
      ok = false;
      bound[slot] = Value::none();
      continue;
    }
    bound[slot] = std::move(*value);
  }
  if (!ok)
    return std::nullopt;
  std::vector<Value> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (bound[i]) {
      out.push_back(*bound[i]);
    } else if (specs[i].defaultValue) {
      out.push_back(*specs[i].defaultValue);
    } else {
      diags.error(call.getLoc(), "missing argument '" + specs[i].name +
                                     "' in call to `" + call.callee + "`");
      return std::nullopt;
    }
  }
  return out;
}

MaybeValue ElaboratorImpl::evalCall(const ast::CallExpr &call) {
  auto blockIt = blocks.find(call.callee);
  if (blockIt != blocks.end())
    return callBlock(*blockIt->second, call);
  bool found = false;
  MaybeValue result = callStaticFunction(call, found);
  if (found)
    return result;
  result = callBuiltin(call, found);
  preEvaluated.clear();
  if (found)
    return result;
  diags.error(call.getLoc(), "unknown function or block `" + call.callee + "`");
  return std::nullopt;
}

bool ElaboratorImpl::checkDimValue(const std::string &name, int64_t bound,
                                   SourceLoc declaredAt) {
  auto value = options.dimValues.find(name);
  if (value == options.dimValues.end() || value->second <= bound)
    return true;
  diags.error(declaredAt, name + " = " + std::to_string(value->second) +
                              " exceeds its bound " + std::to_string(bound) +
                              " (dim " + name + " <= " +
                              std::to_string(bound) + ")");
  return false;
}

void ElaboratorImpl::checkDimNames() {
  for (const auto &[name, value] : options.dimValues) {
    if (symbolicDims.count(name))
      continue;
    std::string known;
    for (const std::string &dim : symbolicDims)
      known += (known.empty() ? "" : ", ") + dim;
    diags.error(SourceLoc{}, "--dim " + name + "=" + std::to_string(value) +
                                 ": the model has no symbolic dimension '" +
                                 name + "' (it has: " +
                                 (known.empty() ? "none" : known) + ")");
  }
}

bool ElaboratorImpl::inPrelude(SourceLoc at) const {
  return at.isValid() && diags.getSources().getName(at.fileId) == kPreludeFileName;
}

std::vector<Diagnostic> ElaboratorImpl::callChain() const {
  constexpr size_t maxNotes = 8;
  std::vector<Diagnostic> notes;
  size_t calls = 0;
  for (auto frame = frames.rbegin(); frame != frames.rend(); ++frame) {
    if (!frame->block)
      continue;
    if (++calls > maxNotes)
      continue;
    const ast::BlockDecl &block = *frame->block;
    notes.push_back({Severity::Note, frame->callLoc,
                     std::string("in call to ") +
                         (inPrelude(block.loc) ? "the prelude's " : "") +
                         "block `" + block.name + "`"});
  }
  if (calls > maxNotes)
    notes.back().message += " (and " + std::to_string(calls - maxNotes) +
                            " more calls further out)";
  return notes;
}

MaybeValue ElaboratorImpl::callBlock(const ast::BlockDecl &block,
                                     const ast::CallExpr &call) {
  if (frames.size() > ElaborationLimits::maxCallDepth) {
    diags.error(call.getLoc(), "blocks nested more than " +
                                   std::to_string(
                                       ElaborationLimits::maxCallDepth) +
                                   " calls deep (is `" + block.name +
                                   "` recursive?)");
    return std::nullopt;
  }
  // Defaults are evaluated in the caller's context (they may name config).
  std::vector<ArgSpec> specs;
  for (const ast::ParamDecl &param : block.params) {
    ArgSpec spec{param.name, std::nullopt};
    if (param.defaultValue) {
      MaybeValue value = evalArg(*param.defaultValue);
      if (!value)
        return std::nullopt;
      spec.defaultValue = *value;
    }
    specs.push_back(std::move(spec));
  }
  std::optional<std::vector<Value>> args = bindArgs(call, specs);
  if (!args)
    return std::nullopt;

  // Check declared kinds so a misuse points at the call, not deep inside.
  for (size_t i = 0; i < block.params.size(); ++i) {
    const ast::ParamDecl &param = block.params[i];
    const Value &arg = (*args)[i];
    if (arg.is(Value::Kind::None))
      return std::nullopt;
    std::string kind = param.kind.empty() ? "tensor" : param.kind;
    bool matches =
        (kind == "tensor" && arg.isTensor()) ||
        (kind == "int" && arg.is(Value::Kind::Int)) ||
        (kind == "float" && arg.isNumber()) ||
        (kind == "bool" && arg.is(Value::Kind::Bool)) ||
        (kind == "str" && arg.is(Value::Kind::Str)) ||
        (kind == "enum" && arg.is(Value::Kind::Enum)) ||
        (kind == "list" && arg.is(Value::Kind::List)) ||
        (kind == "dim" && arg.asDim().has_value()) || kind == "any";
    if (!matches) {
      diags.error(call.getLoc(), "argument '" + param.name + "' of `" +
                                     block.name + "` must be " + kind +
                                     ", got " + arg.describe());
      diags.note(param.loc, "parameter declared here");
      return std::nullopt;
    }
  }

  mlir::Location callSite = loc(call.getLoc());
  if (!frames.empty() && frames.back().callSite)
    callSite = mlir::CallSiteLoc::get(callSite, *frames.back().callSite);
  frames.push_back(Frame{{Scope{}}, callSite, &block, call.getLoc()});
  for (size_t i = 0; i < block.params.size(); ++i) {
    Value arg = (*args)[i];
    if (block.params[i].kind == "float" && arg.is(Value::Kind::Int))
      arg = Value::ofFloat(static_cast<double>(arg.getInt()));
    define(block.params[i].name, std::move(arg));
  }
  returned.clear();
  Flow flow = execBody(block.body);
  std::vector<std::pair<std::string, Value>> results = std::move(returned);
  returned.clear();
  frames.pop_back();
  if (flow == Flow::Failed)
    return std::nullopt;
  if (flow != Flow::Returned || results.empty()) {
    // A call is always used as a value, and `nothing` would read as a value
    // poisoned by an earlier error: the entry would vanish without one.
    diags.error(call.getLoc(), "block `" + block.name +
                                   "` returns nothing: it ends without "
                                   "`return`");
    diags.note(block.loc, "`" + block.name + "` is defined here");
    return std::nullopt;
  }
  if (results.size() == 1)
    return results[0].second;
  std::vector<Value> values;
  for (auto &result : results)
    values.push_back(std::move(result.second));
  Value list = Value::ofList(std::move(values));
  if (list.getListDepth() > ElaborationLimits::maxListDepth) {
    diags.error(call.getLoc(),
                "lists nested more than " +
                    std::to_string(ElaborationLimits::maxListDepth) + " deep");
    return std::nullopt;
  }
  return list;
}

namespace {

using MathFn = double (*)(double);

/// Static functions of one number whose result is a float.
const std::map<std::string, MathFn> &staticFloatFunctions() {
  static const std::map<std::string, MathFn> functions = {
      {"exp", [](double x) { return std::exp(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
      {"sin", [](double x) { return std::sin(x); }},
      {"cos", [](double x) { return std::cos(x); }},
      {"tan", [](double x) { return std::tan(x); }},
      {"tanh", [](double x) { return std::tanh(x); }},
  };
  return functions;
}

/// Every static function and how many arguments it takes.
const std::map<std::string, size_t> &staticFunctionArity() {
  static const std::map<std::string, size_t> arity = [] {
    std::map<std::string, size_t> a = {
        {"float", 1}, {"int", 1}, {"len", 1}, {"floor", 1}, {"ceil", 1},
        {"round", 1}, {"abs", 1}, {"min", 2}, {"max", 2},   {"pow", 2},
    };
    for (const auto &entry : staticFloatFunctions())
      a.emplace(entry.first, 1);
    return a;
  }();
  return arity;
}

} // namespace

std::vector<std::string> tfc::staticFunctionNames() {
  std::vector<std::string> names;
  for (const auto &entry : staticFunctionArity())
    names.push_back(entry.first);
  return names;
}

/// Functions on static values (see staticFunctionArity). With a tensor
/// argument, the tensor builtin of the same name (if any) is called instead.
MaybeValue ElaboratorImpl::callStaticFunction(const ast::CallExpr &call,
                                              bool &found) {
  found = false;
  auto arity = staticFunctionArity().find(call.callee);
  if (arity == staticFunctionArity().end())
    return std::nullopt;
  // min/max/sqrt on a tensor are tensor ops (reductions, elementwise).
  if (call.args.empty())
    return std::nullopt;
  // Keyword arguments (`max(x, axis=1)`) only exist on the tensor builtins.
  for (const ast::Argument &arg : call.args)
    if (!arg.name.empty())
      return std::nullopt;
  std::vector<Value> args;
  for (const ast::Argument &arg : call.args) {
    MaybeValue value = eval(*arg.value);
    if (!value) {
      found = true;
      return std::nullopt;
    }
    args.push_back(std::move(*value));
  }
  // A tensor operand makes this the tensor builtin of the same name; hand it
  // the values already computed so no op is built twice.
  if (std::any_of(args.begin(), args.end(),
                  [](const Value &v) { return v.isTensor(); })) {
    for (size_t i = 0; i < args.size(); ++i)
      preEvaluated[call.args[i].value.get()] = args[i];
    return std::nullopt;
  }
  found = true;
  if (args.size() != arity->second) {
    diags.error(call.getLoc(),
                "`" + call.callee + "` takes " + std::to_string(arity->second) +
                    " argument(s), got " + std::to_string(args.size()));
    return std::nullopt;
  }
  return applyStaticFunction(call.callee, args, call.getLoc());
}

MaybeValue ElaboratorImpl::applyStaticFunction(const std::string &f,
                                               const std::vector<Value> &args,
                                               SourceLoc at) {
  using K = Value::Kind;
  const Value &x = args[0];
  auto math = staticFloatFunctions().find(f);
  if (math != staticFloatFunctions().end() && x.isNumber())
    return staticMath(f, math->second(x.asDouble()), args, at);
  if (f == "len" && x.is(K::List))
    return Value::ofInt(static_cast<int64_t>(x.getList().size()));
  if (f == "len" && x.is(K::Str))
    return Value::ofInt(static_cast<int64_t>(x.getStr().size()));
  if (f == "float" && x.isNumber())
    return Value::ofFloat(x.asDouble());
  if (f == "abs" && x.is(K::Int)) {
    if (x.getInt() == INT64_MIN) {
      diags.error(at, "integer overflow in `abs`");
      return std::nullopt;
    }
    return Value::ofInt(x.getInt() < 0 ? -x.getInt() : x.getInt());
  }
  if (f == "abs" && x.is(K::Float))
    return Value::ofFloat(std::fabs(x.getFloat()));
  if (f == "pow")
    return staticPow(x, args[1], at);
  if ((f == "int" || f == "floor" || f == "ceil" || f == "round") &&
      x.isNumber())
    return staticToInt(f, x, at);
  if ((f == "min" || f == "max") && x.isNumber() && args[1].isNumber()) {
    bool pickFirst = f == "min" ? x.asDouble() <= args[1].asDouble()
                                : x.asDouble() >= args[1].asDouble();
    if (x.is(K::Int) && args[1].is(K::Int))
      return pickFirst ? x : args[1];
    return Value::ofFloat(pickFirst ? x.asDouble() : args[1].asDouble());
  }
  diags.error(at, "`" + f + "` cannot take " + x.describe());
  return std::nullopt;
}

MaybeValue ElaboratorImpl::staticToInt(const std::string &f, const Value &x,
                                       SourceLoc at) {
  if (x.is(Value::Kind::Int))
    return x;
  double value = x.getFloat();
  value = f == "floor"   ? std::floor(value)
          : f == "ceil"  ? std::ceil(value)
          : f == "round" ? std::nearbyint(value) // half to even, as Python
                         : std::trunc(value);
  // -2^63 <= value < 2^63, the doubles that truncate into an int64.
  if (!std::isfinite(value) || value < -9223372036854775808.0 ||
      value >= 9223372036854775808.0) {
    diags.error(at, "`" + f + "` of " + x.str() +
                        ": the value is out of range (ints are 64-bit)");
    return std::nullopt;
  }
  return Value::ofInt(static_cast<int64_t>(value));
}

//===----------------------------------------------------------------------===//
// Entries and the module
//===----------------------------------------------------------------------===//

ElaboratedModel
ElaboratorImpl::run(const std::vector<const ast::Module *> &modules) {
  ElaboratedModel result;
  const ast::Module *main = modules.empty() ? nullptr : modules.back();
  if (!main)
    return result;
  // Here, not in a callee: nested evaluation is measured from run's frame.
  stackBase = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  stackBudget = ElaborationLimits::maxStackBytes;
  struct rlimit limit;
  if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    stackBudget = std::min<size_t>(stackBudget, limit.rlim_cur / 2);
  // An error inside a block names the calls that led there (a block
  // called once per layer reports an error once, from its first call).
  diags.setContext([this] { return callChain(); });
  auto noContext = llvm::make_scope_exit([&] { diags.setContext({}); });
  mlir::Location moduleLoc = loc(main->modelLoc);
  result.module = mlir::ModuleOp::create(moduleLoc);
  result.modelName = main->modelName.value_or("");
  frames.push_back(Frame{{Scope{}}, std::nullopt});

  collectBlocks(modules);
  evalConfig(modules, result);
  bool dimsOk = evalDims(modules);
  result.dimBounds = dimBounds;
  frames.pop_back();
  // Entries specialized to sizes beyond a bound would only fail later with
  // a message about whatever op first notices.
  if (!dimsOk)
    return result;

  for (const ast::EntryDecl *entry : collectEntries(modules, *main)) {
    if (diags.tooManyErrors() || exhausted)
      break;
    elaborateEntry(*entry, result);
  }

  builder.clearInsertionPoint();
  finishModule(*main, result);
  return result;
}

void ElaboratorImpl::collectBlocks(
    const std::vector<const ast::Module *> &modules) {
  // Blocks: later modules may redefine earlier ones (a model overriding a
  // prelude block), but one module may not define a name twice.
  for (const ast::Module *mod : modules) {
    std::map<std::string, const ast::BlockDecl *> local;
    for (const ast::BlockDecl &block : mod->blocks) {
      auto [it, inserted] = local.emplace(block.name, &block);
      if (!inserted) {
        diags.error(block.loc, "block `" + block.name + "` is defined twice");
        diags.note(it->second->loc, "first definition is here");
        continue;
      }
      blocks[block.name] = &block;
    }
  }
}

void ElaboratorImpl::evalConfig(const std::vector<const ast::Module *> &modules,
                                ElaboratedModel &result) {
  // Config: evaluated in order; `--set` overrides replace values.
  // A later file may redefine an earlier file's value (a model file over
  // an imported architecture's defaults); one file may not say it twice.
  for (const ast::Module *mod : modules) {
    std::set<std::string> local;
    for (const ast::ConfigEntry &entry : mod->config) {
      if (!local.insert(entry.name).second) {
        diags.error(entry.loc, "config value '" + entry.name +
                                   "' is defined twice");
        continue;
      }
      auto override = std::find_if(
          options.overrides.begin(), options.overrides.end(),
          [&](const auto &o) { return o.first == entry.name; });
      if (override != options.overrides.end()) {
        config[entry.name] = override->second;
        continue;
      }
      MaybeValue value;
      if (auto *ident = dyn_cast<ast::IdentExpr>(entry.value.get());
          ident && !lookup(ident->name))
        value = Value::ofEnum(ident->name);
      else
        value = eval(*entry.value);
      config[entry.name] = value ? *value : Value::none();
    }
  }
  for (const auto &[key, value] : options.overrides) {
    if (!config.count(key)) {
      std::string known;
      for (const auto &[name, value] : config)
        known += (known.empty() ? "" : ", ") + name;
      diags.error(SourceLoc{}, "--set " + key +
                                   ": the model has no config value '" + key +
                                   "' (it has: " + known + ")");
    }
  }
  std::set<std::string> listed;
  for (const ast::Module *mod : modules)
    for (const ast::ConfigEntry &entry : mod->config)
      if (listed.insert(entry.name).second)
        result.config.emplace_back(entry.name, config[entry.name]);
}

bool ElaboratorImpl::evalDims(const std::vector<const ast::Module *> &modules) {
  // Dimension bounds.
  bool dimsOk = true;
  for (const ast::Module *mod : modules) {
    for (const ast::DimDecl &dim : mod->dims) {
      if (config.count(dim.name)) {
        diags.error(dim.loc, "'" + dim.name +
                                 "' is a config value, not a symbolic dim");
        continue;
      }
      if (!dim.bound)
        continue;
      MaybeValue bound = eval(*dim.bound);
      if (!bound)
        continue;
      if (!bound->is(Value::Kind::Int) || bound->getInt() <= 0) {
        diags.error(dim.bound->getLoc(),
                    "a dim bound must be a positive int, got " + bound->str());
        continue;
      }
      dimBounds[dim.name] = bound->getInt();
      dimsOk = checkDimValue(dim.name, bound->getInt(), dim.loc) && dimsOk;
    }
  }
  return dimsOk;
}

std::vector<const ast::EntryDecl *>
ElaboratorImpl::collectEntries(const std::vector<const ast::Module *> &modules,
                               const ast::Module &main) {
  // Entries may come from imported files (a shared architecture file with
  // one small file of config per model size); a later file's entry of the
  // same name replaces an earlier one.
  std::vector<const ast::EntryDecl *> entries;
  for (const ast::Module *mod : modules) {
    std::set<std::string> local;
    for (const ast::EntryDecl &entry : mod->entries) {
      if (!local.insert(entry.name).second) {
        diags.error(entry.loc, "entry `" + entry.name + "` is defined twice");
        continue;
      }
      auto same = std::find_if(entries.begin(), entries.end(),
                               [&](const ast::EntryDecl *e) {
                                 return e->name == entry.name;
                               });
      if (same != entries.end())
        *same = &entry;
      else
        entries.push_back(&entry);
    }
  }
  if (entries.empty())
    diags.error(main.modelLoc.isValid() ? main.modelLoc
                                        : SourceLoc{main.fileId, 0, 0},
                "the model declares no `entry`");
  return entries;
}

bool ElaboratorImpl::evalEntryInputs(const ast::EntryDecl &entry,
                                     EntryInputs &in) {
  // Input types: unknown names in dimensions are symbolic dims.
  bool inputsOk = true;
  for (const ast::ParamDecl &input : entry.inputs) {
    if (!input.tensorType) {
      diags.error(input.loc, "entry input '" + input.name +
                                 "' needs a tensor type like i32[batch, seq]");
      inputsOk = false;
      continue;
    }
    const ast::TensorTypeExpr &type = *input.tensorType;
    if (type.dtype != "f32" && type.dtype != "i32" && type.dtype != "i64" &&
        type.dtype != "bool") {
      diags.error(type.loc, "entry inputs are f32, i32, i64 or bool, not " +
                                type.dtype);
      inputsOk = false;
      continue;
    }
    SymShape shape;
    std::vector<std::string> names;
    for (const ast::ExprPtr &dimExpr : type.dims) {
      if (auto *ident = dyn_cast<ast::IdentExpr>(dimExpr.get());
          ident && !lookup(ident->name)) {
        auto fixed = options.dimValues.find(ident->name);
        if (fixed != options.dimValues.end()) {
          shape.push_back(SymDim::of(fixed->second));
          in.specialized[ident->name] = fixed->second;
        } else {
          shape.push_back(SymDim::symbol(ident->name));
        }
        names.push_back(ident->name);
        symbolicDims.insert(ident->name);
        continue;
      }
      MaybeValue dim = eval(*dimExpr);
      if (!dim) {
        inputsOk = false;
        break;
      }
      if (!dim->is(Value::Kind::Int) || dim->getInt() <= 0 ||
          dim->getInt() > ElaborationLimits::maxDimSize) {
        diags.error(dimExpr->getLoc(),
                    "an input dimension must be a positive int or a "
                    "symbolic name, got " +
                        dim->str());
        inputsOk = false;
        break;
      }
      shape.push_back(SymDim::of(dim->getInt()));
      names.push_back(std::to_string(dim->getInt()));
    }
    if (shape.size() > ElaborationLimits::maxRank) {
      diags.error(type.loc, "tensors have at most 8 dimensions");
      inputsOk = false;
    }
    if (inputsOk && !checkShape(type.dtype, shape, type.loc,
                                "entry input '" + input.name + "'"))
      inputsOk = false;
    if (!inputsOk)
      break;
    in.argTypes.push_back(tensorType(type.dtype, shape));
    in.inputs.push_back(TensorValue{{}, type.dtype, shape, input.loc,
                                    "`" + input.name + "`"});
    std::vector<mlir::Attribute> nameAttrs;
    for (const std::string &name : names)
      nameAttrs.push_back(builder.getStringAttr(name));
    in.dimAttrs.push_back(builder.getArrayAttr(nameAttrs));
  }
  return inputsOk;
}

void ElaboratorImpl::elaborateEntry(const ast::EntryDecl &entry,
                                    ElaboratedModel &result) {
  entryDims.clear();
  paramValues.clear();
  constantCache.clear();
  // Ops are only created in an entry's body: until it exists (while the
  // input types are evaluated) opLocation refuses, rather than inserting
  // into the previous entry's function, which may have been erased.
  builder.clearInsertionPoint();
  frames.push_back(Frame{{Scope{}}, std::nullopt});

  EntryInputs in;
  if (!evalEntryInputs(entry, in)) {
    frames.pop_back();
    return;
  }
  std::vector<mlir::Type> &argTypes = in.argTypes;
  std::vector<TensorValue> &inputs = in.inputs;

  builder.setInsertionPointToEnd(result.module->getBody());
  auto func = builder.create<mlir::func::FuncOp>(
      loc(entry.loc), entry.name, builder.getFunctionType(argTypes, {}));
  mlir::Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].value = body->getArgument(i);
    func.setArgAttr(i, "tfc.dims", in.dimAttrs[i]);
    func.setArgAttr(i, "tfc.name",
                    builder.getStringAttr(entry.inputs[i].name));
    for (size_t axis = 0; axis < inputs[i].shape.size(); ++axis) {
      const SymDim &dim = inputs[i].shape[axis];
      if (!dim.isStatic() && dim.terms.size() == 1)
        entryDims.emplace(dim.terms.begin()->first,
                          DimSource{inputs[i].value,
                                    static_cast<int64_t>(axis)});
    }
    define(entry.inputs[i].name, Value::ofTensor(inputs[i]));
  }
  // The dimension names are visible in the blocks the entry calls too.
  entryDimNames.clear();
  for (const auto &[name, source] : entryDims)
    entryDimNames[name] = Value::ofDim(SymDim::symbol(name), source);
  for (const auto &[name, size] : in.specialized)
    entryDimNames[name] = Value::ofInt(size);
  for (const auto &[name, value] : entryDimNames)
    define(name, value);

  returned.clear();
  Flow flow = execBody(entry.body);
  std::vector<std::pair<std::string, Value>> results = std::move(returned);
  returned.clear();
  frames.pop_back();
  entryDimNames.clear();
  if (flow == Flow::Failed) {
    func.erase();
    return;
  }
  if (flow != Flow::Returned || results.empty()) {
    diags.error(entry.loc, "entry `" + entry.name + "` returns nothing");
    func.erase();
    return;
  }
  std::vector<mlir::Value> outputs;
  std::vector<std::string> outputNames;
  std::vector<mlir::Attribute> outputDims;
  if (!collectEntryOutputs(results, outputs, outputNames, outputDims)) {
    func.erase();
    return;
  }
  builder.setInsertionPointToEnd(body);
  builder.create<mlir::func::ReturnOp>(loc(returnLoc), outputs);
  std::vector<mlir::Type> resultTypes;
  for (mlir::Value v : outputs)
    resultTypes.push_back(v.getType());
  func.setFunctionType(builder.getFunctionType(argTypes, resultTypes));
  for (size_t i = 0; i < outputNames.size(); ++i) {
    func.setResultAttr(i, "tfc.name", builder.getStringAttr(outputNames[i]));
    func.setResultAttr(i, "tfc.dims", outputDims[i]);
  }
}

bool ElaboratorImpl::collectEntryOutputs(
    const std::vector<std::pair<std::string, Value>> &results,
    std::vector<mlir::Value> &outputs, std::vector<std::string> &outputNames,
    std::vector<mlir::Attribute> &outputDims) {
  bool outputsOk = true;
  for (size_t i = 0; i < results.size(); ++i) {
    const Value &value = results[i].second;
    if (!value.isTensor()) {
      diags.error(returnLoc, "entry outputs must be tensors; output " +
                                 std::to_string(i) + " is a " +
                                 value.describe());
      outputsOk = false;
      continue;
    }
    outputs.push_back(value.getTensor().value);
    std::vector<mlir::Attribute> dimNames;
    for (const SymDim &dim : value.getTensor().shape)
      dimNames.push_back(builder.getStringAttr(dim.str()));
    outputDims.push_back(builder.getArrayAttr(dimNames));
    std::string name = results[i].first;
    if (name.empty())
      name = "output" + std::to_string(i);
    if (std::find(outputNames.begin(), outputNames.end(), name) !=
        outputNames.end()) {
      diags.error(returnLoc, "two outputs are named '" + name + "'");
      outputsOk = false;
    }
    outputNames.push_back(name);
  }
  return outputsOk;
}

void ElaboratorImpl::finishModule(const ast::Module &main,
                                  ElaboratedModel &result) {
  // Module attributes describe the model to tools and the runtime.
  mlir::ModuleOp module = *result.module;
  if (!result.modelName.empty())
    module->setAttr("tfc.model", builder.getStringAttr(result.modelName));
  std::vector<mlir::NamedAttribute> bounds;
  for (const auto &[name, bound] : dimBounds)
    bounds.push_back(
        builder.getNamedAttr(name, builder.getI64IntegerAttr(bound)));
  if (!bounds.empty())
    module->setAttr("tfc.dim_bounds", builder.getDictionaryAttr(bounds));

  result.params = params;
  if (!diags.hasErrors())
    checkDimNames(); // (after an error, some entries were not seen)

  if (!diags.hasErrors()) {
    // The dialect's verifiers check what the elaborator built; a failure
    // here is a bug in tfc, reported as an error rather than a crash.
    std::string messages;
    mlir::ScopedDiagnosticHandler handler(
        &context, [&](mlir::Diagnostic &diag) {
          llvm::raw_string_ostream os(messages);
          os << diag.getLocation() << ": " << diag.str() << "\n";
          return mlir::success();
        });
    if (mlir::failed(mlir::verify(module)))
      diags.error(main.modelLoc,
                  "internal error: generated IR does not verify:\n" + messages);
  }
}

ElaboratedModel tfc::elaborate(const std::vector<const ast::Module *> &modules,
                               mlir::MLIRContext &context,
                               DiagnosticEngine &diags,
                               const ElaborateOptions &options) {
  ElaboratorImpl impl(context, diags, options);
  return impl.run(modules);
}
