//===- PlanTestUtil.h - A toy Plan and fake kernels for tests ---*- C++ -*-===//
//
// A hand-written Plan with two entries that exercises what the executor has
// to handle: symbolic dims (batch, seq, past, with a bound), an i32 index
// input with an index check, a bool input, a parameter, a constant, a dim
// check, a symbolic sum (past + seq) and temps with release lists. The fake
// kernels implement it in plain C++ on halide_buffer_t, in Halide's argv
// convention, and refuse buffers whose type or rank is not what a real
// kernel would have been compiled for.
//
//   forward(ids: i32[batch, seq <= 8], mask: bool[batch, seq])
//     x = gather(wte: f32[10, 4], ids)      k0_gather   f32[batch, seq, 4]
//     y = x * scale (constant f32[] = 2)    k1_mul
//     z = where(mask, y, 0)                 k2_mask
//     -> hidden = z
//   extend(past: f32[batch, past, 4], x: f32[batch, seq, 4])
//     c = concat(past, x, axis 1)           k3_concat   f32[batch, past + seq,
//     4] f = c[:, 0:1]                         k4_first    (needs past + seq >=
//     1)
//     -> all = c, first = f
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TESTS_UNIT_RUNTIME_PLANTESTUTIL_H
#define TFC_TESTS_UNIT_RUNTIME_PLANTESTUTIL_H

#include "runtime/Executor.h"
#include "runtime/Plan.h"

#include <cstring>

namespace tfc::rt::test {

inline DimExpr sym(int32_t symbol, int64_t coeff = 1) {
  return DimExpr{0, {{symbol, coeff}}};
}
inline DimExpr lit(int64_t value) { return DimExpr::of(value); }

inline PlanValue makeValue(PlanValue::Kind kind, DType dtype,
                           std::vector<DimExpr> shape, std::string name = "",
                           int32_t index = 0) {
  PlanValue v;
  v.kind = kind;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.name = std::move(name);
  v.index = index;
  return v;
}

inline Plan makeToyPlan() {
  using K = PlanValue::Kind;
  Plan plan;
  plan.modelName = "toy";
  plan.kernels = {
      {"k0_gather", "tfc.gather", KernelFamily::DataMovement,
       "tfc.gather (tensor<10x4xf32>, tensor<?x?xi32>)", 2, 1},
      {"k1_mul", "tfc.mul", KernelFamily::Elementwise,
       "tfc.mul (tensor<?x?x4xf32>, tensor<f32>)", 2, 1},
      {"k2_mask", "tfc.where", KernelFamily::Elementwise,
       "tfc.where (tensor<?x?xi1>, ...)", 2, 1},
      {"k3_concat", "tfc.concat", KernelFamily::DataMovement,
       "tfc.concat {axis = 1}", 2, 1},
      {"k4_first", "tfc.slice", KernelFamily::DataMovement,
       "tfc.slice {axis = 1, start = 0, end = 1}", 1, 1},
  };
  plan.params = {{"wte", {10, 4}, DType::F32}};
  plan.constants = {*Tensor::fromF32({}, {2.0f})};

  PlanEntry fwd;
  fwd.name = "forward";
  fwd.symbols = {{"batch", 0, 0, 0}, {"seq", 0, 1, 8}};
  DimExpr b = sym(0), s = sym(1);
  fwd.values = {
      makeValue(K::Input, DType::I32, {b, s}, "", 0),            // 0 ids
      makeValue(K::Input, DType::Bool, {b, s}, "", 1),           // 1 mask
      makeValue(K::Param, DType::F32, {lit(10), lit(4)}, "wte"), // 2
      makeValue(K::Constant, DType::F32, {}, "", 0),             // 3 scale
      makeValue(K::Temp, DType::F32, {b, s, lit(4)}),            // 4 x
      makeValue(K::Temp, DType::F32, {b, s, lit(4)}),            // 5 y
      makeValue(K::Temp, DType::F32, {b, s, lit(4)}),            // 6 z
  };
  fwd.inputs = {0, 1};
  fwd.inputNames = {"ids", "mask"};
  fwd.outputs = {6};
  fwd.outputNames = {"hidden"};
  fwd.indexChecks = {{0, 10, "ids index wte"}};
  fwd.steps = {
      {0, {2, 0}, {4}, {}, "toy.tfm:3:5"},
      {1, {4, 3}, {5}, {4}, "toy.tfm:4:5"},
      {2, {1, 5}, {6}, {5}, "toy.tfm:5:5"},
  };
  plan.entries.push_back(fwd);

  PlanEntry ext;
  ext.name = "extend";
  ext.symbols = {{"batch", 0, 0, 0}, {"past", 0, 1, 0}, {"seq", 1, 1, 0}};
  DimExpr eb = sym(0), p = sym(1), es = sym(2);
  DimExpr total{0, {{1, 1}, {2, 1}}};
  ext.values = {
      makeValue(K::Input, DType::F32, {eb, p, lit(4)}, "", 0),  // 0 past
      makeValue(K::Input, DType::F32, {eb, es, lit(4)}, "", 1), // 1 x
      makeValue(K::Temp, DType::F32, {eb, total, lit(4)}),      // 2 c
      makeValue(K::Temp, DType::F32, {eb, lit(1), lit(4)}),     // 3 f
  };
  ext.inputs = {0, 1};
  ext.inputNames = {"past", "x"};
  ext.outputs = {2, 3};
  ext.outputNames = {"all", "first"};
  ext.dimChecks = {{total, 1, "slice [0, 1) of axis 1 at toy.tfm:9:7"}};
  ext.steps = {
      {3, {0, 1}, {2}, {}, "toy.tfm:8:7"},
      {4, {2}, {3}, {}, "toy.tfm:9:7"},
  };
  plan.entries.push_back(ext);
  return plan;
}

//===----------------------------------------------------------------------===//
// Fake kernels
//===----------------------------------------------------------------------===//

inline halide_buffer_t *arg(void **args, int i) {
  return static_cast<halide_buffer_t *>(args[i]);
}

inline int64_t elements(const halide_buffer_t *b) {
  int64_t n = 1;
  for (int i = 0; i < b->dimensions; ++i)
    n *= b->dim[i].extent;
  return n;
}

inline bool isType(const halide_buffer_t *b, halide_type_code_t code, int bits,
                   int rank) {
  return b->type.code == code && b->type.bits == bits && b->type.lanes == 1 &&
         b->dimensions == rank && b->host;
}

/// Dense row-major strides, as the executor must pass them.
inline bool isDense(const halide_buffer_t *b) {
  int64_t stride = 1;
  for (int i = 0; i < b->dimensions; ++i) {
    if (b->dim[i].stride != stride || b->dim[i].min != 0)
      return false;
    stride *= b->dim[i].extent;
  }
  return true;
}

inline int fakeGather(void **args) {
  halide_buffer_t *table = arg(args, 0), *ids = arg(args, 1),
                  *out = arg(args, 2);
  if (!isType(table, halide_type_float, 32, 2) ||
      !isType(ids, halide_type_int, 32, 2) ||
      !isType(out, halide_type_float, 32, 3) || !isDense(out) ||
      out->dim[0].extent != table->dim[0].extent ||
      out->dim[1].extent != ids->dim[0].extent ||
      out->dim[2].extent != ids->dim[1].extent)
    return -1;
  int64_t d = table->dim[0].extent;
  const float *t = reinterpret_cast<const float *>(table->host);
  const int32_t *id = reinterpret_cast<const int32_t *>(ids->host);
  float *o = reinterpret_cast<float *>(out->host);
  for (int64_t i = 0; i < elements(ids); ++i)
    std::memcpy(o + i * d, t + id[i] * d, sizeof(float) * size_t(d));
  return 0;
}

inline int fakeMul(void **args) {
  halide_buffer_t *x = arg(args, 0), *c = arg(args, 1), *out = arg(args, 2);
  if (!isType(x, halide_type_float, 32, 3) ||
      !isType(c, halide_type_float, 32, 0) ||
      !isType(out, halide_type_float, 32, 3) || elements(x) != elements(out))
    return -1;
  float scale = *reinterpret_cast<const float *>(c->host);
  for (int64_t i = 0; i < elements(x); ++i)
    reinterpret_cast<float *>(out->host)[i] =
        reinterpret_cast<const float *>(x->host)[i] * scale;
  return 0;
}

inline int fakeMask(void **args) {
  halide_buffer_t *m = arg(args, 0), *x = arg(args, 1), *out = arg(args, 2);
  // Bool tensors travel as uint8 (see halideTypeOf).
  if (!isType(m, halide_type_uint, 8, 2) ||
      !isType(x, halide_type_float, 32, 3) || elements(m) * 4 != elements(x))
    return -1;
  for (int64_t i = 0; i < elements(x); ++i)
    reinterpret_cast<float *>(out->host)[i] =
        m->host[i / 4] ? reinterpret_cast<const float *>(x->host)[i] : 0.0f;
  return 0;
}

inline int fakeConcat(void **args) {
  halide_buffer_t *a = arg(args, 0), *b = arg(args, 1), *out = arg(args, 2);
  if (!isType(a, halide_type_float, 32, 3) ||
      !isType(b, halide_type_float, 32, 3) ||
      out->dim[1].extent != a->dim[1].extent + b->dim[1].extent)
    return -1;
  int64_t batch = out->dim[2].extent,
          rowA = a->dim[1].stride * a->dim[1].extent,
          rowB = b->dim[1].stride * b->dim[1].extent;
  float *o = reinterpret_cast<float *>(out->host);
  for (int64_t i = 0; i < batch; ++i) {
    std::memcpy(o, a->host + i * rowA * 4, size_t(rowA) * 4);
    o += rowA;
    std::memcpy(o, b->host + i * rowB * 4, size_t(rowB) * 4);
    o += rowB;
  }
  return 0;
}

inline int fakeFirst(void **args) {
  halide_buffer_t *in = arg(args, 0), *out = arg(args, 1);
  if (in->dim[1].extent < 1 || out->dim[1].extent != 1)
    return -2;
  int64_t d = in->dim[0].extent;
  for (int64_t b = 0; b < out->dim[2].extent; ++b)
    std::memcpy(out->host + b * d * 4, in->host + b * in->dim[2].stride * 4,
                size_t(d) * 4);
  return 0;
}

inline std::vector<KernelFn> toyKernels() {
  return {fakeGather, fakeMul, fakeMask, fakeConcat, fakeFirst};
}

/// wte row r = [r, r + 0.25, r + 0.5, r + 0.75].
inline WeightMap toyWeights() {
  Tensor wte = *Tensor::zeros(DType::F32, {10, 4});
  for (int64_t i = 0; i < 40; ++i)
    wte.dataAs<float>()[i] = float(i / 4) + 0.25f * float(i % 4);
  return {{"wte", wte}};
}

} // namespace tfc::rt::test

#endif // TFC_TESTS_UNIT_RUNTIME_PLANTESTUTIL_H
