//===- TokenizerFixture.h - Fixture paths for tokenizer tests ---*- C++ -*-===//

#ifndef TFC_TESTS_UNIT_TOKENIZER_TOKENIZERFIXTURE_H
#define TFC_TESTS_UNIT_TOKENIZER_TOKENIZERFIXTURE_H

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace tfc::rt::tok::test {

/// tests/fixtures/tokenizers/<name>: under $TFC_SOURCE_DIR (set by ctest),
/// else under the source directory the test was built from.
inline std::string fixturePath(const std::string &name) {
  std::string root = TFC_TOKENIZER_SOURCE_DIR;
  if (const char *env = std::getenv("TFC_SOURCE_DIR"))
    root = env;
  if (!root.empty() && root.back() != '/')
    root += '/';
  return root + "tests/fixtures/tokenizers/" + name;
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

} // namespace tfc::rt::tok::test

#endif // TFC_TESTS_UNIT_TOKENIZER_TOKENIZERFIXTURE_H
