//===- Files.h - Low-level helpers of the file readers ----------*- C++ -*-===//
//
// What the readers of the project share below their own policies: the
// runtime's MappedFile (checkpoints, inputs) and the frontend's ModelLoader
// (model sources). Plain POSIX; no allocation, no messages of their own.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_FILES_H
#define TFC_RUNTIME_FILES_H

#include <string>
#include <sys/types.h>

namespace tfc::rt {

/// Opens `path` read-only (close-on-exec, non-blocking, so that opening a
/// FIFO does not wait for a writer; regular files ignore the flag), retrying
/// when a signal interrupts the call. A file descriptor, or -1 with errno.
int openForReading(const std::string &path);

/// What a file that is not a regular one is, from its st_mode: "a
/// directory", "a character device", "a block device", "a FIFO (pipe)", "a
/// socket", or "not a regular file".
const char *fileKind(mode_t mode);

} // namespace tfc::rt

#endif // TFC_RUNTIME_FILES_H
