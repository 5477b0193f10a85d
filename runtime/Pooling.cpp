//===- Pooling.cpp - Sentence embeddings from token states ----------------===//

#include "runtime/Pooling.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tfc::rt {

namespace {

bool isReal(const Tensor &mask, int64_t i) {
  switch (mask.dtype()) {
  case DType::I32:
    return mask.dataAs<int32_t>()[i] != 0;
  case DType::I64:
    return mask.dataAs<int64_t>()[i] != 0;
  default: // Bool, U8, I8: one byte
    return static_cast<const uint8_t *>(mask.data())[i] != 0;
  }
}

} // namespace

Expected<Tensor> meanPool(const Tensor &states, const Tensor &mask) {
  if (states.dtype() != DType::F32 || states.rank() != 3)
    return Status::error("mean pooling needs f32[batch, seq, d] states, got " +
                         states.typeString());
  const Shape &s = states.shape();
  DType m = mask.dtype();
  bool integer = m == DType::Bool || m == DType::U8 || m == DType::I8 ||
                 m == DType::I32 || m == DType::I64;
  if (!integer || mask.rank() != 2 || mask.shape()[0] != s[0] ||
      mask.shape()[1] != s[1])
    return Status::error("mean pooling needs a [" + std::to_string(s[0]) +
                         ", " + std::to_string(s[1]) +
                         "] integer or bool mask, got " + mask.typeString());
  Expected<Tensor> out = Tensor::zeros(DType::F32, {s[0], s[2]});
  if (!out)
    return out.status();
  const float *x = states.dataAs<float>();
  float *y = out->dataAs<float>();
  for (int64_t b = 0; b < s[0]; ++b) {
    double count = 0;
    std::vector<double> sum(static_cast<size_t>(s[2]), 0.0);
    for (int64_t t = 0; t < s[1]; ++t) {
      if (!isReal(mask, b * s[1] + t))
        continue;
      count += 1;
      const float *row = x + (b * s[1] + t) * s[2];
      for (int64_t j = 0; j < s[2]; ++j)
        sum[static_cast<size_t>(j)] += row[j];
    }
    double denominator = std::max(count, 1e-9);
    for (int64_t j = 0; j < s[2]; ++j)
      y[b * s[2] + j] =
          static_cast<float>(sum[static_cast<size_t>(j)] / denominator);
  }
  return out;
}

Status l2Normalize(Tensor &rows) {
  if (rows.dtype() != DType::F32 || rows.rank() != 2)
    return Status::error("L2 normalization needs f32[batch, d], got " +
                         rows.typeString());
  int64_t n = rows.shape()[0], d = rows.shape()[1];
  float *y = rows.dataAs<float>();
  for (int64_t b = 0; b < n; ++b) {
    double norm = 0;
    for (int64_t j = 0; j < d; ++j)
      norm += static_cast<double>(y[b * d + j]) * y[b * d + j];
    double scale = 1.0 / std::max(std::sqrt(norm), 1e-12);
    for (int64_t j = 0; j < d; ++j)
      y[b * d + j] = static_cast<float>(y[b * d + j] * scale);
  }
  return Status::success();
}

double cosineSimilarity(const float *a, const float *b, size_t n) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < n; ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
}

} // namespace tfc::rt
