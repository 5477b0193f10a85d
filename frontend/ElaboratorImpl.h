//===- ElaboratorImpl.h - Internal state of the elaborator ------*- C++ -*-===//
//
// Shared between Elaborator.cpp (statements, expressions, blocks, entries)
// and Builtins.cpp (the tensor operations of the language).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_ELABORATORIMPL_H
#define TFC_FRONTEND_ELABORATORIMPL_H

#include "frontend/Elaborator.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace tfc {

/// Limits that keep elaboration finite on any input (the fuzzer finds the
/// inputs that need them).
struct ElaborationLimits {
  static constexpr unsigned maxCallDepth = 64;
  static constexpr int64_t maxLoopTrips = 100000;
  // The largest example, GPT-2 large, takes 33666 steps and makes 5365 ops
  // (its three entries together). These limits allow ~45 times that, and
  // keep the worst input under a second (a sanitizer build: under a minute).
  static constexpr int64_t maxSteps = 1500000;
  static constexpr int64_t maxOps = 250000;
  static constexpr size_t maxRank = 8;
  static constexpr int64_t maxDimSize = int64_t(1) << 40;
  /// Of a tensor's static dimensions together, so that no element count or
  /// byte size computed from a shape overflows.
  static constexpr int64_t maxElements = int64_t(1) << 40;
  /// Elements of all the constants (positions, causal masks) one
  /// elaboration creates: each is stored, and hashed, in the IR.
  static constexpr int64_t maxConstantElements = int64_t(1) << 26;
  static constexpr size_t maxListSize = 1 << 20;
  /// Lists in lists: deeper ones would overflow the C++ stack when printed
  /// or destroyed.
  static constexpr size_t maxListDepth = 256;
  static constexpr size_t maxStringSize = 1 << 16;
  /// C++ stack that nested evaluation may use: expressions and statements
  /// being evaluated one inside the other, over all block calls. A count of
  /// levels would not do: one level takes from a few hundred bytes to tens
  /// of kilobytes (a builtin call in a sanitizer build). Half the stack
  /// limit, at most this.
  static constexpr size_t maxStackBytes = size_t(4) << 20;
};

/// Result of evaluating something: nullopt means an error was reported (or
/// an operand was already poisoned by an earlier error).
using MaybeValue = std::optional<Value>;

/// Positional/keyword argument binding for builtins and blocks.
struct ArgSpec {
  std::string name;
  std::optional<Value> defaultValue; // nullopt: required
};

class ElaboratorImpl {
public:
  ElaboratorImpl(mlir::MLIRContext &context, DiagnosticEngine &diags,
                 const ElaborateOptions &options);

  ElaboratedModel run(const std::vector<const ast::Module *> &modules);

  //===--------------------------------------------------------------------===//
  // The module and its entries (the steps of run())
  //===--------------------------------------------------------------------===//
  /// An entry's inputs, from their declared types.
  struct EntryInputs {
    std::vector<mlir::Type> argTypes;
    /// Without their values until the function exists.
    std::vector<TensorValue> inputs;
    /// Symbolic dims bound to sizes by ElaborateOptions::dimValues: still
    /// names the body can use, now as ints.
    std::map<std::string, int64_t> specialized;
    /// Per input, the names of its dimensions (`tfc.dims`).
    std::vector<mlir::Attribute> dimAttrs;
  };
  /// Registers every module's blocks; reports one defined twice in a module.
  void collectBlocks(const std::vector<const ast::Module *> &modules);
  /// Evaluates the config values with the `--set` overrides; lists them in
  /// `result`.
  void evalConfig(const std::vector<const ast::Module *> &modules,
                  ElaboratedModel &result);
  /// Evaluates the dims' bounds; false when a requested size exceeds one.
  bool evalDims(const std::vector<const ast::Module *> &modules);
  /// The entries to elaborate, a later file's replacing an earlier one's.
  std::vector<const ast::EntryDecl *>
  collectEntries(const std::vector<const ast::Module *> &modules,
                 const ast::Module &main);
  /// Evaluates an entry's input types; false after an error.
  bool evalEntryInputs(const ast::EntryDecl &entry, EntryInputs &in);
  /// Builds an entry's function in `result.module` (erased after an error).
  void elaborateEntry(const ast::EntryDecl &entry, ElaboratedModel &result);
  /// The values, names and dims of an entry's outputs; false after an error.
  bool
  collectEntryOutputs(const std::vector<std::pair<std::string, Value>> &results,
                      std::vector<mlir::Value> &outputs,
                      std::vector<std::string> &outputNames,
                      std::vector<mlir::Attribute> &outputDims);
  /// Sets the module's attributes and params and verifies the IR.
  void finishModule(const ast::Module &main, ElaboratedModel &result);

  //===--------------------------------------------------------------------===//
  // Scopes
  //===--------------------------------------------------------------------===//
  struct Scope {
    std::map<std::string, Value> names;
  };
  /// A block or entry activation: its own stack of lexical scopes.
  struct Frame {
    std::vector<Scope> scopes;
    /// For a block's frame, the chain of call sites that inlined it
    /// (innermost call first); none in an entry's frame. Ops created in the
    /// frame are located at `callsite(op at chain)`.
    std::optional<mlir::Location> callSite;
    /// For a block's frame: the block and the call that inlined it.
    const ast::BlockDecl *block = nullptr;
    SourceLoc callLoc;
  };
  /// Notes naming the block calls that led to the current point, innermost
  /// first: the context of an error (DiagnosticEngine::setContext).
  std::vector<Diagnostic> callChain() const;

  const Value *lookup(const std::string &name) const;
  /// Whether `at` lies in the prelude (frontend/prelude.tfm).
  bool inPrelude(SourceLoc at) const;
  void assign(const std::string &name, Value value);
  void define(const std::string &name, Value value);

  //===--------------------------------------------------------------------===//
  // Evaluation
  //===--------------------------------------------------------------------===//
  enum class Flow { Normal, Returned, Failed };
  Flow execBody(const ast::Body &body);
  Flow execStmt(const ast::Stmt &stmt);
  Flow execAssign(const ast::AssignStmt &stmt);
  Flow execParam(const ast::ParamStmt &stmt);
  /// A parameter's static shape; false after an error.
  bool evalParamShape(const ast::ParamStmt &stmt, std::vector<int64_t> &shape,
                      SymShape &symShape);
  /// Records checkpoint tensor `name`, or checks it against its earlier
  /// declaration; false after an error.
  bool declareParam(const ast::ParamStmt &stmt, const std::string &name,
                    const std::vector<int64_t> &shape,
                    const SymShape &symShape);
  Flow execFor(const ast::ForStmt &stmt);
  Flow execIf(const ast::IfStmt &stmt);
  Flow execReturn(const ast::ReturnStmt &stmt);
  Flow execAssert(const ast::AssertStmt &stmt);
  MaybeValue eval(const ast::Expr &expr);
  MaybeValue evalBinary(const ast::BinaryExpr &expr);
  MaybeValue evalStaticBinary(ast::BinaryOp op, const Value &lhs,
                              const Value &rhs, SourceLoc loc);
  /// The parts of evalStaticBinary, by kind of operands.
  MaybeValue badStaticOperands(ast::BinaryOp op, const Value &lhs,
                               const Value &rhs, SourceLoc at);
  MaybeValue staticCompare(ast::BinaryOp op, const Value &lhs, const Value &rhs,
                           SourceLoc at);
  MaybeValue staticJoin(const Value &lhs, const Value &rhs, SourceLoc at);
  MaybeValue staticIntArith(ast::BinaryOp op, int64_t a, int64_t b,
                            SourceLoc at);
  MaybeValue staticFloatArith(ast::BinaryOp op, double a, double b,
                              SourceLoc at);
  MaybeValue staticDimArith(ast::BinaryOp op, const SymDim &a, const SymDim &b,
                            SourceLoc at);
  MaybeValue staticPow(const Value &lhs, const Value &rhs, SourceLoc at);
  /// `result` of static function `what` on `args`, or an error when it is
  /// not finite although the arguments are.
  MaybeValue staticMath(const std::string &what, double result,
                        llvm::ArrayRef<Value> args, SourceLoc at);
  MaybeValue evalUnary(const ast::UnaryExpr &expr);
  MaybeValue evalIndex(const ast::IndexExpr &expr);
  MaybeValue evalString(const ast::StringExpr &expr);
  MaybeValue evalCall(const ast::CallExpr &expr);
  MaybeValue callBlock(const ast::BlockDecl &block, const ast::CallExpr &call);
  MaybeValue callBuiltin(const ast::CallExpr &call, bool &found);
  MaybeValue callStaticFunction(const ast::CallExpr &call, bool &found);
  /// Static function `f` on `args` (as many as it takes).
  MaybeValue applyStaticFunction(const std::string &f,
                                 const std::vector<Value> &args, SourceLoc at);
  /// `int`, `floor`, `ceil` or `round` of a number.
  MaybeValue staticToInt(const std::string &f, const Value &x, SourceLoc at);

  /// Binds a call's arguments to `specs`; reports unknown, duplicate,
  /// missing and surplus arguments.
  std::optional<std::vector<Value>>
  bindArgs(const ast::CallExpr &call, const std::vector<ArgSpec> &specs);
  /// Evaluates an argument expression; unbound identifiers in argument
  /// position are enum symbols (`activation(x, gelu)`, `cast(x, f32)`).
  MaybeValue evalArg(const ast::Expr &expr);

  //===--------------------------------------------------------------------===//
  // Tensor construction (Builtins.cpp)
  //===--------------------------------------------------------------------===//
  mlir::Location loc(SourceLoc at) const;
  mlir::Type elementType(const std::string &dtype) const;
  mlir::RankedTensorType tensorType(const std::string &dtype,
                                    const SymShape &shape) const;
  /// Where an op made for source location `at` goes (with the chain of
  /// block calls); counts the op. None, after an error, outside an entry or
  /// past the op limit.
  std::optional<mlir::Location> opLocation(SourceLoc at);
  /// Checks `dtype[shape]` against the limits, creates the op with
  /// `create` and checks that its result has the type of `dtype[shape]`.
  std::optional<TensorValue>
  makeTensorWith(const std::string &dtype, const SymShape &shape,
                 SourceLoc at, std::string description,
                 llvm::function_ref<mlir::Value(mlir::Location)> create);
  /// makeTensorWith for op `OpT`, built by its typed builder with `args`
  /// (which infers the result type).
  template <typename OpT, typename... Args>
  std::optional<TensorValue> makeTensor(const std::string &dtype,
                                        const SymShape &shape, SourceLoc at,
                                        std::string description,
                                        Args &&...args) {
    return makeTensorWith(
        dtype, shape, at, std::move(description),
        [&](mlir::Location location) {
          return builder.create<OpT>(location, std::forward<Args>(args)...)
              ->getResult(0);
        });
  }
  /// A rank-0 constant of `dtype` holding `number`.
  std::optional<TensorValue> scalarConstant(const Value &number,
                                            const std::string &dtype,
                                            SourceLoc at);
  /// Requires a tensor; reports "`what` expects a tensor" otherwise.
  const TensorValue *expectTensor(const Value &value, const std::string &what,
                                  SourceLoc at);
  std::optional<int64_t> expectInt(const Value &value, const std::string &what,
                                   SourceLoc at);
  std::optional<int64_t> normalizeAxis(int64_t axis, size_t rank,
                                       const std::string &what, SourceLoc at);
  std::optional<SymShape> broadcast(const TensorValue &lhs,
                                    const TensorValue &rhs,
                                    const std::string &opSpelling,
                                    SourceLoc at);
  void noteOrigin(const TensorValue &tensor);
  MaybeValue tensorBinary(ast::BinaryOp op, const Value &lhs, const Value &rhs,
                          SourceLoc at);
  MaybeValue matmul(const TensorValue &a, const TensorValue &b,
                    bool transposeB, SourceLoc at, const std::string &what);
  /// The element-wise binary op `op` (not `@`) on broadcast operands.
  std::optional<TensorValue> binaryOp(ast::BinaryOp op, const TensorValue &lhs,
                                      const TensorValue &rhs,
                                      const SymShape &shape, SourceLoc at,
                                      std::string description);
  /// Builds an element-wise unary op on `x` at `location`.
  using UnaryBuilder = mlir::Value (*)(mlir::OpBuilder &, mlir::Location,
                                       mlir::Value x);
  template <typename OpT>
  static mlir::Value buildUnary(mlir::OpBuilder &b, mlir::Location at,
                                mlir::Value x) {
    return b.create<OpT>(at, x)->getResult(0);
  }
  /// The unary op that `make` builds on `x`; an error (`what` cannot take
  /// x's type) when the op's ODS operand constraint refuses x.
  MaybeValue unaryOp(UnaryBuilder make, const TensorValue &x, SourceLoc at,
                     const std::string &what);
  MaybeValue transpose(const TensorValue &x, std::vector<int64_t> perm,
                       SourceLoc at);
  MaybeValue reshape(const TensorValue &x, const SymShape &shape,
                     SourceLoc at);
  MaybeValue slice(const TensorValue &x, int64_t axis, int64_t start,
                   int64_t end, SourceLoc at, int64_t step = 1);
  MaybeValue concat(const std::vector<TensorValue> &parts, int64_t axis,
                    SourceLoc at, const std::string &what);
  MaybeValue castTo(const TensorValue &x, const std::string &dtype,
                    SourceLoc at);
  MaybeValue whereOp(const TensorValue &cond, const Value &a, const Value &b,
                     SourceLoc at, const std::string &what);
  enum class Reduction { Sum, Mean, Max };
  MaybeValue reduce(Reduction kind, const TensorValue &x, int64_t axis,
                    bool keepdim, SourceLoc at, const std::string &what);
  /// Materialises a dimension at run time as `tfc.positions`/`causal_mask`
  /// operands: the tensor and axis it can be read from.
  std::optional<DimSource> dimSource(const Value &dim, SourceLoc at,
                                     const std::string &what);
  MaybeValue indexTensor(const TensorValue &x,
                         const std::vector<ast::Subscript> &subs,
                         SourceLoc at);
  /// The bounds one subscript gives axis `axis` of `x`: absent ones are the
  /// axis' ends, negative ones count from the end of a static axis.
  struct SliceBounds {
    std::optional<int64_t> start, end;
    int64_t step = 1;
  };
  std::optional<SliceBounds> subscriptBounds(const TensorValue &x, size_t axis,
                                             const ast::Subscript &sub);

  bool step(SourceLoc at);
  /// Counts `work` steps at once (copying a long string or list); reports
  /// the limit like step().
  bool charge(int64_t work, SourceLoc at);
  /// Checks the stack used by nested evaluation (see
  /// ElaborationLimits::maxStackBytes); reports the limit once and returns
  /// false when it is reached.
  bool enterEval(SourceLoc at);
  /// Checks the static size of a tensor about to be created: every static
  /// dimension in 1..maxDimSize, their product at most maxElements, and the
  /// coefficients of symbolic ones at most maxDimSize in magnitude.
  bool checkShape(const std::string &dtype, const SymShape &shape,
                  SourceLoc at, const std::string &what);
  /// Counts `elements` against ElaborationLimits::maxConstantElements.
  bool chargeConstant(int64_t elements, SourceLoc at);

  mlir::MLIRContext &context;
  DiagnosticEngine &diags;
  const ElaborateOptions &options;
  mlir::OpBuilder builder;

  std::map<std::string, Value> config;
  std::map<std::string, const ast::BlockDecl *> blocks;
  std::map<std::string, int64_t> dimBounds;
  /// Names of the symbolic dimensions of the entries' inputs.
  std::set<std::string> symbolicDims;
  /// Refuses ElaborateOptions::dimValues above the bound of `name`
  /// (declared at `declaredAt`; false then), and names that no entry uses.
  bool checkDimValue(const std::string &name, int64_t bound,
                     SourceLoc declaredAt);
  void checkDimNames();
  /// Symbolic dimensions of the entry being elaborated and where each can be
  /// read at run time.
  std::map<std::string, DimSource> entryDims;
  /// The names of those dimensions (and of the ones bound to sizes by
  /// ElaborateOptions::dimValues) with their values, which the entry and
  /// every block it calls can use (`reshape(x, [batch, seq, heads, dh])`).
  std::map<std::string, Value> entryDimNames;
  std::vector<Frame> frames;
  std::map<std::string, size_t> paramIndex;
  std::vector<ParamEntry> params;
  std::map<std::string, mlir::Value> paramValues; // per entry
  /// Static `positions(n)` and `causal_mask(q, k)` constants of the entry
  /// being elaborated, by kind and sizes, so repeated layers share one.
  std::map<std::tuple<int, int64_t, int64_t>, TensorValue> constantCache;
  int64_t constantElements = 0;
  /// Where run() started on the stack, and how far below it evaluation may
  /// go.
  uintptr_t stackBase = 0;
  size_t stackBudget = 0;
  bool evalTooDeep = false;
  /// Arguments already evaluated by callStaticFunction before it found a
  /// tensor among them (see there).
  std::map<const ast::Expr *, Value> preEvaluated;
  int64_t steps = 0;
  int64_t numOps = 0;
  bool exhausted = false;
  /// Results of the block or entry currently returning.
  std::vector<std::pair<std::string, Value>> returned;
  SourceLoc returnLoc;
};

} // namespace tfc

#endif // TFC_FRONTEND_ELABORATORIMPL_H
