//===- MappedFile.h - A file's contents, read whole into memory -*- C++ -*-===//
//
// Files tfc reads (tokenizer files here; checkpoints and input files
// through FileReader, tensor by tensor) are read once into memory tfc owns,
// 64-byte aligned (tensors are handed to generated code as zero-copy views
// of it). The name is historical: files used to be mmap'ed,
// but a mapped file that another process truncates (what
// `safetensors.save_file` to the same path does) kills the reader with
// SIGBUS on the next touch of a lost page, anywhere, in any kernel thread;
// and one rewritten in place changes the weights under a running model.
// Reading gives a snapshot instead: once open() returns, nothing that
// happens to the file can change or invalidate the bytes.
//
// open() reads exactly the size fstat reported and checks, after reading,
// that the file still has that size and modification time; a file that
// shrank, grew or was rewritten while being read is refused, naming it.
// Only regular files are read: directories, character and block devices
// (/dev/zero would never end), FIFOs and sockets are refused with a message
// that says what the path is. A size limit, when given, is checked before
// anything is allocated.
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

/// A regular file open for reading, in pieces, as one snapshot: open()
/// refuses what MappedFile::open refuses, read() refuses a file that ends
/// early, and checkUnchanged(), called after the last read, refuses one
/// whose size, modification time or inode differ from when it was opened.
/// MappedFile reads a file whole through it; a safetensors checkpoint reads
/// each tensor into storage of its own.
class FileReader {
public:
  static Expected<FileReader> open(const std::string &path,
                                   uint64_t maxBytes = UINT64_MAX);

  FileReader(FileReader &&other) noexcept;
  FileReader &operator=(FileReader &&) = delete;
  FileReader(const FileReader &) = delete;
  ~FileReader();

  const std::string &path() const { return name; }
  /// The size when opened.
  uint64_t size() const { return length; }
  /// Exactly `bytes` bytes at `offset` into `dst`.
  Status read(uint64_t offset, void *dst, size_t bytes) const;
  Status checkUnchanged() const;

private:
  FileReader() = default;

  std::string name;
  int fd = -1;
  uint64_t length = 0;
  /// fstat's st_size, st_mtim and st_ino when opened.
  int64_t mtimeSec = 0, mtimeNsec = 0;
  uint64_t inode = 0;
};

class MappedFile {
public:
  /// Reads the whole regular file at `path`. Errors name the path and the
  /// reason ("No such file or directory", "is a character device, not a
  /// regular file", "is 20 bytes, more than the limit of 16", "changed while
  /// being read").
  static Expected<std::shared_ptr<MappedFile>>
  open(const std::string &path, uint64_t maxBytes = UINT64_MAX);

  /// Wraps bytes already in memory (tests, fuzzers, embedded checkpoints).
  /// `displayName` is used in error messages in place of a path.
  static std::shared_ptr<MappedFile> fromBytes(std::vector<uint8_t> bytes,
                                               std::string displayName);

  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile() = default;

  const std::string &path() const { return name; }
  size_t size() const { return length; }
  /// Null only for an empty file. 64-byte aligned when read by open().
  const uint8_t *data() const { return bytes; }
  uint8_t *data() { return bytes; }

private:
  MappedFile() = default;

  std::string name;
  uint8_t *bytes = nullptr;
  size_t length = 0;
  struct FreeDeleter {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, FreeDeleter> heap; // Contents read by open().
  std::vector<uint8_t> owned;                 // Contents from fromBytes().
};

} // namespace tfc::rt

#endif // TFC_RUNTIME_MAPPEDFILE_H
