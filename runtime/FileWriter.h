//===- FileWriter.h - Write a file all-or-nothing ---------------*- C++ -*-===//
//
// The one home of tfc's file outputs (.safetensors, .npy, `tfc dump -o`,
// everything `tfc compile` and `tfc emit` write). The rule, stated for
// users in docs/runtime.md ("How outputs are written"):
//
//  - A regular file (or a new one) is written to a unique temporary name in
//    the same folder, "<name>.tmp.XXXXXX" (created with O_EXCL, so two
//    writers of the same path never share one), and renamed over the
//    target only when every byte was written and flushed. A full disk, an
//    error or an interrupted run leaves the old file untouched and no
//    temporary behind (on SIGINT/SIGTERM/SIGHUP too, once
//    installTempFileCleanup() has run).
//  - A symbolic link is followed: its final target is replaced as above, and
//    the link stays a link. A dangling link is refused.
//  - An existing character device or FIFO (/dev/null, /dev/stdout, a pipe)
//    is written to directly: it cannot be replaced, and renaming over it
//    would destroy it. Directories, block devices and sockets are refused.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_FILEWRITER_H
#define TFC_RUNTIME_FILEWRITER_H

#include "runtime/Status.h"

#include <cstddef>
#include <string>

namespace tfc::rt {

class AtomicFileWriter {
public:
  /// Opens a fresh temporary file next to `path` (or `path` itself when it
  /// is a device or FIFO; see above).
  static Expected<AtomicFileWriter> create(const std::string &path);

  AtomicFileWriter(AtomicFileWriter &&other) noexcept;
  AtomicFileWriter &operator=(AtomicFileWriter &&) = delete;
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~AtomicFileWriter();

  /// Writes all of `data`; any failure (EFBIG, ENOSPC, EIO) is an error
  /// naming the target, and discards the temporary file.
  Status write(const void *data, size_t size);
  /// Closes the temporary file and renames it to the target path.
  Status commit();

  /// The temporary file being written ("" for a device or after commit).
  const std::string &tempPath() const { return temp; }

private:
  AtomicFileWriter() = default;
  void discard();

  std::string target; // as the caller named it, for messages
  std::string final;  // the path renamed over (a symlink's target)
  std::string temp;
  int fd = -1;
  int registration = -1; // slot in the signal-cleanup registry
};

/// Writes `size` bytes to `path` with an AtomicFileWriter.
Status writeFileAtomically(const std::string &path, const void *data,
                           size_t size);

//===----------------------------------------------------------------------===//
// Cleanup on signals
//===----------------------------------------------------------------------===//

/// Registers `path` (a temporary file or an empty scratch folder) to be
/// removed if the process is killed by SIGINT, SIGTERM, SIGHUP or SIGQUIT.
/// Returns a handle for unregisterTempPath, or -1 when the registry is full
/// (the path is then simply not cleaned up on a signal).
int registerTempPath(const std::string &path);
void unregisterTempPath(int handle);

/// Removes every registered path (files with unlink, folders with rmdir,
/// newest first). Async-signal-safe; used by the signal handler and by
/// fatal-error handlers.
void removeTempPaths();

/// Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT that call
/// removeTempPaths() and then die of the same signal (the exit status stays
/// what the shell expects), and ignores SIGXFSZ so that a write past
/// RLIMIT_FSIZE fails with EFBIG (an error tfc reports) instead of killing
/// the process. Idempotent.
void installTempFileCleanup();

} // namespace tfc::rt

#endif // TFC_RUNTIME_FILEWRITER_H
