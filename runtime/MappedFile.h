//===- MappedFile.h - Read-only file contents, memory-mapped ----*- C++ -*-===//
//
// Checkpoints are large (GPT-2 large is 3 GB of f32), so they are mmap'ed
// rather than read: loading is then O(header), pages come in on first touch,
// and f32 tensors can be handed to generated code as zero-copy views.
//
// The mapping is MAP_PRIVATE and writable: the file itself can never be
// modified through it, but a (mistaken) write by generated code into a weight
// buffer is a private copy-on-write rather than a segfault.
//
// Files that cannot be mapped (pipes, /dev/stdin) are read into memory
// instead, so callers never need to care which happened. An mmap failure of
// a regular file is reported, not retried as a read: that would only fail
// later for the same reason (usually lack of memory).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_MAPPEDFILE_H
#define TFC_RUNTIME_MAPPEDFILE_H

#include "runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace tfc::rt {

class MappedFile {
public:
  /// Maps (or reads) the whole file at `path`. Errors name the path and the
  /// system's reason ("No such file or directory", "is a directory").
  static Expected<std::shared_ptr<MappedFile>> open(const std::string &path);

  /// Wraps bytes already in memory (tests, fuzzers, embedded checkpoints).
  /// `displayName` is used in error messages in place of a path.
  static std::shared_ptr<MappedFile> fromBytes(std::vector<uint8_t> bytes,
                                               std::string displayName);

  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  const std::string &path() const { return name; }
  size_t size() const { return length; }
  /// Null only for an empty file.
  const uint8_t *data() const { return bytes; }
  uint8_t *data() { return bytes; }
  /// True when the contents are an mmap of the file (not a heap copy).
  bool isMapped() const { return mapped; }

private:
  MappedFile() = default;

  std::string name;
  uint8_t *bytes = nullptr;
  size_t length = 0;
  bool mapped = false;
  struct FreeDeleter {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, FreeDeleter> heap; // Contents read from a pipe.
  std::vector<uint8_t> owned;                 // Contents from fromBytes().
};

} // namespace tfc::rt

#endif // TFC_RUNTIME_MAPPEDFILE_H
