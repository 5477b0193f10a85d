//===- Npy.h - Writing tensors as NumPy .npy files --------------*- C++ -*-===//
//
// `tfc run --output x.npy` writes one tensor in the NumPy format so results
// can be inspected with a one-liner (`numpy.load("x.npy")`) without any
// safetensors dependency. Format version 1.0:
//
//   "\x93NUMPY" 0x01 0x00 <u16 LE header length>
//   "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" spaces "\n"
//   row-major little-endian data
//
// The header is padded so that the data starts at a multiple of 64 bytes, as
// NumPy itself does (it lets numpy.load memory-map the array aligned).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_NPY_H
#define TFC_RUNTIME_NPY_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt {

/// NumPy's type string for a dtype ("<f4", "<i8", "|b1", ...), or null for
/// types NumPy lacks (bf16).
const char *npyDescr(DType dtype);

/// The bytes of a .npy v1.0 file holding `tensor`. Every dtype but bf16 is
/// accepted (bf16 has no NumPy type: convert with Tensor::toF32 first).
Expected<std::vector<uint8_t>> serializeNpy(const Tensor &tensor);

/// Writes `tensor` to `path` as .npy v1.0 (all-or-nothing, see FileWriter.h).
Status writeNpy(const std::string &path, const Tensor &tensor);

} // namespace tfc::rt

#endif // TFC_RUNTIME_NPY_H
