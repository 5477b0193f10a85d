//===- MappedFileTest.cpp - Mapping and reading whole files ---------------===//

#include "runtime/MappedFile.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sys/stat.h>
#include <thread>

using namespace tfc::rt;
using namespace tfc::rt::test;

TEST(MappedFile, MapsRegularFiles) {
  TempDir tmp;
  writeBytes(tmp.path("a"), {1, 2, 3});
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(tmp.path("a"));
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_TRUE((*f)->isMapped());
  ASSERT_EQ((*f)->size(), 3u);
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

TEST(MappedFile, ReadsPipes) {
  TempDir tmp;
  std::string fifo = tmp.path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // 200 KB forces the read buffer to grow a few times.
  std::vector<uint8_t> payload(200 * 1024);
  for (size_t i = 0; i < payload.size(); ++i)
    payload[i] = static_cast<uint8_t>(i * 7);
  std::thread writer([&] { writeBytes(fifo, payload); });
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(fifo);
  writer.join();
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_FALSE((*f)->isMapped());
  ASSERT_EQ((*f)->size(), payload.size());
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
  EXPECT_FALSE(f->isMapped());
}
