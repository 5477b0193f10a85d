//===- MappedFileTest.cpp - Mapping and reading whole files ---------------===//

#include "runtime/MappedFile.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfc::rt;
using namespace tfc::rt::test;

TEST(MappedFile, ReadsRegularFiles) {
  TempDir tmp;
  writeBytes(tmp.path("a"), {1, 2, 3});
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(tmp.path("a"));
  ASSERT_TRUE(f.ok()) << f.message();
  ASSERT_EQ((*f)->size(), 3u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*f)->data()) % 64, 0u);
  EXPECT_EQ((*f)->data()[2], 3);
  EXPECT_EQ((*f)->path(), tmp.path("a"));

  // Writes go to a private copy, never to the file.
  (*f)->data()[0] = 42;
  EXPECT_EQ(readBytes(tmp.path("a"))[0], 1);
}

TEST(MappedFile, EmptyFileIsEmptyNotAnError) {
  TempDir tmp;
  writeBytes(tmp.path("e"), {});
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(tmp.path("e"));
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ((*f)->size(), 0u);
}

// A FIFO, a device or a socket is refused, whatever it would deliver:
// /dev/zero would be read until memory ran out, and opening a FIFO must not
// wait for a writer.
TEST(MappedFile, RefusesFilesThatAreNotRegular) {
  TempDir tmp;
  std::string fifo = tmp.path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(fifo);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.message(), fifo + ": is a FIFO (pipe), not a regular file; tfc "
                                "reads only regular files");
  Expected<std::shared_ptr<MappedFile>> z = MappedFile::open("/dev/zero");
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.message(), "/dev/zero: is a character device, not a regular "
                         "file; tfc reads only regular files");
  // A symlink is followed: what counts is what it points to.
  std::string link = tmp.path("zero-link");
  ASSERT_EQ(::symlink("/dev/zero", link.c_str()), 0);
  Expected<std::shared_ptr<MappedFile>> l = MappedFile::open(link);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.message().find("is a character device"), std::string::npos);
}

TEST(MappedFile, SizeLimitIsCheckedFirst) {
  TempDir tmp;
  writeBytes(tmp.path("big"), std::vector<uint8_t>(20, 7));
  Expected<std::shared_ptr<MappedFile>> f =
      MappedFile::open(tmp.path("big"), 16);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.message(),
            tmp.path("big") + ": is 20 bytes, more than the limit of 16");
  EXPECT_TRUE(MappedFile::open(tmp.path("big"), 20).ok());
}

// The contents are a snapshot: truncating or rewriting the file afterwards
// (what safetensors.save_file to the same path does) changes nothing and,
// above all, cannot raise SIGBUS as a truncated mapping would.
TEST(MappedFile, TruncatingTheFileWhileOpenIsHarmless) {
  TempDir tmp;
  std::string path = tmp.path("ckpt");
  std::vector<uint8_t> payload(3 * 4096 + 5);
  for (size_t i = 0; i < payload.size(); ++i)
    payload[i] = static_cast<uint8_t>(i * 13);
  writeBytes(path, payload);
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path);
  ASSERT_TRUE(f.ok()) << f.message();
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  writeBytes(path, {9, 9, 9});
  ASSERT_EQ((*f)->size(), payload.size());
  // Every byte, the last page included, is still readable and unchanged.
  EXPECT_EQ(std::memcmp((*f)->data(), payload.data(), payload.size()), 0);
}

TEST(MappedFile, ReportsMissingFilesAndDirectories) {
  TempDir tmp;
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(tmp.path("no"));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.message(),
            tmp.path("no") + ": cannot open: No such file or directory");
  Expected<std::shared_ptr<MappedFile>> d = MappedFile::open(tmp.root());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.message(), tmp.root() + ": is a directory, not a file");
}

TEST(MappedFile, FromBytes) {
  std::shared_ptr<MappedFile> f = MappedFile::fromBytes({5, 6}, "<mem>");
  EXPECT_EQ(f->size(), 2u);
  EXPECT_EQ(f->data()[1], 6);
  EXPECT_EQ(f->path(), "<mem>");
}
