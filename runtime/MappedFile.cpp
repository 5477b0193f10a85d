//===- MappedFile.cpp - Read-only file contents, memory-mapped ------------===//

#include "runtime/MappedFile.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tfc::rt {

static Status systemError(const std::string &path, const char *what) {
  return Status::error(path + ": " + what + ": " + std::strerror(errno));
}

namespace {
/// Closes a file descriptor on every return path.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0)
      ::close(fd);
  }
};
} // namespace

Expected<std::shared_ptr<MappedFile>>
MappedFile::open(const std::string &path) {
  int fd;
  do
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return systemError(path, "cannot open");
  FdCloser closer{fd};

  struct stat st;
  if (::fstat(fd, &st) != 0)
    return systemError(path, "cannot stat");
  if (S_ISDIR(st.st_mode))
    return Status::error(path + ": is a directory, not a file");

  std::shared_ptr<MappedFile> file(new MappedFile());
  file->name = path;

  if (S_ISREG(st.st_mode)) {
    file->length = static_cast<size_t>(st.st_size);
    if (file->length == 0)
      return file; // mmap of length 0 is an error; an empty file is not.
    // MAP_NORESERVE: a writable private mapping would otherwise be charged
    // in full against the kernel's overcommit limit, and mapping a checkpoint
    // larger than RAM + swap (only a fraction of it is ever resident) would
    // fail for no reason.
    void *p = ::mmap(nullptr, file->length, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_NORESERVE, fd, 0);
    if (p == MAP_FAILED)
      return systemError(path, "cannot map");
    file->bytes = static_cast<uint8_t *>(p);
    file->mapped = true;
    return file;
  }

  // Not mappable (pipe, character device): read it all. The buffer is grown
  // with realloc so that running out of memory is an error value, not a
  // std::bad_alloc that -fno-exceptions code cannot catch.
  size_t capacity = 0, size = 0;
  uint8_t *buf = nullptr;
  for (;;) {
    if (size == capacity) {
      size_t grown = capacity ? capacity * 2 : (size_t(1) << 16);
      auto *q = static_cast<uint8_t *>(std::realloc(buf, grown));
      if (!q) {
        std::free(buf);
        return Status::error(path + ": out of memory reading the file");
      }
      buf = q;
      capacity = grown;
    }
    ssize_t n = ::read(fd, buf + size, capacity - size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      Status s = systemError(path, "cannot read");
      std::free(buf);
      return s;
    }
    if (n == 0)
      break;
    size += static_cast<size_t>(n);
  }
  file->heap.reset(buf);
  file->length = size;
  file->bytes = size ? buf : nullptr;
  return file;
}

std::shared_ptr<MappedFile> MappedFile::fromBytes(std::vector<uint8_t> bytes,
                                                  std::string displayName) {
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->name = std::move(displayName);
  file->owned = std::move(bytes);
  file->length = file->owned.size();
  file->bytes = file->owned.empty() ? nullptr : file->owned.data();
  return file;
}

MappedFile::~MappedFile() {
  if (mapped)
    ::munmap(bytes, length);
}

} // namespace tfc::rt
