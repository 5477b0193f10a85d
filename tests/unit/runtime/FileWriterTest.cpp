//===- FileWriterTest.cpp - All-or-nothing file writes --------------------===//

#include "runtime/FileWriter.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace tfc::rt;
using namespace tfc::rt::test;

namespace {
/// The names in `dir`, without "." and "..".
std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..")
        names.push_back(name);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}
} // namespace

TEST(AtomicFileWriter, CommitReplacesTarget) {
  TempDir tmp;
  std::string path = tmp.path("f.bin");
  writeBytes(path, {9, 9, 9, 9, 9});
  {
    Expected<AtomicFileWriter> w = AtomicFileWriter::create(path);
    ASSERT_TRUE(w.ok()) << w.message();
    ASSERT_TRUE(w->write("ab", 2).ok());
    ASSERT_TRUE(w->write("c", 1).ok());
    // Until commit the old contents are intact.
    EXPECT_EQ(readBytes(path), (std::vector<uint8_t>{9, 9, 9, 9, 9}));
    ASSERT_TRUE(w->commit().ok());
  }
  EXPECT_EQ(readBytes(path), (std::vector<uint8_t>{'a', 'b', 'c'}));
  EXPECT_EQ(listDir(tmp.root()), std::vector<std::string>{"f.bin"});
}

TEST(AtomicFileWriter, AbandonedWriteLeavesNothing) {
  TempDir tmp;
  std::string path = tmp.path("g.bin");
  {
    Expected<AtomicFileWriter> w = AtomicFileWriter::create(path);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->write("x", 1).ok());
  }
  EXPECT_FALSE(fileExists(path));
  EXPECT_TRUE(listDir(tmp.root()).empty());
}

TEST(AtomicFileWriter, ReportsUnwritablePaths) {
  TempDir tmp;
  Expected<AtomicFileWriter> w =
      AtomicFileWriter::create(tmp.path("missing/dir/f.bin"));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.message().find("missing/dir/f.bin"), std::string::npos);
  EXPECT_NE(w.message().find("No such file or directory"), std::string::npos);
  EXPECT_FALSE(AtomicFileWriter::create("").ok());
}

// Two writers of one path (two `tfc compile -o DIR` at once) get different
// temporary files; each commit replaces the file with complete contents.
TEST(AtomicFileWriter, ConcurrentWritersOfOnePathDoNotCollide) {
  TempDir tmp;
  std::string path = tmp.path("same.bin");
  Expected<AtomicFileWriter> a = AtomicFileWriter::create(path);
  Expected<AtomicFileWriter> b = AtomicFileWriter::create(path);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->tempPath(), b->tempPath());
  ASSERT_TRUE(a->write("aaaa", 4).ok());
  ASSERT_TRUE(b->write("bb", 2).ok());
  ASSERT_TRUE(a->commit().ok());
  EXPECT_EQ(readBytes(path), (std::vector<uint8_t>{'a', 'a', 'a', 'a'}));
  ASSERT_TRUE(b->commit().ok());
  EXPECT_EQ(readBytes(path), (std::vector<uint8_t>{'b', 'b'}));
  EXPECT_EQ(listDir(tmp.root()), std::vector<std::string>{"same.bin"});

  // And from many threads at once.
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::vector<uint8_t> bytes(4096, static_cast<uint8_t>(t));
      EXPECT_TRUE(writeFileAtomically(path, bytes.data(), bytes.size()).ok());
    });
  for (std::thread &thread : threads)
    thread.join();
  std::vector<uint8_t> result = readBytes(path);
  ASSERT_EQ(result.size(), 4096u);
  EXPECT_EQ(std::count(result.begin(), result.end(), result[0]), 4096);
  EXPECT_EQ(listDir(tmp.root()), std::vector<std::string>{"same.bin"});
}

// The documented rule for -o onto a link: the link's target is replaced,
// the link stays.
TEST(AtomicFileWriter, WritesThroughSymlinks) {
  TempDir tmp;
  std::string target = tmp.path("real.bin"), link = tmp.path("link.bin");
  writeBytes(target, {1});
  ASSERT_EQ(::symlink("real.bin", link.c_str()), 0);
  ASSERT_TRUE(writeFileAtomically(link, "xy", 2).ok());
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(readBytes(target), (std::vector<uint8_t>{'x', 'y'}));

  std::string dangling = tmp.path("dangling");
  ASSERT_EQ(::symlink("nowhere", dangling.c_str()), 0);
  Status s = writeFileAtomically(dangling, "z", 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "cannot write '" + dangling +
                             "': it is a symbolic link to a missing file");
}

// Devices and FIFOs are written in place, never replaced; folders refused.
TEST(AtomicFileWriter, WritesDevicesInPlaceAndRefusesFolders) {
  TempDir tmp;
  ASSERT_TRUE(writeFileAtomically("/dev/null", "abc", 3).ok());
  struct stat st;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  Status s = writeFileAtomically(tmp.root(), "abc", 3);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "cannot write '" + tmp.root() + "': it is a directory");
}

// A write that fails (here: past RLIMIT_FSIZE, as on a full disk) is an
// error, leaves the old file as it was and removes the temporary file.
TEST(AtomicFileWriter, FailedWriteKeepsTheOldFile) {
  TempDir tmp;
  std::string path = tmp.path("keep.bin");
  writeBytes(path, {7, 7, 7});
  struct rlimit old;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto *previous = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::vector<uint8_t> big(4096, 1);
  Status s = writeFileAtomically(path, big.data(), big.size());
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, previous);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "cannot write '" + path + "': File too large");
  EXPECT_EQ(readBytes(path), (std::vector<uint8_t>{7, 7, 7}));
  EXPECT_EQ(listDir(tmp.root()), std::vector<std::string>{"keep.bin"});
}

// Killed by SIGTERM or SIGINT mid-write: the temporary file is removed and
// the process still dies of the signal.
TEST(AtomicFileWriter, SignalsRemoveTemporaryFiles) {
  for (int sig : {SIGTERM, SIGINT}) {
    TempDir tmp;
    std::string path = tmp.path("out.bin");
    std::string scratch = tmp.path("scratch");
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // A signal ignored at startup stays ignored (as under nohup); the
      // test runner may have started us with SIGINT ignored.
      ::signal(sig, SIG_DFL);
      installTempFileCleanup();
      Expected<AtomicFileWriter> w = AtomicFileWriter::create(path);
      if (!w.ok() || !w->write("partial", 7).ok())
        ::_exit(2);
      ::mkdir(scratch.c_str(), 0700);
      registerTempPath(scratch);
      ::raise(sig);
      ::_exit(3); // not reached
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << status;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_TRUE(listDir(tmp.root()).empty());
  }
}
