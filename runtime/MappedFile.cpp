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

Expected<FileReader> FileReader::open(const std::string &path,
                                      uint64_t maxBytes) {
  FileReader file;
  file.name = path;
  // A FIFO is refused below; openForReading does not wait for a writer.
  file.fd = openForReading(path);
  if (file.fd < 0)
    return systemError(path, "cannot open");
  struct stat st;
  if (::fstat(file.fd, &st) != 0)
    return systemError(path, "cannot stat");
  if (S_ISDIR(st.st_mode))
    return Status::error(path + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode))
    return Status::error(path + ": is " + fileKind(st.st_mode) +
                         ", not a regular file; tfc reads only regular files");
  file.length = static_cast<uint64_t>(st.st_size);
  if (file.length > maxBytes)
    return Status::error(path + ": is " + std::to_string(file.length) +
                         " bytes, more than the limit of " +
                         std::to_string(maxBytes));
  if (file.length > static_cast<uint64_t>(SIZE_MAX / 2))
    return Status::error(path + ": is too large to read (" +
                         std::to_string(file.length) + " bytes)");
  file.mtimeSec = st.st_mtim.tv_sec;
  file.mtimeNsec = st.st_mtim.tv_nsec;
  file.inode = static_cast<uint64_t>(st.st_ino);
  return Expected<FileReader>(std::move(file));
}

FileReader::FileReader(FileReader &&other) noexcept
    : name(std::move(other.name)), fd(other.fd), length(other.length),
      mtimeSec(other.mtimeSec), mtimeNsec(other.mtimeNsec),
      inode(other.inode) {
  other.fd = -1;
}

FileReader::~FileReader() {
  if (fd >= 0)
    ::close(fd);
}

/// A file that ends early was truncated while being read.
Status FileReader::read(uint64_t offset, void *dst, size_t bytes) const {
  uint8_t *buf = static_cast<uint8_t *>(dst);
  size_t done = 0;
  while (done < bytes) {
    // Linux reads at most 2 GiB per call.
    size_t chunk = std::min<size_t>(bytes - done, size_t(1) << 30);
    ssize_t n = ::pread(fd, buf + done, chunk,
                        static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return systemError(name, "cannot read");
    if (n == 0)
      return Status::error(name + ": the file shrank from " +
                           std::to_string(length) + " to " +
                           std::to_string(offset + done) +
                           " bytes while being read (is another program "
                           "rewriting it?)");
    done += static_cast<size_t>(n);
  }
  return Status::success();
}

Status FileReader::checkUnchanged() const {
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return systemError(name, "cannot stat");
  if (static_cast<uint64_t>(st.st_size) != length ||
      st.st_mtim.tv_sec != mtimeSec || st.st_mtim.tv_nsec != mtimeNsec ||
      static_cast<uint64_t>(st.st_ino) != inode)
    return Status::error(name + ": the file changed while being read (is "
                                "another program rewriting it?)");
  return Status::success();
}

Expected<std::shared_ptr<MappedFile>>
MappedFile::open(const std::string &path, uint64_t maxBytes) {
  Expected<FileReader> reader = FileReader::open(path, maxBytes);
  if (!reader)
    return reader.status();
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->name = path;
  const size_t size = static_cast<size_t>(reader->size());
  if (size == 0)
    return file;
  // Tensor storage (allocateBlock: 64-byte aligned, huge pages when large).
  size_t rounded = Tensor::alignUp(size);
  void *block = rounded ? allocateBlock(rounded) : nullptr;
  if (!block)
    return Status::error(path + ": out of memory reading the file (" +
                         std::to_string(size) + " bytes)");
  file->heap.reset(static_cast<uint8_t *>(block));
  TFC_RT_RETURN_IF_ERROR(reader->read(0, file->heap.get(), size));
  TFC_RT_RETURN_IF_ERROR(reader->checkUnchanged());
  file->length = size;
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
