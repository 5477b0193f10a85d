//===- Npy.cpp - Writing tensors as NumPy .npy files ----------------------===//

#include "runtime/Npy.h"

#include "runtime/FileWriter.h"

namespace tfc::rt {

const char *npyDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::F64:
    return "<f8";
  case DType::I64:
    return "<i8";
  case DType::I32:
    return "<i4";
  case DType::I16:
    return "<i2";
  case DType::I8:
    return "|i1";
  case DType::U8:
    return "|u1";
  case DType::Bool:
    return "|b1";
  case DType::BF16:
    return nullptr;
  }
  return nullptr;
}

/// Magic, version and padded header: everything before the data.
static Expected<std::string> npyPrefix(const Tensor &tensor) {
  if (tensor.isNull())
    return Status::error("cannot write a null tensor as .npy");
  const char *descr = npyDescr(tensor.dtype());
  if (!descr)
    return Status::error(std::string("NumPy has no ") +
                         dtypeName(tensor.dtype()) +
                         " type; convert the tensor to f32 first");

  // Python tuple syntax: "()" for a scalar, "(5,)" for rank 1.
  std::string shape = "(";
  for (size_t i = 0; i < tensor.rank(); ++i) {
    if (i)
      shape += ", ";
    shape += std::to_string(tensor.dim(i));
  }
  if (tensor.rank() == 1)
    shape += ",";
  shape += ")";

  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  // 6 magic + 2 version + 2 length bytes precede the dict; the dict ends in
  // '\n' and is space-padded so the total is a multiple of 64.
  const size_t fixed = 10;
  size_t total = fixed + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  if (dict.size() > 0xFFFF)
    return Status::error("tensor rank " + std::to_string(tensor.rank()) +
                         " is too large for a .npy v1.0 header");

  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>((dict.size() >> 8) & 0xFF);
  out += dict;
  return out;
}

Expected<std::vector<uint8_t>> serializeNpy(const Tensor &tensor) {
  Expected<std::string> prefix = npyPrefix(tensor);
  if (!prefix)
    return prefix.status();
  std::vector<uint8_t> out(prefix->begin(), prefix->end());
  const auto *p = static_cast<const uint8_t *>(tensor.data());
  out.insert(out.end(), p, p + tensor.byteSize());
  return out;
}

Status writeNpy(const std::string &path, const Tensor &tensor) {
  Expected<std::string> prefix = npyPrefix(tensor);
  if (!prefix)
    return prefix.status().withContext("cannot write '" + path + "'");
  Expected<AtomicFileWriter> w = AtomicFileWriter::create(path);
  if (!w)
    return w.status();
  TFC_RT_RETURN_IF_ERROR(w->write(prefix->data(), prefix->size()));
  TFC_RT_RETURN_IF_ERROR(w->write(tensor.data(), tensor.byteSize()));
  return w->commit();
}

} // namespace tfc::rt
