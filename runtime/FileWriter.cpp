//===- FileWriter.cpp - Write a file all-or-nothing -----------------------===//

#include "runtime/FileWriter.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace tfc::rt {

static Status systemError(const std::string &path, const char *what) {
  return Status::error(std::string("cannot ") + what + " '" + path +
                       "': " + std::strerror(errno));
}

Expected<AtomicFileWriter> AtomicFileWriter::create(const std::string &path) {
  if (path.empty())
    return Status::error("cannot write a file with an empty name");
  AtomicFileWriter w;
  w.target = path;
  w.temp = path + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  w.fp = std::fopen(w.temp.c_str(), "wb");
  if (!w.fp)
    return systemError(path, "open for writing");
  return Expected<AtomicFileWriter>(std::move(w));
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter &&other) noexcept
    : target(std::move(other.target)), temp(std::move(other.temp)),
      fp(other.fp) {
  other.fp = nullptr;
  other.temp.clear();
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() {
  if (fp) {
    std::fclose(fp);
    fp = nullptr;
  }
  if (!temp.empty()) {
    std::remove(temp.c_str());
    temp.clear();
  }
}

Status AtomicFileWriter::write(const void *data, size_t size) {
  if (!fp)
    return Status::error("cannot write '" + target + "': file is closed");
  if (size != 0 && std::fwrite(data, 1, size, fp) != size) {
    Status s = systemError(target, "write");
    discard();
    return s;
  }
  return Status::success();
}

Status AtomicFileWriter::commit() {
  if (!fp)
    return Status::error("cannot write '" + target + "': file is closed");
  // fclose flushes; a full disk often only shows up here.
  bool flushed = std::fflush(fp) == 0;
  bool closed = std::fclose(fp) == 0;
  fp = nullptr;
  if (!flushed || !closed) {
    Status s = systemError(target, "write");
    discard();
    return s;
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    Status s = systemError(target, "rename a temporary file to");
    discard();
    return s;
  }
  temp.clear();
  return Status::success();
}

} // namespace tfc::rt
