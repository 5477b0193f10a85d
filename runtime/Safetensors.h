//===- Safetensors.h - Reading and writing .safetensors files ---*- C++ -*-===//
//
// The safetensors format (https://github.com/huggingface/safetensors):
//
//   [8 bytes]  N, little-endian u64: length of the header
//   [N bytes]  JSON object, UTF-8, possibly padded with trailing spaces:
//                { "__metadata__": {"key": "value", ...},        (optional)
//                  "<name>": { "dtype": "F32", "shape": [2, 3],
//                              "data_offsets": [begin, end] }, ... }
//   [rest]     data section; each tensor's bytes are [begin, end) relative
//              to its start, row-major, little-endian
//
// Checkpoints are untrusted input: every field is validated when the file is
// opened (before any tensor is touched) and every refusal names the file and,
// where there is one, the tensor. A file that opens is safe to index.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_SAFETENSORS_H
#define TFC_RUNTIME_SAFETENSORS_H

#include "runtime/MappedFile.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tfc::rt {

/// Largest header accepted. The reference implementation uses the same limit
/// (100 MB); a larger claim means a corrupt or hostile file, and refusing it
/// early avoids parsing gigabytes of "JSON".
constexpr uint64_t kMaxSafetensorsHeaderSize = 100'000'000;

/// The safetensors spelling of a dtype ("F32", "BF16", "BOOL", ...).
const char *safetensorsDTypeName(DType dtype);

/// One tensor's header entry, validated.
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  /// Byte range [begin, end) relative to the start of the data section.
  uint64_t begin = 0;
  uint64_t end = 0;
};

/// An opened, validated .safetensors file. Cheap to copy (the tensors are
/// shared); tensors handed out keep their storage alive on their own. A file
/// opened by path is read whole when it is opened, each tensor into an
/// owned block of its own, so a weight that a model stops needing (one that
/// only the executor's weight prologue read) frees its memory alone; tensors
/// of bytes already in memory (fromBytes, fromMappedFile) are views of them.
class SafetensorsFile {
public:
  /// Reads `path` and validates its header and offsets. Refuses (with the
  /// path and tensor in the message): files shorter than 8 bytes, header
  /// lengths beyond the file or above kMaxSafetensorsHeaderSize, headers that
  /// are not a JSON object (or are nested absurdly deep, or repeat a key),
  /// unknown or unsupported dtypes, missing or ill-typed fields, negative or
  /// overflowing shapes, offsets past the data section, begin > end, byte
  /// sizes that disagree with shape and dtype, and overlapping tensors.
  /// Gaps between tensors and trailing bytes are tolerated.
  static Expected<SafetensorsFile> open(const std::string &path);

  /// Same as open() for bytes already in memory; `displayName` stands in for
  /// the path in messages.
  static Expected<SafetensorsFile> fromBytes(std::vector<uint8_t> bytes,
                                             const std::string &displayName);

  /// Validates the contents of an already mapped file.
  static Expected<SafetensorsFile>
  fromMappedFile(std::shared_ptr<MappedFile> file);

  const std::string &path() const { return name; }

  /// Tensor names, sorted.
  std::vector<std::string> names() const;
  size_t size() const { return entries.size(); }
  bool contains(const std::string &name) const {
    return entries.count(name) != 0;
  }
  /// The validated entry, or null when there is no such tensor.
  const SafetensorsEntry *find(const std::string &name) const;
  /// All entries by name.
  const std::map<std::string, SafetensorsEntry> &getEntries() const {
    return entries;
  }
  /// The "__metadata__" map (empty when absent).
  const std::map<std::string, std::string> &metadata() const { return meta; }

  /// The tensor in its stored dtype, sharing the bytes read (no copy). Of
  /// bytes in memory: a view when they are aligned for the dtype, which they
  /// are in every file written by the reference implementation or by
  /// writeSafetensors; otherwise a copy.
  Expected<Tensor> tensor(const std::string &name) const;

  /// The tensor as f32: tensor(name) for f32 data, otherwise a converted
  /// owned copy (f16, bf16 exactly; f64 rounded). Integer and bool tensors
  /// are refused.
  Expected<Tensor> loadF32(const std::string &name) const;

private:
  SafetensorsFile() = default;
  Status parseHeader(const char *header, uint64_t headerLen,
                     uint64_t fileSize);
  Status readTensors(const FileReader &reader);
  Status viewTensors(const std::shared_ptr<MappedFile> &file);

  std::string name;       // The path, or the display name of bytes.
  uint64_t dataStart = 0; // 8 + header length
  std::map<std::string, SafetensorsEntry> entries;
  /// Each entry's tensor, in its stored dtype.
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> meta;
};

/// Writes `tensors` to `path` in the layout of the reference implementation:
/// compact JSON header ("__metadata__" first when non-empty, then each tensor
/// with "dtype", "shape", "data_offsets"), padded with spaces to a multiple of
/// 8 bytes, followed by the data. Tensors are ordered as the reference
/// orders them (by dtype: i64, f64, f32, i32, bf16, f16, i16, i8, u8, bool;
/// then by name), so the output is byte-identical to
/// `safetensors.numpy.save` and every tensor is naturally aligned in the
/// file, which lets readers map it zero-copy.
/// The file is written to a temporary name and renamed into place, so a
/// failed write never leaves a truncated checkpoint behind.
Status
writeSafetensors(const std::string &path,
                 const std::map<std::string, Tensor> &tensors,
                 const std::map<std::string, std::string> &metadata = {});

/// The bytes writeSafetensors would write (used by it, and by tests that
/// need a valid file to corrupt).
Expected<std::vector<uint8_t>>
serializeSafetensors(const std::map<std::string, Tensor> &tensors,
                     const std::map<std::string, std::string> &metadata = {});

} // namespace tfc::rt

#endif // TFC_RUNTIME_SAFETENSORS_H
