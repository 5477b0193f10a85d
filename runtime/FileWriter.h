//===- FileWriter.h - Write a file all-or-nothing ---------------*- C++ -*-===//
//
// Outputs (.safetensors, .npy) are written to "<path>.tmp.<pid>" and renamed
// over `path` only when every byte was written and flushed. A full disk or an
// interrupted run therefore never leaves a truncated file that a later
// `tfc check` would misread as a real (wrong) result.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_FILEWRITER_H
#define TFC_RUNTIME_FILEWRITER_H

#include "runtime/Status.h"

#include <cstddef>
#include <cstdio>
#include <string>

namespace tfc::rt {

class AtomicFileWriter {
public:
  /// Opens the temporary file next to `path`.
  static Expected<AtomicFileWriter> create(const std::string &path);

  AtomicFileWriter(AtomicFileWriter &&other) noexcept;
  AtomicFileWriter &operator=(AtomicFileWriter &&) = delete;
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~AtomicFileWriter();

  Status write(const void *data, size_t size);
  /// Flushes, closes and renames the temporary file to the target path.
  Status commit();

private:
  AtomicFileWriter() = default;
  void discard();

  std::string target;
  std::string temp;
  std::FILE *fp = nullptr;
};

} // namespace tfc::rt

#endif // TFC_RUNTIME_FILEWRITER_H
