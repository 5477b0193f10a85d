//===- WeightBinding.cpp - Checkpoints checked against a model ------------===//

#include "runtime/WeightBinding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace tfc::rt {

/// Duplicate or empty names and invalid shapes in the table are bugs in the
/// model (or its compiler), reported before the checkpoint is blamed.
static Status validateTable(const ParamTable &table) {
  std::set<std::string> seen;
  for (const ParamSpec &p : table) {
    if (p.name.empty())
      return Status::error("parameter table has an entry with an empty name");
    if (!seen.insert(p.name).second)
      return Status::error("parameter table lists '" + p.name + "' twice");
    Expected<size_t> bytes = checkedByteSize(p.dtype, p.shape);
    if (!bytes)
      return bytes.status().withContext("parameter '" + p.name + "'");
  }
  return Status::success();
}

static bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

//===----------------------------------------------------------------------===//
// Binding
//===----------------------------------------------------------------------===//

Expected<BoundWeights> bindWeights(const ParamTable &table,
                                   const SafetensorsFile &checkpoint,
                                   const BindOptions &options) {
  TFC_RT_RETURN_IF_ERROR(validateTable(table));

  BoundWeights result;
  std::vector<std::string> problems;
  std::set<std::string> used;
  size_t numMissing = 0;

  for (const ParamSpec &spec : table) {
    const std::string expected = typeToString(spec.dtype, spec.shape);

    std::string found = spec.name;
    const SafetensorsEntry *entry = checkpoint.find(found);
    for (size_t i = 0; !entry && i < options.prefixes.size(); ++i) {
      found = options.prefixes[i] + spec.name;
      entry = checkpoint.find(found);
    }
    if (!entry) {
      problems.push_back("missing tensor '" + spec.name + "' (expected " +
                         expected + ")");
      ++numMissing;
      continue;
    }
    used.insert(found);

    // Shape and dtype are both checked so one run reports both.
    bool good = true;
    if (entry->shape != spec.shape) {
      problems.push_back("tensor '" + found + "': expected shape " +
                         shapeToString(spec.shape) + ", found " +
                         shapeToString(entry->shape));
      good = false;
    }
    // f32 parameters accept any floating-point storage (converted on load,
    // docs/design.md#kernels); other parameter types must match exactly,
    // since silently narrowing integers (e.g. token ids) would corrupt them.
    bool dtypeOk = spec.dtype == DType::F32 ? isFloatingPoint(entry->dtype)
                                            : entry->dtype == spec.dtype;
    if (!dtypeOk) {
      problems.push_back("tensor '" + found + "': unsupported dtype " +
                         dtypeName(entry->dtype) + " (expected " + expected +
                         ")");
      good = false;
    }
    if (!good)
      continue;

    Expected<Tensor> t = spec.dtype == DType::F32 ? checkpoint.loadF32(found)
                                                  : checkpoint.tensor(found);
    if (!t) {
      problems.push_back(t.message());
      continue;
    }
    result.tensors.emplace(spec.name, t.take());
  }

  if (!problems.empty()) {
    std::string msg = checkpoint.path() +
                      ": the checkpoint does not match the model (" +
                      std::to_string(problems.size()) +
                      (problems.size() == 1 ? " problem" : " problems") + ")";
    if (numMissing == table.size() && !table.empty())
      msg += "; none of the model's parameters were found, is this the "
             "checkpoint of another model?";
    msg += ":";
    size_t shown = std::min(problems.size(), options.maxProblems);
    for (size_t i = 0; i < shown; ++i)
      msg += "\n  " + problems[i];
    if (shown < problems.size())
      msg += "\n  ... and " + std::to_string(problems.size() - shown) + " more";
    return Status::error(msg);
  }

  for (const auto &kv : checkpoint.getEntries())
    if (!used.count(kv.first))
      result.warnings.push_back("unused tensor '" + kv.first + "' (" +
                                typeToString(kv.second.dtype, kv.second.shape) +
                                ")");
  return result;
}

Expected<BoundWeights> bindWeights(const ParamTable &table,
                                   const std::string &path,
                                   const BindOptions &options) {
  Expected<SafetensorsFile> file = SafetensorsFile::open(path);
  if (!file)
    return file.status();
  return bindWeights(table, *file, options);
}

//===----------------------------------------------------------------------===//
// Random weights
//===----------------------------------------------------------------------===//

static constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + kGolden;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// FNV-1a: a stable hash of the name, so a tensor's values depend only on
/// its name and the seed (adding a layer to a model does not reshuffle the
/// weights of the others).
static uint64_t hashName(const std::string &s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

/// Fills `out` with N(0, stddev) by Box-Muller. Pair k comes from the single
/// 64-bit value splitmix64(key + k * golden): its high half gives u1 in
/// (0, 1] (never 0, so log is finite) and its low half gives u2 in [0, 1).
static void fillNormal(float *out, size_t n, uint64_t key, double stddev) {
  const double twoPi = 6.283185307179586476925286766559;
  const double inv32 = 1.0 / 4294967296.0;
  for (size_t k = 0; 2 * k < n; ++k) {
    uint64_t r = splitmix64(key + static_cast<uint64_t>(k) * kGolden);
    double u1 = (static_cast<double>(r >> 32) + 1.0) * inv32;
    double u2 = static_cast<double>(r & 0xFFFFFFFFull) * inv32;
    double radius = stddev * std::sqrt(-2.0 * std::log(u1));
    double angle = twoPi * u2;
    out[2 * k] = static_cast<float>(radius * std::cos(angle));
    if (2 * k + 1 < n)
      out[2 * k + 1] = static_cast<float>(radius * std::sin(angle));
  }
}

Expected<WeightMap> randomWeights(const ParamTable &table, uint64_t seed) {
  TFC_RT_RETURN_IF_ERROR(validateTable(table));
  WeightMap out;
  for (const ParamSpec &spec : table) {
    Expected<Tensor> t = Tensor::zeros(spec.dtype, spec.shape);
    if (!t)
      return t.status().withContext("parameter '" + spec.name + "'");
    size_t n = static_cast<size_t>(t->numElements());

    // Integer and bool parameters (ids, masks) stay zero: they have no
    // meaningful random distribution.
    if (!isFloatingPoint(spec.dtype) || endsWith(spec.name, "bias") ||
        endsWith(spec.name, "beta")) {
      out.emplace(spec.name, t.take());
      continue;
    }

    // f32 (by far the common case) is generated in place; other float
    // types go through an f32 buffer and are converted.
    // (The scratch buffer is a Tensor so that running out of memory is
    // reported like everywhere else rather than thrown.)
    Tensor scratch;
    if (spec.dtype == DType::F32) {
      scratch = *t;
    } else {
      Expected<Tensor> s = Tensor::zeros(DType::F32, spec.shape);
      if (!s)
        return s.status().withContext("parameter '" + spec.name + "'");
      scratch = s.take();
    }
    float *values = scratch.dataAs<float>();
    if (spec.shape.size() == 1 &&
        (endsWith(spec.name, "weight") || endsWith(spec.name, "gamma"))) {
      std::fill(values, values + n, 1.0f);
    } else {
      uint64_t key = splitmix64(seed ^ splitmix64(hashName(spec.name)));
      fillNormal(values, n, key, 0.02);
    }
    switch (spec.dtype) {
    case DType::F64:
      std::copy(values, values + n, t->dataAs<double>());
      break;
    case DType::F16:
      std::transform(values, values + n, t->dataAs<uint16_t>(), f32ToF16);
      break;
    case DType::BF16:
      std::transform(values, values + n, t->dataAs<uint16_t>(), f32ToBf16);
      break;
    default:
      break;
    }
    out.emplace(spec.name, t.take());
  }
  return out;
}

} // namespace tfc::rt
