//===- LanguageDocsTest.cpp - docs/language.md names every builtin --------===//
//
// A model's author learns the language from docs/language.md alone, so every
// function a model can call must be there by name: each tensor builtin and
// each function on static values as "`name(", and each prelude block with
// its whole signature as written in frontend/prelude.tfm ("`mha(xq, ...)`").
// Adding a builtin or a prelude block without documenting it fails here.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"
#include "frontend/ModelLoader.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace {

std::string readLanguageDoc() {
  const char *env = std::getenv("TFC_SOURCE_DIR");
  std::string root = env ? env : TFC_DOCS_SOURCE_DIR;
  std::ifstream in(root + "/docs/language.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(LanguageDocsTest, EveryBuiltinIsDocumented) {
  std::string doc = readLanguageDoc();
  ASSERT_FALSE(doc.empty()) << "cannot read docs/language.md";
  std::vector<std::string> names = tfc::builtinNames();
  std::vector<std::string> statics = tfc::staticFunctionNames();
  names.insert(names.end(), statics.begin(), statics.end());
  EXPECT_GT(names.size(), 40u);
  for (const std::string &name : names)
    EXPECT_NE(doc.find("`" + name + "("), std::string::npos)
        << "docs/language.md does not document `" << name << "(...)`";
}

TEST(LanguageDocsTest, EveryPreludeBlockIsDocumentedWithItsSignature) {
  std::string doc = readLanguageDoc();
  ASSERT_FALSE(doc.empty()) << "cannot read docs/language.md";
  std::istringstream prelude(tfc::preludeSource());
  size_t blocks = 0;
  for (std::string line; std::getline(prelude, line);) {
    // `block name(params) {`, one line each in the prelude.
    size_t close = line.rfind(')');
    if (line.rfind("block ", 0) != 0 || close == std::string::npos)
      continue;
    ++blocks;
    std::string signature = line.substr(6, close - 5);
    EXPECT_NE(doc.find("`" + signature + "`"), std::string::npos)
        << "docs/language.md does not document the prelude's `" << signature
        << "`";
  }
  EXPECT_GT(blocks, 10u);
}

} // namespace
