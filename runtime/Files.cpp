//===- Files.cpp - Low-level helpers of the file readers ------------------===//

#include "runtime/Files.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>

namespace tfc::rt {

int openForReading(const std::string &path) {
  int fd;
  do
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  while (fd < 0 && errno == EINTR);
  return fd;
}

const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO (pipe)";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

} // namespace tfc::rt
