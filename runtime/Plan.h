//===- Plan.h - An executable model: kernels, buffers, shapes ---*- C++ -*-===//
//
// The contract between codegen and the runtime. Codegen turns each entry
// point's IR into a Plan: a list of steps, each one call of a compiled
// Halide kernel on tensor buffers. The runtime executes a Plan; it knows
// nothing of MLIR or Halide, so the same Plan runs with kernels JIT-compiled
// in process (tfc run) or linked from an AOT library (tfc compile).
//
// Shapes: every dimension of every value is a DimExpr over the entry's
// symbolic dimensions (batch, seq, past, ...), which the executor reads from
// the input tensors; so all shapes are known before the first kernel runs.
//
// Kernel calling convention (Halide's argv form, the same for JIT and AOT):
// `int kernel(void **args)`, args[i] a `halide_buffer_t *` for the step's
// inputs in order, then its outputs. Halide dimension 0 is the tensor's
// *last* axis (row-major, innermost first); strides are in elements.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_PLAN_H
#define TFC_RUNTIME_PLAN_H

#include "runtime/DimExpr.h"
#include "runtime/KernelFamily.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tfc::rt {

/// Where a symbolic dimension is read: axis `axis` of entry input `input`.
struct SymbolSource {
  std::string name; // "batch", "seq", "past"
  int32_t input = 0;
  int32_t axis = 0;
  int64_t bound = 0; // upper bound from `dim NAME <= N`, 0 if none
};

struct PlanValue {
  enum class Kind : uint8_t {
    Input,    // an entry input; `index` is the input position
    Param,    // a checkpoint tensor; `name` is its checkpoint name
    Constant, // Plan::constants[index]
    Temp,     // produced by a step
  };
  Kind kind = Kind::Temp;
  DType dtype = DType::F32;
  std::vector<DimExpr> shape;
  std::string name;
  int32_t index = 0;
};

struct PlanStep {
  /// Index into Plan::kernels (Kernel steps), -1 for cache steps.
  int32_t kernel = 0;
  std::vector<int32_t> inputs;  // value ids
  std::vector<int32_t> outputs; // value ids (Temp)
  /// Temp values whose last use is this step: freed after it runs.
  std::vector<int32_t> release;
  /// The .tfm location of the op ("gpt2-arch.tfm:52:9"), for errors.
  std::string location;

  /// What the step does. `Kernel`: calls Plan::kernels[kernel]. The cache
  /// ops have no kernel: the executor grows cache `cache` of the entry
  /// (PlanEntry::caches) in place. `CacheAppend` (IR tfc.kv_append; inputs:
  /// the cache input, the new positions) writes the new positions of layer
  /// `layer` into the cache's buffer after the cached ones; its output is a
  /// view of that layer, cached and new positions. `CacheStack`
  /// (tfc.kv_stack; inputs: the cache input, then every layer's CacheAppend
  /// output in layer order) outputs a view of the whole grown cache.
  enum class Op : uint8_t { Kernel, CacheAppend, CacheStack };
  Op op = Op::Kernel;
  /// Cache steps: the index into PlanEntry::caches and, for CacheAppend,
  /// the layer (the index on the cache's axis 0).
  int32_t cache = -1;
  int32_t layer = 0;
  /// A second kernel for one size of the step (Kernel steps): when axis
  /// `axis` of input `input` (a position in `inputs`) has extent `extent`,
  /// the step calls Plan::kernels[kernel] instead of
  /// Plan::kernels[PlanStep::kernel]. Fused attention in a decode step: its
  /// one-query-row kernel for Sq = 1, the general one otherwise
  /// (plan/PlanBuilder.cpp). kernel -1: none.
  struct SizeVariant {
    int32_t kernel = -1;
    int32_t input = 0;
    int32_t axis = 0;
    int64_t extent = 1;
  };
  SizeVariant variant;
  /// A step whose result is its input read with other strides (tfc.transpose,
  /// tfc.slice; plan/PlanBuilder.cpp fills it where the innermost axis stays
  /// dense, as the kernels need): on host buffers the executor binds the
  /// result as a strided view of the input instead of calling the kernel.
  /// Result axis i is input axis perm[i] (the identity for a slice); a slice
  /// (axis >= 0) takes elements start, start + step, ... of input axis
  /// `axis`. Empty perm: none. The executor binds the view when it reads
  /// the input densely, or, when `strided`, whenever it can (only kernels
  /// read the result: no reshape, cache step or entry output).
  struct StridedView {
    std::vector<int32_t> perm;
    int32_t axis = -1;
    int64_t start = 0;
    int64_t step = 1;
    bool strided = false;
    bool empty() const { return perm.empty(); }
  };
  StridedView view;
  /// The order in which the step's one output lies in memory, outermost
  /// axis first (a permutation that keeps the last axis last); empty:
  /// row-major. Where the output's one use is a transpose view, it is that
  /// transpose's permutation, so that the transpose reads it densely
  /// (attention's result before the head merge). The executor allocates it
  /// so where it binds strided views (host buffers); otherwise row-major.
  std::vector<int32_t> layout;
  /// The kernel to call for inputs of these shapes (`inputShape(i)` the
  /// extents of input position i).
  template <typename ShapeOf>
  int32_t kernelFor(const ShapeOf &inputShape) const {
    if (variant.kernel < 0)
      return kernel;
    const auto &shape = inputShape(static_cast<size_t>(variant.input));
    return shape[static_cast<size_t>(variant.axis)] == variant.extent
               ? variant.kernel
               : kernel;
  }
};

/// Integer inputs used as indices (token ids into an embedding table) must
/// be in [0, limit): checked before any kernel runs.
struct IndexCheck {
  int32_t value = 0; // an Input value id
  int64_t limit = 0;
  std::string what; // "ids index wte.weight"
};

/// A symbolic size that an op needs to be at least `min` (a static slice
/// of a dynamic axis, `h[:, 0]`, needs seq >= 1).
struct DimCheck {
  DimExpr dim;
  int64_t min = 1;
  std::string what;
};

/// An entry output that is an entry input grown in place: a key/value cache
/// (IR: an entry returns tfc.kv_stack of an argument). Output `output` is
/// input `input` with more positions on `axis`; the cache steps of the
/// entry write them. The executor runs such an entry on a KvCache, a buffer
/// allocated once with room for `capacity` positions, or copies a plain
/// `input` tensor into one first (runtime/KvCache.h).
struct PlanCache {
  int32_t input = 0;  // position in PlanEntry::inputs
  int32_t output = 0; // position in PlanEntry::outputs
  int32_t axis = 0;   // the positions; axis 0 is the layer
};

struct PlanEntry {
  std::string name;
  std::vector<IndexCheck> indexChecks;
  std::vector<DimCheck> dimChecks;
  std::vector<PlanValue> values;
  std::vector<int32_t> inputs; // value ids of kind Input, in order
  std::vector<std::string> inputNames;
  std::vector<int32_t> outputs;
  std::vector<std::string> outputNames;
  std::vector<SymbolSource> symbols;
  std::vector<PlanStep> steps;
  std::vector<PlanCache> caches;

  /// The index into `caches` of the cache that input / output `position`
  /// is, or -1.
  int cacheOfInput(int position) const;
  int cacheOfOutput(int position) const;

  /// The position of input / output `name`, or -1.
  int inputIndex(const std::string &name) const;
  int outputIndex(const std::string &name) const;
  /// The upper bound of symbol `name` (`dim NAME <= N`), 0 if none.
  int64_t symbolBound(const std::string &name) const;
};

/// One compiled kernel: its symbol name in an AOT library; the op it
/// computes ("tfc.matmul") and that op's kernel family, which the runtime
/// and `tfc bench` use as data; and the signature it was compiled from (op,
/// attributes, operand and result types) so `tfc dump` and error messages
/// can say what it computes. The signature is for people: nothing parses it.
struct PlanKernel {
  std::string name;
  std::string op;
  KernelFamily family = KernelFamily::Elementwise;
  std::string signature;
  int32_t numInputs = 0;
  int32_t numOutputs = 0;
};

struct ParamInfo {
  std::string name;
  Shape shape;
  DType storedDType = DType::F32;
};

struct Plan {
  std::string modelName;
  std::vector<PlanEntry> entries;
  std::vector<PlanKernel> kernels;
  std::vector<ParamInfo> params;
  std::vector<Tensor> constants;

  const PlanEntry *findEntry(const std::string &name) const;
};

/// Plans travel inside AOT libraries as JSON (constants as base64).
Expected<std::string> serializePlan(const Plan &plan);
Expected<Plan> deserializePlan(const std::string &json);

/// Evaluates a DimExpr for concrete symbol values.
int64_t evaluate(const DimExpr &dim, const std::vector<int64_t> &symbols);

/// Checks that every id in `plan` is in range and of the right kind, that
/// Param values match the parameter table and Constant values their tensor,
/// that symbols are read from an axis that is exactly that symbol, and that
/// steps respect def-use order (a Temp is written once, read after that and
/// before its release; outputs are live at the end). deserializePlan and the
/// executor run it, so a corrupt plan is an error, not an out-of-bounds read.
Status verifyPlan(const Plan &plan);

/// "seq", "past + seq", "2*seq + 1", "768": a DimExpr with symbol names.
std::string dimToString(const DimExpr &dim,
                        const std::vector<SymbolSource> &symbols);

/// "i32[batch, seq]": a value's dtype and symbolic shape, for diagnostics.
std::string valueTypeToString(const PlanValue &value,
                              const std::vector<SymbolSource> &symbols);

} // namespace tfc::rt

#endif // TFC_RUNTIME_PLAN_H
