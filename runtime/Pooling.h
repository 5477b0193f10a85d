//===- Pooling.h - Sentence embeddings from token states --------*- C++ -*-===//
//
// What sentence-transformers does after the encoder for models such as
// all-MiniLM-L6-v2 (Pooling with pooling_mode_mean_tokens, then Normalize):
// the mean of the token states over the attention mask, then division by
// the L2 norm. Models can also compute this in the graph (an `embed` entry);
// these are for entries that return token states.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_POOLING_H
#define TFC_RUNTIME_POOLING_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"

namespace tfc::rt {

/// [batch, seq, d] states and a [batch, seq] mask (bool or integer, nonzero
/// = real token) -> [batch, d] means over the real tokens (a row with no
/// real token is all zeros, as the clamp of the count to 1e-9 gives).
Expected<Tensor> meanPool(const Tensor &states, const Tensor &mask);

/// [batch, d] rows divided by max(L2 norm, 1e-12), as torch's
/// F.normalize(p=2, dim=1) does.
Status l2Normalize(Tensor &rows);

/// Cosine similarity of two equally long vectors (0 if either is zero).
double cosineSimilarity(const float *a, const float *b, size_t n);

} // namespace tfc::rt

#endif // TFC_RUNTIME_POOLING_H
