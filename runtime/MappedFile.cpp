//===- MappedFile.cpp - A file's contents, read whole into memory ---------===//

#include "runtime/MappedFile.h"

#include "runtime/Files.h"
#include "runtime/Tensor.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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

bool sameVersion(const struct stat &a, const struct stat &b) {
  return a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec && a.st_ino == b.st_ino;
}

/// Reads exactly `size` bytes at offset 0 of `fd` into `buf`. A file that
/// ends early was truncated while being read.
Status readExactly(int fd, uint8_t *buf, size_t size, const std::string &path) {
  size_t done = 0;
  while (done < size) {
    // Linux reads at most 2 GiB per call.
    size_t chunk = std::min<size_t>(size - done, size_t(1) << 30);
    ssize_t n = ::pread(fd, buf + done, chunk, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return systemError(path, "cannot read");
    if (n == 0)
      return Status::error(path + ": the file shrank from " +
                           std::to_string(size) + " to " +
                           std::to_string(done) +
                           " bytes while being read (is another program "
                           "rewriting it?)");
    done += static_cast<size_t>(n);
  }
  return Status::success();
}
} // namespace

Expected<std::shared_ptr<MappedFile>>
MappedFile::open(const std::string &path, uint64_t maxBytes) {
  // A FIFO is refused below; openForReading does not wait for a writer.
  int fd = openForReading(path);
  if (fd < 0)
    return systemError(path, "cannot open");
  FdCloser closer{fd};

  struct stat before;
  if (::fstat(fd, &before) != 0)
    return systemError(path, "cannot stat");
  if (S_ISDIR(before.st_mode))
    return Status::error(path + ": is a directory, not a file");
  if (!S_ISREG(before.st_mode))
    return Status::error(path + ": is " + fileKind(before.st_mode) +
                         ", not a regular file; tfc reads only regular files");
  const uint64_t size = static_cast<uint64_t>(before.st_size);
  if (size > maxBytes)
    return Status::error(path + ": is " + std::to_string(size) +
                         " bytes, more than the limit of " +
                         std::to_string(maxBytes));
  if (size > static_cast<uint64_t>(SIZE_MAX / 2))
    return Status::error(path + ": is too large to read (" +
                         std::to_string(size) + " bytes)");

  std::shared_ptr<MappedFile> file(new MappedFile());
  file->name = path;
  if (size == 0)
    return file;
  // Tensor storage (allocateBlock: 64-byte aligned, huge pages when large):
  // f32 tensors stored at aligned offsets are handed out as views of this
  // block, and a decode step streams them all.
  size_t rounded = (static_cast<size_t>(size) + Tensor::kAlignment - 1) /
                   Tensor::kAlignment * Tensor::kAlignment;
  void *block = allocateBlock(rounded);
  if (!block)
    return Status::error(path + ": out of memory reading the file (" +
                         std::to_string(size) + " bytes)");
  file->heap.reset(static_cast<uint8_t *>(block));
  TFC_RT_RETURN_IF_ERROR(
      readExactly(fd, file->heap.get(), static_cast<size_t>(size), path));

  struct stat after;
  if (::fstat(fd, &after) != 0)
    return systemError(path, "cannot stat");
  if (!sameVersion(before, after))
    return Status::error(path + ": the file changed while being read (is "
                                "another program rewriting it?)");
  file->length = static_cast<size_t>(size);
  file->bytes = file->heap.get();
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

} // namespace tfc::rt
