//===- TestUtil.h - Helpers for the runtime unit tests ----------*- C++ -*-===//

#ifndef TFC_TESTS_UNIT_RUNTIME_TESTUTIL_H
#define TFC_TESTS_UNIT_RUNTIME_TESTUTIL_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <dirent.h>
#include <unistd.h>

namespace tfc::rt::test {

/// A fresh directory under the test temp dir, removed (with its files) when
/// the object dies. Files are only ever created flat inside it.
class TempDir {
public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "tfc-rt-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char *p = ::mkdtemp(buf.data());
    EXPECT_NE(p, nullptr) << "mkdtemp failed for " << tmpl;
    dir = p ? p : "";
  }
  ~TempDir() {
    if (dir.empty())
      return;
    if (DIR *d = ::opendir(dir.c_str())) {
      while (struct dirent *e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name != "." && name != "..")
          std::remove(path(name).c_str());
      }
      ::closedir(d);
    }
    ::rmdir(dir.c_str());
  }
  std::string path(const std::string &name) const { return dir + "/" + name; }
  const std::string &root() const { return dir; }

private:
  std::string dir;
};

inline void writeBytes(const std::string &path,
                       const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

inline std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in),
                              std::istreambuf_iterator<char>());
}

inline bool fileExists(const std::string &path) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (f)
    std::fclose(f);
  return f != nullptr;
}

/// A safetensors file: 8-byte little-endian `headerLen` (defaults to the
/// header's real length), the header bytes, then `dataBytes` zero bytes.
inline std::vector<uint8_t> makeSafetensors(const std::string &header,
                                            size_t dataBytes,
                                            int64_t headerLen = -1) {
  uint64_t n = headerLen < 0 ? header.size() : static_cast<uint64_t>(headerLen);
  std::vector<uint8_t> out;
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<uint8_t>((n >> (8 * i)) & 0xFF));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), dataBytes, 0);
  return out;
}

} // namespace tfc::rt::test

#endif // TFC_TESTS_UNIT_RUNTIME_TESTUTIL_H
