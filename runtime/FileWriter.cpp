//===- FileWriter.cpp - Write a file all-or-nothing -----------------------===//

#include "runtime/FileWriter.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tfc::rt {

static Status systemError(const std::string &path, const char *what) {
  return Status::error(std::string("cannot ") + what + " '" + path +
                       "': " + std::strerror(errno));
}

namespace {

/// Where the bytes go: `path` (after following symlinks), through a
/// temporary file unless `direct` (a device or FIFO, written in place).
struct Destination {
  std::string path;
  bool direct = false;
  mode_t mode = 0; // of an existing regular file, kept by the new one
};

Expected<Destination> resolveDestination(const std::string &path) {
  Destination dest{path};
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return dest; // a new file
    return systemError(path, "write");
  }
  if (S_ISLNK(st.st_mode)) {
    char resolved[PATH_MAX];
    if (!::realpath(path.c_str(), resolved)) {
      if (errno == ENOENT)
        return Status::error("cannot write '" + path +
                             "': it is a symbolic link to a missing file");
      if (errno == ELOOP)
        return Status::error("cannot write '" + path +
                             "': it is a symbolic link loop");
      return systemError(path, "write");
    }
    dest.path = resolved;
    if (::stat(dest.path.c_str(), &st) != 0)
      return systemError(path, "write");
  }
  if (S_ISREG(st.st_mode)) {
    dest.mode = st.st_mode & 07777;
    return dest;
  }
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    dest.direct = true;
    return dest;
  }
  return Status::error("cannot write '" + path + "': it is " +
                       (S_ISDIR(st.st_mode) ? "a directory"
                                            : "neither a regular file, a "
                                              "character device nor a FIFO"));
}

/// Six characters that make a temporary name unique with high probability;
/// O_EXCL makes it certain.
std::string uniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  uint64_t x = static_cast<uint64_t>(::getpid()) * 0x9E3779B97F4A7C15ull ^
               static_cast<uint64_t>(std::chrono::steady_clock::now()
                                         .time_since_epoch()
                                         .count()) ^
               (counter.fetch_add(1) << 40);
  // splitmix64's finalizer.
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  static const char kChars[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string s;
  for (int i = 0; i < 6; ++i, x /= 62)
    s += kChars[x % 62];
  return s;
}

int openRetryingEintr(const char *path, int flags, mode_t mode) {
  int fd;
  do
    fd = ::open(path, flags, mode);
  while (fd < 0 && errno == EINTR);
  return fd;
}

} // namespace

Expected<AtomicFileWriter> AtomicFileWriter::create(const std::string &path) {
  if (path.empty())
    return Status::error("cannot write a file with an empty name");
  Expected<Destination> dest = resolveDestination(path);
  if (!dest)
    return dest.status();
  AtomicFileWriter w;
  w.target = path;
  w.final = dest->path;
  if (dest->direct) {
    w.fd = openRetryingEintr(w.final.c_str(), O_WRONLY | O_CLOEXEC, 0);
    if (w.fd < 0)
      return systemError(path, "open for writing");
    return Expected<AtomicFileWriter>(std::move(w));
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string temp = w.final + ".tmp." + uniqueSuffix();
    // Registered before it exists: a signal between open and registration
    // must not leave it behind.
    int slot = registerTempPath(temp);
    int fd = openRetryingEintr(temp.c_str(),
                               O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      if (dest->mode)
        (void)::fchmod(fd, dest->mode);
      w.fd = fd;
      w.temp = temp;
      w.registration = slot;
      return Expected<AtomicFileWriter>(std::move(w));
    }
    int error = errno;
    unregisterTempPath(slot);
    if (error != EEXIST) {
      errno = error;
      return systemError(path, "open for writing");
    }
  }
  return Status::error("cannot write '" + path +
                       "': no free temporary name next to it");
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter &&other) noexcept
    : target(std::move(other.target)), final(std::move(other.final)),
      temp(std::move(other.temp)), fd(other.fd),
      registration(other.registration) {
  other.fd = -1;
  other.temp.clear();
  other.registration = -1;
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
  if (!temp.empty()) {
    ::unlink(temp.c_str());
    temp.clear();
  }
  unregisterTempPath(registration);
  registration = -1;
}

Status AtomicFileWriter::write(const void *data, size_t size) {
  if (fd < 0)
    return Status::error("cannot write '" + target + "': file is closed");
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      Status s = systemError(target, "write");
      discard();
      return s;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::success();
}

Status AtomicFileWriter::commit() {
  if (fd < 0)
    return Status::error("cannot write '" + target + "': file is closed");
  // Some file systems (NFS) report a full disk only when the file is closed.
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0) {
    Status s = systemError(target, "write");
    discard();
    return s;
  }
  if (temp.empty())
    return Status::success(); // written in place (a device or FIFO)
  if (std::rename(temp.c_str(), final.c_str()) != 0) {
    Status s = systemError(target, "rename a temporary file to");
    discard();
    return s;
  }
  temp.clear();
  unregisterTempPath(registration);
  registration = -1;
  return Status::success();
}

Status writeFileAtomically(const std::string &path, const void *data,
                           size_t size) {
  Expected<AtomicFileWriter> w = AtomicFileWriter::create(path);
  if (!w)
    return w.status();
  TFC_RT_RETURN_IF_ERROR(w->write(data, size));
  return w->commit();
}

//===----------------------------------------------------------------------===//
// Cleanup on signals
//===----------------------------------------------------------------------===//

namespace {

/// A fixed table, so that the signal handler touches no allocator and no
/// lock: a slot is free (0), being filled (1) or holds a path (2).
constexpr int kTempSlots = 128;
struct TempSlot {
  std::atomic<int> state{0};
  char path[PATH_MAX];
};
TempSlot tempSlots[kTempSlots];

extern "C" void removeTempPathsAndDie(int sig) {
  int savedErrno = errno;
  removeTempPaths();
  ::signal(sig, SIG_DFL);
  // Delivered when this handler returns (the signal is blocked until then).
  ::raise(sig);
  errno = savedErrno;
}

} // namespace

int registerTempPath(const std::string &path) {
  if (path.empty() || path.size() >= PATH_MAX)
    return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (!tempSlots[i].state.compare_exchange_strong(expected, 1))
      continue;
    std::memcpy(tempSlots[i].path, path.c_str(), path.size() + 1);
    tempSlots[i].state.store(2);
    return i;
  }
  return -1;
}

void unregisterTempPath(int handle) {
  if (handle >= 0 && handle < kTempSlots)
    tempSlots[handle].state.store(0);
}

void removeTempPaths() {
  // Files first, then the (by now empty) folders that held them.
  for (int pass = 0; pass < 2; ++pass)
    for (int i = kTempSlots - 1; i >= 0; --i) {
      if (tempSlots[i].state.load() != 2)
        continue;
      if (pass == 0 ? ::unlink(tempSlots[i].path) == 0
                    : ::rmdir(tempSlots[i].path) == 0)
        tempSlots[i].state.store(0);
    }
}

void installTempFileCleanup() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true))
    return;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN)
      continue; // e.g. SIGHUP under nohup: stay ignored
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = removeTempPathsAndDie;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
  ::signal(SIGXFSZ, SIG_IGN);
}

} // namespace tfc::rt
