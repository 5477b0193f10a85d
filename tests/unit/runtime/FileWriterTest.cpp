//===- FileWriterTest.cpp - All-or-nothing file writes --------------------===//

#include "runtime/FileWriter.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <unistd.h>

using namespace tfc::rt;
using namespace tfc::rt::test;

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
  EXPECT_FALSE(fileExists(path + ".tmp." + std::to_string(::getpid())));
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
  EXPECT_FALSE(fileExists(path + ".tmp." + std::to_string(::getpid())));
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
