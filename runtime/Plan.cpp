//===- Plan.cpp - An executable model: kernels, buffers, shapes -----------===//
//
// Besides the small helpers of Plan.h, this file holds the Plan's JSON form
// and its verifier. A Plan travels inside AOT libraries and on disk, so
// deserializePlan treats its input as untrusted: nlohmann::json is parsed
// with allow_exceptions=false and only inspected after a type check (never
// at()/get<>() on an unchecked value, which would throw, i.e. abort under
// -fno-exceptions), and the decoded Plan must pass verifyPlan before it is
// returned, so that an executor indexing it by the ids it holds never reads
// out of bounds.
//
//===----------------------------------------------------------------------===//

#include "runtime/Plan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

namespace tfc::rt {

using json = nlohmann::json;

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

static int positionOf(const std::vector<std::string> &names,
                      const std::string &name) {
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

int PlanEntry::inputIndex(const std::string &name) const {
  return positionOf(inputNames, name);
}

int PlanEntry::outputIndex(const std::string &name) const {
  return positionOf(outputNames, name);
}

int PlanEntry::cacheOfInput(int position) const {
  for (size_t c = 0; c < caches.size(); ++c)
    if (caches[c].input == position)
      return static_cast<int>(c);
  return -1;
}

int PlanEntry::cacheOfOutput(int position) const {
  for (size_t c = 0; c < caches.size(); ++c)
    if (caches[c].output == position)
      return static_cast<int>(c);
  return -1;
}

int64_t PlanEntry::symbolBound(const std::string &name) const {
  for (const SymbolSource &s : symbols)
    if (s.name == name)
      return s.bound;
  return 0;
}

const PlanEntry *Plan::findEntry(const std::string &name) const {
  for (const PlanEntry &entry : entries)
    if (entry.name == name)
      return &entry;
  return nullptr;
}

int64_t evaluate(const DimExpr &dim, const std::vector<int64_t> &symbols) {
  // Wrapping arithmetic (in uint64_t, so it is defined): a verified plan
  // evaluated with input-derived sizes never comes near the limits, and a
  // result that wrapped negative is refused by the executor's shape checks.
  uint64_t value = static_cast<uint64_t>(dim.constant);
  for (const auto &[symbol, coeff] : dim.terms) {
    // Out-of-range symbols only occur in plans that verifyPlan refuses;
    // counting them as 0 keeps this function total.
    if (symbol < 0 || static_cast<size_t>(symbol) >= symbols.size())
      continue;
    value += static_cast<uint64_t>(coeff) *
             static_cast<uint64_t>(symbols[static_cast<size_t>(symbol)]);
  }
  return static_cast<int64_t>(value);
}

std::string dimToString(const DimExpr &dim,
                        const std::vector<SymbolSource> &symbols) {
  std::string s;
  for (const auto &[symbol, coeff] : dim.terms) {
    std::string name =
        symbol >= 0 && static_cast<size_t>(symbol) < symbols.size()
            ? symbols[static_cast<size_t>(symbol)].name
            : "s" + std::to_string(symbol);
    int64_t magnitude = coeff;
    if (!s.empty()) {
      s += coeff < 0 ? " - " : " + ";
      magnitude = coeff < 0 ? -coeff : coeff;
    } else if (coeff == -1) {
      s += "-";
      magnitude = 1;
    }
    if (magnitude != 1)
      s += std::to_string(magnitude) + "*";
    s += name;
  }
  if (s.empty())
    return std::to_string(dim.constant);
  if (dim.constant > 0)
    s += " + " + std::to_string(dim.constant);
  else if (dim.constant < 0)
    s += " - " + std::to_string(-dim.constant);
  return s;
}

std::string valueTypeToString(const PlanValue &value,
                              const std::vector<SymbolSource> &symbols) {
  std::string s = std::string(dtypeName(value.dtype)) + "[";
  for (size_t i = 0; i < value.shape.size(); ++i) {
    if (i)
      s += ", ";
    s += dimToString(value.shape[i], symbols);
  }
  return s + "]";
}

static const char *kindName(PlanValue::Kind kind) {
  switch (kind) {
  case PlanValue::Kind::Input:
    return "input";
  case PlanValue::Kind::Param:
    return "param";
  case PlanValue::Kind::Constant:
    return "constant";
  case PlanValue::Kind::Temp:
    return "temp";
  }
  return "?";
}

static bool parseKind(const std::string &name, PlanValue::Kind &kind) {
  for (PlanValue::Kind k : {PlanValue::Kind::Input, PlanValue::Kind::Param,
                            PlanValue::Kind::Constant, PlanValue::Kind::Temp}) {
    if (name == kindName(k)) {
      kind = k;
      return true;
    }
  }
  return false;
}

static bool parseDType(const std::string &name, DType &dtype) {
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64,
                  DType::I32, DType::I16, DType::I8, DType::U8, DType::Bool}) {
    if (name == dtypeName(d)) {
      dtype = d;
      return true;
    }
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

namespace {

/// Checks one entry. Every id a step, check or list holds is checked to be in
/// range before it is used to index anything, so this is safe on arbitrary
/// (deserialized) plans.
class EntryVerifier {
public:
  EntryVerifier(const Plan &plan, const PlanEntry &entry)
      : plan(plan), entry(entry) {}

  Status verify() {
    Status s = verifyImpl();
    return s.withContext("entry '" + entry.name + "'");
  }

private:
  const Plan &plan;
  const PlanEntry &entry;

  bool validId(int32_t id) const {
    return id >= 0 && static_cast<size_t>(id) < entry.values.size();
  }

  Status verifyDim(const DimExpr &dim, const std::string &where) const {
    for (const auto &term : dim.terms)
      if (term.first < 0 ||
          static_cast<size_t>(term.first) >= entry.symbols.size())
        return Status::error(where + ": symbol " + std::to_string(term.first) +
                             " is out of range (the entry has " +
                             std::to_string(entry.symbols.size()) +
                             " symbols)");
    return Status::success();
  }

  Status verifyValue(size_t id) const {
    const PlanValue &v = entry.values[id];
    std::string where = "value " + std::to_string(id);
    for (const DimExpr &dim : v.shape)
      TFC_RT_RETURN_IF_ERROR(verifyDim(dim, where));
    switch (v.kind) {
    case PlanValue::Kind::Input:
      if (v.index < 0 || static_cast<size_t>(v.index) >= entry.inputs.size() ||
          entry.inputs[static_cast<size_t>(v.index)] !=
              static_cast<int32_t>(id))
        return Status::error(where + ": input index " +
                             std::to_string(v.index) +
                             " does not name this value in the input list");
      break;
    case PlanValue::Kind::Param: {
      const ParamInfo *info = nullptr;
      for (const ParamInfo &p : plan.params)
        if (p.name == v.name)
          info = &p;
      if (!info)
        return Status::error(where + ": parameter '" + v.name +
                             "' is not in the plan's parameter table");
      Shape shape;
      for (const DimExpr &dim : v.shape) {
        if (!dim.isStatic())
          return Status::error(where + ": parameter '" + v.name +
                               "' has a symbolic shape");
        shape.push_back(dim.constant);
      }
      if (shape != info->shape)
        return Status::error(where + ": parameter '" + v.name + "' has shape " +
                             shapeToString(shape) + " but the table says " +
                             shapeToString(info->shape));
      break;
    }
    case PlanValue::Kind::Constant: {
      if (v.index < 0 || static_cast<size_t>(v.index) >= plan.constants.size())
        return Status::error(where + ": constant index " +
                             std::to_string(v.index) + " is out of range");
      const Tensor &c = plan.constants[static_cast<size_t>(v.index)];
      Shape shape;
      for (const DimExpr &dim : v.shape)
        shape.push_back(dim.isStatic() ? dim.constant : -1);
      if (c.isNull() || c.dtype() != v.dtype || c.shape() != shape)
        return Status::error(where + ": constant " + std::to_string(v.index) +
                             " is not a " + typeToString(v.dtype, shape));
      break;
    }
    case PlanValue::Kind::Temp:
      break;
    }
    return Status::success();
  }

  /// A size variant names a kernel of the same arity and an axis of one of
  /// the step's inputs (validId has checked the ids).
  Status verifyVariant(const PlanStep &step, const std::string &where) const {
    const PlanStep::SizeVariant &v = step.variant;
    if (v.kernel == -1)
      return Status::success();
    if (step.op != PlanStep::Op::Kernel)
      return Status::error(where + ": a cache step has no kernel variant");
    if (v.kernel < 0 || static_cast<size_t>(v.kernel) >= plan.kernels.size())
      return Status::error(where + ": variant kernel " +
                           std::to_string(v.kernel) + " is out of range");
    TFC_RT_RETURN_IF_ERROR(verifyKernelArity(
        plan.kernels[static_cast<size_t>(v.kernel)], step, where));
    if (v.input < 0 || static_cast<size_t>(v.input) >= step.inputs.size() ||
        v.extent < 0)
      return Status::error(where + ": variant reads input " +
                           std::to_string(v.input) + ", which it does not have");
    const PlanValue &in =
        entry.values[static_cast<size_t>(step.inputs[static_cast<size_t>(v.input)])];
    if (v.axis < 0 || static_cast<size_t>(v.axis) >= in.shape.size())
      return Status::error(where + ": variant axis " + std::to_string(v.axis) +
                           " is out of range");
    return Status::success();
  }

  /// Whether `perm` is a permutation of `rank` axes that keeps the last one
  /// last (the kernels' innermost axis is dense); else what is wrong.
  static std::string checkPermutation(const std::vector<int32_t> &perm,
                                      size_t rank) {
    std::vector<bool> seen(rank, false);
    for (int32_t a : perm) {
      if (a < 0 || static_cast<size_t>(a) >= rank || seen[static_cast<size_t>(a)])
        return "is not a permutation of the axes";
      seen[static_cast<size_t>(a)] = true;
    }
    if (perm.size() != rank)
      return "is not a permutation of the axes";
    if (rank > 0 && perm.back() != static_cast<int32_t>(rank) - 1)
      return "must keep the last axis last";
    return "";
  }

  /// A layout is a permutation of the one output's axes, last axis last.
  Status verifyLayout(const PlanStep &step, const std::string &where) const {
    if (step.layout.empty())
      return Status::success();
    if (step.op != PlanStep::Op::Kernel || step.outputs.size() != 1 ||
        !validId(step.outputs[0]))
      return Status::error(where + ": layout: only a kernel step of one "
                                   "output has a layout");
    size_t rank = entry.values[static_cast<size_t>(step.outputs[0])].shape.size();
    std::string why = checkPermutation(step.layout, rank);
    return why.empty() ? Status::success()
                       : Status::error(where + ": layout " + why);
  }

  /// A strided view reads one input of the result's rank: `perm` is a
  /// permutation that keeps the last axis last (the kernels' innermost axis
  /// is dense), and a slice has a valid axis, start >= 0 and step >= 1, with
  /// step 1 on the last axis. Extents are checked when the step runs.
  Status verifyView(const PlanStep &step, const std::string &where) const {
    const PlanStep::StridedView &v = step.view;
    if (v.empty())
      return Status::success();
    auto bad = [&](const std::string &msg) {
      return Status::error(where + ": view: " + msg);
    };
    if (step.op != PlanStep::Op::Kernel || step.inputs.size() != 1 ||
        step.outputs.size() != 1 || !validId(step.outputs[0]))
      return bad("only a kernel step of one input and one output is a view");
    size_t rank = entry.values[static_cast<size_t>(step.inputs[0])].shape.size();
    if (v.perm.size() != rank ||
        entry.values[static_cast<size_t>(step.outputs[0])].shape.size() != rank)
      return bad("the permutation, input and result ranks differ");
    if (std::string why = checkPermutation(v.perm, rank); !why.empty())
      return bad("perm " + why);
    int32_t last = static_cast<int32_t>(rank) - 1;
    if (v.axis >= static_cast<int32_t>(rank) || v.axis < -1 || v.start < 0 ||
        v.step < 1 || (v.axis == last && v.step != 1))
      return bad("slice axis " + std::to_string(v.axis) + ", start " +
                 std::to_string(v.start) + ", step " +
                 std::to_string(v.step) + " is not a valid view");
    return Status::success();
  }

  Status verifyKernelArity(const PlanKernel &k, const PlanStep &step,
                           const std::string &where) const {
    if (step.inputs.size() == static_cast<size_t>(k.numInputs) &&
        step.outputs.size() == static_cast<size_t>(k.numOutputs))
      return Status::success();
    return Status::error(where + ": kernel '" + k.name + "' takes " +
                         std::to_string(k.numInputs) + " inputs and " +
                         std::to_string(k.numOutputs) +
                         " outputs, the step has " +
                         std::to_string(step.inputs.size()) + " and " +
                         std::to_string(step.outputs.size()));
  }

  /// A cache is an f32 input, returned as an output of its type except
  /// the positions axis.
  Status verifyCaches() const {
    for (size_t c = 0; c < entry.caches.size(); ++c) {
      const PlanCache &cache = entry.caches[c];
      std::string where = "cache " + std::to_string(c);
      if (cache.input < 0 ||
          static_cast<size_t>(cache.input) >= entry.inputs.size() ||
          cache.output < 0 ||
          static_cast<size_t>(cache.output) >= entry.outputs.size())
        return Status::error(where + ": input or output out of range");
      const PlanValue &in = entry.values[static_cast<size_t>(
          entry.inputs[static_cast<size_t>(cache.input)])];
      int32_t out = entry.outputs[static_cast<size_t>(cache.output)];
      if (!validId(out))
        return Status::error(where + ": output value out of range");
      const PlanValue &o = entry.values[static_cast<size_t>(out)];
      if (in.dtype != DType::F32 || o.dtype != DType::F32 ||
          in.shape.size() != o.shape.size() || cache.axis < 1 ||
          static_cast<size_t>(cache.axis) >= in.shape.size() ||
          !in.shape[0].isStatic())
        return Status::error(where + ": input '" +
                             entry.inputNames[static_cast<size_t>(
                                 cache.input)] +
                             "' and its output are not an f32 cache "
                             "[layers, ...] with positions on axis " +
                             std::to_string(cache.axis));
      for (size_t d = 0; d < in.shape.size(); ++d)
        if (d != static_cast<size_t>(cache.axis) && !(in.shape[d] == o.shape[d]))
          return Status::error(where + ": output differs from the input in "
                                       "dim " + std::to_string(d));
    }
    return Status::success();
  }

  /// A cache step reads its cache's input first; CacheAppend names a layer
  /// of it and reads one more value, CacheStack reads one per layer.
  Status verifyCacheStep(const PlanStep &step,
                         const std::string &where) const {
    if (step.kernel != -1 || step.cache < 0 ||
        static_cast<size_t>(step.cache) >= entry.caches.size())
      return Status::error(where + ": cache step without a cache");
    const PlanCache &cache = entry.caches[static_cast<size_t>(step.cache)];
    const PlanValue &in = entry.values[static_cast<size_t>(
        entry.inputs[static_cast<size_t>(cache.input)])];
    int64_t layers = in.shape[0].constant;
    bool append = step.op == PlanStep::Op::CacheAppend;
    size_t numInputs = append ? 2 : static_cast<size_t>(layers) + 1;
    if (step.inputs.size() != numInputs || step.outputs.size() != 1 ||
        step.inputs[0] != entry.inputs[static_cast<size_t>(cache.input)] ||
        (append && (step.layer < 0 || step.layer >= layers)))
      return Status::error(where + ": malformed cache step for cache " +
                           std::to_string(step.cache));
    return Status::success();
  }

  Status verifyImpl() {
    if (entry.name.empty())
      return Status::error("an entry has no name");
    if (entry.inputNames.size() != entry.inputs.size())
      return Status::error(
          "has " + std::to_string(entry.inputs.size()) + " inputs but " +
          std::to_string(entry.inputNames.size()) + " input names");
    if (entry.outputNames.size() != entry.outputs.size())
      return Status::error(
          "has " + std::to_string(entry.outputs.size()) + " outputs but " +
          std::to_string(entry.outputNames.size()) + " output names");
    for (size_t i = 0; i < entry.inputs.size(); ++i) {
      int32_t id = entry.inputs[i];
      if (!validId(id) ||
          entry.values[static_cast<size_t>(id)].kind !=
              PlanValue::Kind::Input ||
          entry.values[static_cast<size_t>(id)].index !=
              static_cast<int32_t>(i))
        return Status::error("input " + std::to_string(i) +
                             " does not name an input value");
    }
    for (size_t id = 0; id < entry.values.size(); ++id)
      TFC_RT_RETURN_IF_ERROR(verifyValue(id));
    TFC_RT_RETURN_IF_ERROR(verifyCaches());

    for (size_t i = 0; i < entry.symbols.size(); ++i) {
      const SymbolSource &s = entry.symbols[i];
      std::string where = "symbol '" + s.name + "'";
      if (s.input < 0 || static_cast<size_t>(s.input) >= entry.inputs.size())
        return Status::error(where + ": input " + std::to_string(s.input) +
                             " is out of range");
      const PlanValue &in = entry.values[static_cast<size_t>(
          entry.inputs[static_cast<size_t>(s.input)])];
      if (s.axis < 0 || static_cast<size_t>(s.axis) >= in.shape.size())
        return Status::error(where + ": axis " + std::to_string(s.axis) +
                             " is out of range for input '" +
                             entry.inputNames[static_cast<size_t>(s.input)] +
                             "'");
      // The executor reads the symbol from this axis, so the axis must be
      // exactly the symbol; otherwise its value would be misread.
      const DimExpr &d = in.shape[static_cast<size_t>(s.axis)];
      if (d.constant != 0 || d.terms.size() != 1 ||
          d.terms[0].first != static_cast<int32_t>(i) || d.terms[0].second != 1)
        return Status::error(where + ": axis " + std::to_string(s.axis) +
                             " of input '" +
                             entry.inputNames[static_cast<size_t>(s.input)] +
                             "' is not the symbol itself");
      if (s.bound < 0)
        return Status::error(where + ": negative bound");
    }

    for (const IndexCheck &c : entry.indexChecks) {
      if (!validId(c.value) ||
          entry.values[static_cast<size_t>(c.value)].kind !=
              PlanValue::Kind::Input)
        return Status::error("index check '" + c.what +
                             "' does not name an input value");
      DType t = entry.values[static_cast<size_t>(c.value)].dtype;
      if (t != DType::I32 && t != DType::I64)
        return Status::error("index check '" + c.what +
                             "' names a non-integer input");
      if (c.limit < 0)
        return Status::error("index check '" + c.what +
                             "' has a negative limit");
    }
    for (const DimCheck &c : entry.dimChecks)
      TFC_RT_RETURN_IF_ERROR(verifyDim(c.dim, "dim check '" + c.what + "'"));

    // Def-use order: a Temp is written by exactly one step, read only after
    // it, not after its release, and outputs must be live at the end.
    std::vector<char> defined(entry.values.size(), 0);
    for (size_t id = 0; id < entry.values.size(); ++id)
      defined[id] = entry.values[id].kind != PlanValue::Kind::Temp;
    std::vector<char> written(entry.values.size(), 0);
    for (size_t si = 0; si < entry.steps.size(); ++si) {
      const PlanStep &step = entry.steps[si];
      std::string where = "step " + std::to_string(si);
      if (step.op != PlanStep::Op::Kernel) {
        TFC_RT_RETURN_IF_ERROR(verifyCacheStep(step, where));
      } else if (step.kernel < 0 ||
          static_cast<size_t>(step.kernel) >= plan.kernels.size())
        return Status::error(where + ": kernel " + std::to_string(step.kernel) +
                             " is out of range");
      else
        TFC_RT_RETURN_IF_ERROR(verifyKernelArity(
            plan.kernels[static_cast<size_t>(step.kernel)], step, where));
      for (int32_t id : step.inputs)
        if (!validId(id) || !defined[static_cast<size_t>(id)])
          return Status::error(where + ": reads value " + std::to_string(id) +
                               ", which is not defined there");
      TFC_RT_RETURN_IF_ERROR(verifyVariant(step, where));
      TFC_RT_RETURN_IF_ERROR(verifyView(step, where));
      TFC_RT_RETURN_IF_ERROR(verifyLayout(step, where));
      for (int32_t id : step.outputs) {
        if (!validId(id) ||
            entry.values[static_cast<size_t>(id)].kind != PlanValue::Kind::Temp)
          return Status::error(where + ": output " + std::to_string(id) +
                               " is not a temp value");
        if (written[static_cast<size_t>(id)])
          return Status::error(where + ": value " + std::to_string(id) +
                               " is written twice");
        written[static_cast<size_t>(id)] = defined[static_cast<size_t>(id)] = 1;
      }
      for (int32_t id : step.release) {
        if (!validId(id) ||
            entry.values[static_cast<size_t>(id)].kind !=
                PlanValue::Kind::Temp ||
            !defined[static_cast<size_t>(id)])
          return Status::error(where + ": releases value " +
                               std::to_string(id) +
                               ", which is not a live temp");
        defined[static_cast<size_t>(id)] = 0;
      }
    }
    for (int32_t id : entry.outputs)
      if (!validId(id) || !defined[static_cast<size_t>(id)])
        return Status::error("output value " + std::to_string(id) +
                             " is not defined at the end");
    return Status::success();
  }
};

} // namespace

Status verifyPlan(const Plan &plan) {
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const PlanKernel &k = plan.kernels[i];
    if (k.numInputs < 0 || k.numOutputs < 1)
      return Status::error("plan: kernel " + std::to_string(i) + " ('" +
                           k.name + "') has invalid argument counts");
    if (k.op.empty() || k.family == KernelFamily::None)
      return Status::error("plan: kernel " + std::to_string(i) + " ('" +
                           k.name + "') has no op or no kernel family");
  }
  std::set<std::string> paramNames;
  for (const ParamInfo &p : plan.params) {
    if (!paramNames.insert(p.name).second)
      return Status::error("plan: parameter '" + p.name + "' appears twice");
    Expected<size_t> size = checkedByteSize(p.storedDType, p.shape);
    if (!size)
      return size.status().withContext("plan: parameter '" + p.name + "'");
  }
  std::set<std::string> entryNames;
  for (const PlanEntry &entry : plan.entries) {
    if (!entryNames.insert(entry.name).second)
      return Status::error("plan: entry '" + entry.name + "' appears twice");
    TFC_RT_RETURN_IF_ERROR(
        EntryVerifier(plan, entry).verify().withContext("plan"));
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Base64 (RFC 4648, with padding)
//===----------------------------------------------------------------------===//

static const char kBase64Chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static std::string base64Encode(const uint8_t *data, size_t size) {
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < size; i += 3) {
    uint32_t n =
        (uint32_t(data[i]) << 16) | (uint32_t(data[i + 1]) << 8) | data[i + 2];
    out += kBase64Chars[(n >> 18) & 63];
    out += kBase64Chars[(n >> 12) & 63];
    out += kBase64Chars[(n >> 6) & 63];
    out += kBase64Chars[n & 63];
  }
  if (i < size) {
    uint32_t n = uint32_t(data[i]) << 16;
    if (i + 1 < size)
      n |= uint32_t(data[i + 1]) << 8;
    out += kBase64Chars[(n >> 18) & 63];
    out += kBase64Chars[(n >> 12) & 63];
    out += i + 1 < size ? kBase64Chars[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

static int base64Digit(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

/// Decodes canonical padded base64; false for anything else.
static bool base64Decode(const std::string &text, std::vector<uint8_t> &out) {
  if (text.size() % 4 != 0)
    return false;
  out.clear();
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = 0;
    uint32_t n = 0;
    for (size_t j = 0; j < 4; ++j) {
      char c = text[i + j];
      int d;
      if (c == '=' && last && j >= 2) {
        d = 0;
        ++pad;
      } else {
        if (pad) // Data after padding.
          return false;
        d = base64Digit(c);
        if (d < 0)
          return false;
      }
      n = (n << 6) | static_cast<uint32_t>(d);
    }
    out.push_back(static_cast<uint8_t>(n >> 16));
    if (pad < 2)
      out.push_back(static_cast<uint8_t>(n >> 8));
    if (pad < 1)
      out.push_back(static_cast<uint8_t>(n));
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Serialization
//===----------------------------------------------------------------------===//

// The JSON form (version 3; version 2 had no kernel "op" and "family",
// version 1 no caches). A DimExpr is a bare integer when static, else
// {"c": constant, "t": [[symbol, coeff], ...]}:
//
// {"format": "tfc-plan", "version": 3, "model": "gpt2",
//  "kernels": [{"name", "op", "family", "signature", "inputs": n,
//               "outputs": n}],
//  "params": [{"name", "shape": [..], "dtype": "f32"}],
//  "constants": [{"dtype", "shape": [..], "data": "<base64>"}],
//  "entries": [{"name", "symbols": [{"name", "input", "axis", "bound"}],
//               "values": [{"kind": "input|param|constant|temp", "dtype",
//                           "shape": [dim..], "name", "index"}],
//               "inputs": [id..], "input_names": [..],
//               "outputs": [id..], "output_names": [..],
//               "index_checks": [{"value", "limit", "what"}],
//               "dim_checks": [{"dim", "min", "what"}],
//               "steps": [{"kernel", "inputs", "outputs", "release",
//                          "location"}]}]}
//
// Optional step members, present only where a step has one (plans without
// them read as before): "variant" {kernel, input, axis, extent}, "view"
// {perm, axis, start, step, "strided" when true} and "layout" [axis..]
// (PlanStep).

static constexpr int kPlanFormatVersion = 3;

static json dimToJson(const DimExpr &dim) {
  if (dim.isStatic())
    return dim.constant;
  json terms = json::array();
  for (const auto &[symbol, coeff] : dim.terms)
    terms.push_back(json::array({symbol, coeff}));
  return json{{"c", dim.constant}, {"t", std::move(terms)}};
}

static json shapeToJson(const Shape &shape) {
  json a = json::array();
  for (int64_t d : shape)
    a.push_back(d);
  return a;
}

static json idsToJson(const std::vector<int32_t> &ids) {
  json a = json::array();
  for (int32_t id : ids)
    a.push_back(id);
  return a;
}

static json stringsToJson(const std::vector<std::string> &strings) {
  json a = json::array();
  for (const std::string &s : strings)
    a.push_back(s);
  return a;
}

Expected<std::string> serializePlan(const Plan &plan) {
  // Refusing to write a plan that could not be read back keeps the failure
  // at its cause (codegen) instead of at load time in another program.
  TFC_RT_RETURN_IF_ERROR(verifyPlan(plan));

  json root;
  root["format"] = "tfc-plan";
  root["version"] = kPlanFormatVersion;
  root["model"] = plan.modelName;

  json kernels = json::array();
  for (const PlanKernel &k : plan.kernels)
    kernels.push_back({{"name", k.name},
                       {"op", k.op},
                       {"family", std::string(kernelFamilyName(k.family))},
                       {"signature", k.signature},
                       {"inputs", k.numInputs},
                       {"outputs", k.numOutputs}});
  root["kernels"] = std::move(kernels);

  json params = json::array();
  for (const ParamInfo &p : plan.params)
    params.push_back({{"name", p.name},
                      {"shape", shapeToJson(p.shape)},
                      {"dtype", dtypeName(p.storedDType)}});
  root["params"] = std::move(params);

  json constants = json::array();
  for (const Tensor &c : plan.constants)
    constants.push_back(
        {{"dtype", dtypeName(c.dtype())},
         {"shape", shapeToJson(c.shape())},
         {"data",
          base64Encode(static_cast<const uint8_t *>(c.data()), c.byteSize())}});
  root["constants"] = std::move(constants);

  json entries = json::array();
  for (const PlanEntry &e : plan.entries) {
    json entry;
    entry["name"] = e.name;
    json symbols = json::array();
    for (const SymbolSource &s : e.symbols)
      symbols.push_back({{"name", s.name},
                         {"input", s.input},
                         {"axis", s.axis},
                         {"bound", s.bound}});
    entry["symbols"] = std::move(symbols);
    json values = json::array();
    for (const PlanValue &v : e.values) {
      json shape = json::array();
      for (const DimExpr &d : v.shape)
        shape.push_back(dimToJson(d));
      values.push_back({{"kind", kindName(v.kind)},
                        {"dtype", dtypeName(v.dtype)},
                        {"shape", std::move(shape)},
                        {"name", v.name},
                        {"index", v.index}});
    }
    entry["values"] = std::move(values);
    entry["inputs"] = idsToJson(e.inputs);
    entry["input_names"] = stringsToJson(e.inputNames);
    entry["outputs"] = idsToJson(e.outputs);
    entry["output_names"] = stringsToJson(e.outputNames);
    json indexChecks = json::array();
    for (const IndexCheck &c : e.indexChecks)
      indexChecks.push_back(
          {{"value", c.value}, {"limit", c.limit}, {"what", c.what}});
    entry["index_checks"] = std::move(indexChecks);
    json dimChecks = json::array();
    for (const DimCheck &c : e.dimChecks)
      dimChecks.push_back(
          {{"dim", dimToJson(c.dim)}, {"min", c.min}, {"what", c.what}});
    entry["dim_checks"] = std::move(dimChecks);
    json steps = json::array();
    for (const PlanStep &s : e.steps) {
      json step = {{"kernel", s.kernel},
                   {"op", static_cast<int>(s.op)},
                   {"cache", s.cache},
                   {"layer", s.layer},
                   {"inputs", idsToJson(s.inputs)},
                   {"outputs", idsToJson(s.outputs)},
                   {"release", idsToJson(s.release)},
                   {"location", s.location}};
      // Only where there is one: plans without variants read as before.
      if (s.variant.kernel != -1)
        step["variant"] = {{"kernel", s.variant.kernel},
                           {"input", s.variant.input},
                           {"axis", s.variant.axis},
                           {"extent", s.variant.extent}};
      if (!s.view.empty()) {
        step["view"] = {{"perm", s.view.perm},
                        {"axis", s.view.axis},
                        {"start", s.view.start},
                        {"step", s.view.step}};
        if (s.view.strided)
          step["view"]["strided"] = true;
      }
      if (!s.layout.empty())
        step["layout"] = s.layout;
      steps.push_back(std::move(step));
    }
    entry["steps"] = std::move(steps);
    json caches = json::array();
    for (const PlanCache &c : e.caches)
      caches.push_back(
          {{"input", c.input}, {"output", c.output}, {"axis", c.axis}});
    entry["caches"] = std::move(caches);
    entries.push_back(std::move(entry));
  }
  root["entries"] = std::move(entries);

  // `replace`: a name that is not valid UTF-8 must not make dump() throw.
  return root.dump(-1, ' ', /*ensure_ascii=*/false,
                   json::error_handler_t::replace);
}

//===----------------------------------------------------------------------===//
// Deserialization
//===----------------------------------------------------------------------===//

namespace {

/// Typed, non-throwing field readers. Each failure sets one message that
/// names the field's path ("entries[0].steps[3].kernel"), so a corrupt plan
/// says where it is corrupt.
class Reader {
public:
  Status status;

  bool ok() const { return status.ok(); }

  bool fail(const std::string &path, const std::string &msg) {
    if (status.ok())
      status = Status::error("plan: " + path + ": " + msg);
    return false;
  }

  const json *field(const json &obj, const std::string &path, const char *key) {
    if (!obj.is_object()) {
      fail(path, std::string("expected an object, found a ") + obj.type_name());
      return nullptr;
    }
    auto it = obj.find(key);
    if (it == obj.end()) {
      fail(path, std::string("missing field '") + key + "'");
      return nullptr;
    }
    return &*it;
  }

  bool readInt(const json &obj, const std::string &path, const char *key,
               int64_t &out) {
    const json *v = field(obj, path, key);
    return v && readIntValue(*v, path + "." + key, out);
  }

  bool readIntValue(const json &v, const std::string &path, int64_t &out) {
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return fail(path, "integer is too large");
      out = static_cast<int64_t>(u);
      return true;
    }
    if (v.is_number_integer()) {
      out = v.get<int64_t>();
      return true;
    }
    return fail(path,
                std::string("expected an integer, found a ") + v.type_name());
  }

  bool readI32Value(const json &v, const std::string &path, int32_t &out) {
    int64_t wide;
    if (!readIntValue(v, path, wide))
      return false;
    if (wide < std::numeric_limits<int32_t>::min() ||
        wide > std::numeric_limits<int32_t>::max())
      return fail(path, "integer " + std::to_string(wide) + " is out of range");
    out = static_cast<int32_t>(wide);
    return true;
  }

  bool readI32(const json &obj, const std::string &path, const char *key,
               int32_t &out) {
    const json *v = field(obj, path, key);
    return v && readI32Value(*v, path + "." + key, out);
  }

  bool readString(const json &obj, const std::string &path, const char *key,
                  std::string &out) {
    const json *v = field(obj, path, key);
    if (!v)
      return false;
    if (!v->is_string())
      return fail(path + "." + key,
                  std::string("expected a string, found a ") + v->type_name());
    out = v->get_ref<const std::string &>();
    return true;
  }

  const json *array(const json &obj, const std::string &path, const char *key) {
    const json *v = field(obj, path, key);
    if (v && !v->is_array()) {
      fail(path + "." + key,
           std::string("expected an array, found a ") + v->type_name());
      return nullptr;
    }
    return v;
  }

  bool readIds(const json &obj, const std::string &path, const char *key,
               std::vector<int32_t> &out) {
    const json *a = array(obj, path, key);
    if (!a)
      return false;
    out.clear();
    for (size_t i = 0; i < a->size(); ++i) {
      int32_t id;
      if (!readI32Value((*a)[i],
                        path + "." + key + "[" + std::to_string(i) + "]", id))
        return false;
      out.push_back(id);
    }
    return true;
  }

  bool readStrings(const json &obj, const std::string &path, const char *key,
                   std::vector<std::string> &out) {
    const json *a = array(obj, path, key);
    if (!a)
      return false;
    out.clear();
    for (size_t i = 0; i < a->size(); ++i) {
      const json &s = (*a)[i];
      if (!s.is_string())
        return fail(path + "." + key + "[" + std::to_string(i) + "]",
                    std::string("expected a string, found a ") + s.type_name());
      out.push_back(s.get_ref<const std::string &>());
    }
    return true;
  }

  bool readShape(const json &obj, const std::string &path, const char *key,
                 Shape &out) {
    const json *a = array(obj, path, key);
    if (!a)
      return false;
    out.clear();
    for (size_t i = 0; i < a->size(); ++i) {
      int64_t d;
      std::string p = path + "." + key + "[" + std::to_string(i) + "]";
      if (!readIntValue((*a)[i], p, d))
        return false;
      if (d < 0)
        return fail(p, "negative dimension " + std::to_string(d));
      out.push_back(d);
    }
    return true;
  }

  bool readDType(const json &obj, const std::string &path, const char *key,
                 DType &out) {
    std::string name;
    if (!readString(obj, path, key, name))
      return false;
    if (!parseDType(name, out))
      return fail(path + "." + key, "unknown dtype '" + name + "'");
    return true;
  }

  bool readDim(const json &v, const std::string &path, DimExpr &out) {
    out = DimExpr{};
    if (v.is_number())
      return readIntValue(v, path, out.constant);
    if (!readInt(v, path, "c", out.constant))
      return false;
    const json *terms = array(v, path, "t");
    if (!terms)
      return false;
    for (size_t i = 0; i < terms->size(); ++i) {
      const json &t = (*terms)[i];
      std::string p = path + ".t[" + std::to_string(i) + "]";
      if (!t.is_array() || t.size() != 2)
        return fail(p, "expected a [symbol, coefficient] pair");
      int32_t symbol;
      int64_t coeff;
      if (!readI32Value(t[0], p + "[0]", symbol) ||
          !readIntValue(t[1], p + "[1]", coeff))
        return false;
      out.terms.emplace_back(symbol, coeff);
    }
    return true;
  }
};

} // namespace

/// A step's "view" (PlanStep::StridedView); verifyPlan checks its values.
static bool readView(Reader &r, const json &v, const std::string &path,
                     PlanStep::StridedView &view) {
  if (!r.readIds(v, path, "perm", view.perm) ||
      !r.readI32(v, path, "axis", view.axis) ||
      !r.readInt(v, path, "start", view.start) ||
      !r.readInt(v, path, "step", view.step))
    return false;
  if (view.perm.empty())
    return r.fail(path + ".perm", "a view needs a permutation");
  if (v.contains("strided")) {
    if (!v["strided"].is_boolean())
      return r.fail(path + ".strided", "expected true or false");
    view.strided = v["strided"].get<bool>();
  }
  return true;
}

static bool readEntry(Reader &r, const json &e, const std::string &path,
                      PlanEntry &entry) {
  if (!r.readString(e, path, "name", entry.name))
    return false;

  const json *symbols = r.array(e, path, "symbols");
  if (!symbols)
    return false;
  for (size_t i = 0; i < symbols->size(); ++i) {
    const json &s = (*symbols)[i];
    std::string p = path + ".symbols[" + std::to_string(i) + "]";
    SymbolSource src;
    if (!r.readString(s, p, "name", src.name) ||
        !r.readI32(s, p, "input", src.input) ||
        !r.readI32(s, p, "axis", src.axis) ||
        !r.readInt(s, p, "bound", src.bound))
      return false;
    entry.symbols.push_back(std::move(src));
  }

  const json *values = r.array(e, path, "values");
  if (!values)
    return false;
  for (size_t i = 0; i < values->size(); ++i) {
    const json &v = (*values)[i];
    std::string p = path + ".values[" + std::to_string(i) + "]";
    PlanValue value;
    std::string kind;
    if (!r.readString(v, p, "kind", kind))
      return false;
    if (!parseKind(kind, value.kind))
      return r.fail(p + ".kind", "unknown value kind '" + kind + "'");
    if (!r.readDType(v, p, "dtype", value.dtype) ||
        !r.readString(v, p, "name", value.name) ||
        !r.readI32(v, p, "index", value.index))
      return false;
    const json *shape = r.array(v, p, "shape");
    if (!shape)
      return false;
    for (size_t d = 0; d < shape->size(); ++d) {
      DimExpr dim;
      if (!r.readDim((*shape)[d], p + ".shape[" + std::to_string(d) + "]", dim))
        return false;
      value.shape.push_back(std::move(dim));
    }
    entry.values.push_back(std::move(value));
  }

  if (!r.readIds(e, path, "inputs", entry.inputs) ||
      !r.readStrings(e, path, "input_names", entry.inputNames) ||
      !r.readIds(e, path, "outputs", entry.outputs) ||
      !r.readStrings(e, path, "output_names", entry.outputNames))
    return false;

  const json *indexChecks = r.array(e, path, "index_checks");
  if (!indexChecks)
    return false;
  for (size_t i = 0; i < indexChecks->size(); ++i) {
    const json &c = (*indexChecks)[i];
    std::string p = path + ".index_checks[" + std::to_string(i) + "]";
    IndexCheck check;
    if (!r.readI32(c, p, "value", check.value) ||
        !r.readInt(c, p, "limit", check.limit) ||
        !r.readString(c, p, "what", check.what))
      return false;
    entry.indexChecks.push_back(std::move(check));
  }

  const json *dimChecks = r.array(e, path, "dim_checks");
  if (!dimChecks)
    return false;
  for (size_t i = 0; i < dimChecks->size(); ++i) {
    const json &c = (*dimChecks)[i];
    std::string p = path + ".dim_checks[" + std::to_string(i) + "]";
    DimCheck check;
    const json *dim = r.field(c, p, "dim");
    if (!dim || !r.readDim(*dim, p + ".dim", check.dim) ||
        !r.readInt(c, p, "min", check.min) ||
        !r.readString(c, p, "what", check.what))
      return false;
    entry.dimChecks.push_back(std::move(check));
  }

  const json *steps = r.array(e, path, "steps");
  if (!steps)
    return false;
  for (size_t i = 0; i < steps->size(); ++i) {
    const json &s = (*steps)[i];
    std::string p = path + ".steps[" + std::to_string(i) + "]";
    PlanStep step;
    int32_t op = 0;
    if (!r.readI32(s, p, "kernel", step.kernel) ||
        !r.readI32(s, p, "op", op) || !r.readI32(s, p, "cache", step.cache) ||
        !r.readI32(s, p, "layer", step.layer) ||
        !r.readIds(s, p, "inputs", step.inputs) ||
        !r.readIds(s, p, "outputs", step.outputs) ||
        !r.readIds(s, p, "release", step.release) ||
        !r.readString(s, p, "location", step.location))
      return false;
    const json *variant = s.contains("variant") ? &s["variant"] : nullptr;
    std::string pv = p + ".variant";
    if (variant &&
        (!variant->is_object() ||
         !r.readI32(*variant, pv, "kernel", step.variant.kernel) ||
        !r.readI32(*variant, pv, "input", step.variant.input) ||
        !r.readI32(*variant, pv, "axis", step.variant.axis) ||
         !r.readInt(*variant, pv, "extent", step.variant.extent)))
      return r.fail(pv, "expected {kernel, input, axis, extent}");
    if (s.contains("view") && !readView(r, s["view"], p + ".view", step.view))
      return false;
    if (s.contains("layout") && !r.readIds(s, p, "layout", step.layout))
      return false;
    if (op < 0 || op > static_cast<int32_t>(PlanStep::Op::CacheStack))
      return r.fail(p + ".op", "unknown step op " + std::to_string(op));
    step.op = static_cast<PlanStep::Op>(op);
    entry.steps.push_back(std::move(step));
  }

  const json *caches = r.array(e, path, "caches");
  if (!caches)
    return false;
  for (size_t i = 0; i < caches->size(); ++i) {
    const json &c = (*caches)[i];
    std::string p = path + ".caches[" + std::to_string(i) + "]";
    PlanCache cache;
    if (!r.readI32(c, p, "input", cache.input) ||
        !r.readI32(c, p, "output", cache.output) ||
        !r.readI32(c, p, "axis", cache.axis))
      return false;
    entry.caches.push_back(cache);
  }
  return true;
}

static bool readPlan(Reader &r, const json &root, Plan &plan) {
  if (!root.is_object())
    return r.fail("top level", std::string("expected an object, found a ") +
                                   root.type_name());
  std::string format;
  if (!r.readString(root, "top level", "format", format))
    return false;
  if (format != "tfc-plan")
    return r.fail("format", "expected 'tfc-plan', found '" + format + "'");
  int64_t version;
  if (!r.readInt(root, "top level", "version", version))
    return false;
  if (version != kPlanFormatVersion)
    return r.fail("version", "unsupported version " + std::to_string(version) +
                                 " (this runtime reads version " +
                                 std::to_string(kPlanFormatVersion) + ")");
  if (!r.readString(root, "top level", "model", plan.modelName))
    return false;

  const json *kernels = r.array(root, "top level", "kernels");
  if (!kernels)
    return false;
  for (size_t i = 0; i < kernels->size(); ++i) {
    const json &k = (*kernels)[i];
    std::string p = "kernels[" + std::to_string(i) + "]";
    PlanKernel kernel;
    std::string family;
    if (!r.readString(k, p, "name", kernel.name) ||
        !r.readString(k, p, "op", kernel.op) ||
        !r.readString(k, p, "family", family) ||
        !r.readString(k, p, "signature", kernel.signature) ||
        !r.readI32(k, p, "inputs", kernel.numInputs) ||
        !r.readI32(k, p, "outputs", kernel.numOutputs))
      return false;
    std::optional<KernelFamily> parsed = parseKernelFamily(family);
    if (!parsed || *parsed == KernelFamily::None)
      return r.fail(p + ".family", "unknown kernel family '" + family + "'");
    kernel.family = *parsed;
    plan.kernels.push_back(std::move(kernel));
  }

  const json *params = r.array(root, "top level", "params");
  if (!params)
    return false;
  for (size_t i = 0; i < params->size(); ++i) {
    const json &q = (*params)[i];
    std::string p = "params[" + std::to_string(i) + "]";
    ParamInfo param;
    if (!r.readString(q, p, "name", param.name) ||
        !r.readShape(q, p, "shape", param.shape) ||
        !r.readDType(q, p, "dtype", param.storedDType))
      return false;
    plan.params.push_back(std::move(param));
  }

  const json *constants = r.array(root, "top level", "constants");
  if (!constants)
    return false;
  for (size_t i = 0; i < constants->size(); ++i) {
    const json &c = (*constants)[i];
    std::string p = "constants[" + std::to_string(i) + "]";
    DType dtype;
    Shape shape;
    std::string data;
    if (!r.readDType(c, p, "dtype", dtype) ||
        !r.readShape(c, p, "shape", shape) || !r.readString(c, p, "data", data))
      return false;
    Expected<size_t> size = checkedByteSize(dtype, shape);
    if (!size)
      return r.fail(p, size.message());
    std::vector<uint8_t> bytes;
    if (!base64Decode(data, bytes))
      return r.fail(p + ".data", "is not valid base64");
    if (bytes.size() != *size)
      return r.fail(p + ".data", "holds " + std::to_string(bytes.size()) +
                                     " bytes, but " +
                                     typeToString(dtype, shape) + " needs " +
                                     std::to_string(*size));
    Expected<Tensor> t = Tensor::zeros(dtype, shape);
    if (!t)
      return r.fail(p, t.message());
    if (!bytes.empty())
      std::memcpy(t->data(), bytes.data(), bytes.size());
    plan.constants.push_back(t.take());
  }

  const json *entries = r.array(root, "top level", "entries");
  if (!entries)
    return false;
  for (size_t i = 0; i < entries->size(); ++i) {
    PlanEntry entry;
    if (!readEntry(r, (*entries)[i], "entries[" + std::to_string(i) + "]",
                   entry))
      return false;
    plan.entries.push_back(std::move(entry));
  }
  return true;
}

Expected<Plan> deserializePlan(const std::string &text) {
  json root = json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return Status::error("plan: not valid JSON");
  Reader reader;
  Plan plan;
  if (!readPlan(reader, root, plan))
    return reader.status;
  TFC_RT_RETURN_IF_ERROR(verifyPlan(plan));
  return plan;
}

} // namespace tfc::rt
