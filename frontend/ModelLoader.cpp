//===- ModelLoader.cpp - Read a model file with its imports ---------------===//

#include "frontend/ModelLoader.h"

#include "frontend/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

using namespace tfc;

namespace {
#include "frontend/PreludeSource.inc"
} // namespace

const std::string &tfc::preludeSource() {
  static const std::string text(kPreludeSource);
  return text;
}

/// Model files larger than this are refused before parsing; real models are
/// a few kilobytes.
static constexpr uint64_t kMaxSourceSize = 16 << 20;
static constexpr unsigned kMaxImportDepth = 16;

const ast::Module *ModelLoader::parseBuffer(const std::string &name,
                                            std::string text) {
  uint32_t fileId = sources.addBuffer(name, std::move(text));
  std::unique_ptr<ast::Module> module = parseModule(fileId, sources, diags);
  if (!module)
    return nullptr;
  module->fileName = name;
  modules.push_back(std::move(module));
  return modules.back().get();
}

const ast::Module *ModelLoader::parseFile(const std::string &path,
                                          SourceLoc importedAt) {
  if (llvm::sys::fs::is_directory(path)) {
    diags.error(importedAt, "cannot read '" + path + "': it is a directory");
    return nullptr;
  }
  uint64_t size = 0;
  if (!llvm::sys::fs::file_size(path, size) && size > kMaxSourceSize) {
    diags.error(importedAt, "cannot read '" + path + "': larger than 16 MiB");
    return nullptr;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    diags.error(importedAt, "cannot read '" + path +
                                "': " + buffer.getError().message());
    return nullptr;
  }
  return parseBuffer(path, (*buffer)->getBuffer().str());
}

void ModelLoader::loadImports(const ast::Module &module,
                              const std::string &directory,
                              std::vector<const ast::Module *> &order,
                              unsigned depth) {
  for (const ast::ImportDecl &import : module.imports) {
    if (depth >= kMaxImportDepth) {
      diags.error(import.loc, "imports nested more than 16 deep");
      return;
    }
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, import.path);
    llvm::SmallString<256> real;
    if (llvm::sys::fs::real_path(path, real)) {
      diags.error(import.loc, "cannot import '" + import.path +
                                  "': no such file '" + path.str().str() +
                                  "'");
      continue;
    }
    std::string key = real.str().str();
    if (std::find(loadedPaths.begin(), loadedPaths.end(), key) !=
        loadedPaths.end())
      continue; // each file once; this also ends import cycles
    loadedPaths.push_back(key);
    const ast::Module *imported = parseFile(path.str().str(), import.loc);
    if (!imported)
      continue;
    loadImports(*imported, llvm::sys::path::parent_path(path).str(), order,
                depth + 1);
    order.push_back(imported);
  }
}

std::vector<const ast::Module *> ModelLoader::load(const std::string &path) {
  std::vector<const ast::Module *> order;
  const ast::Module *prelude = parseBuffer("<prelude>", preludeSource());
  if (!prelude)
    return {};
  order.push_back(prelude);
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real))
    loadedPaths.push_back(real.str().str());
  const ast::Module *main = parseFile(path, SourceLoc{});
  if (!main)
    return {};
  loadImports(*main, llvm::sys::path::parent_path(path).str(), order, 0);
  order.push_back(main);
  return order;
}

std::vector<const ast::Module *>
ModelLoader::loadSource(const std::string &name, const std::string &text) {
  std::vector<const ast::Module *> order;
  const ast::Module *prelude = parseBuffer("<prelude>", preludeSource());
  const ast::Module *main = parseBuffer(name, text);
  if (!prelude || !main)
    return {};
  // In-memory sources cannot import files: there is no directory to
  // resolve them against.
  for (const ast::ImportDecl &import : main->imports)
    diags.error(import.loc, "imports are not available for in-memory sources");
  order.push_back(prelude);
  order.push_back(main);
  return order;
}

std::optional<Value> tfc::parseOverrideValue(const std::string &text) {
  if (text == "true")
    return Value::ofBool(true);
  if (text == "false")
    return Value::ofBool(false);
  if (text.empty())
    return std::nullopt;
  if (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_') {
    for (char c : text)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        return std::nullopt;
    return Value::ofEnum(text);
  }
  std::string digits;
  for (char c : text)
    if (c != '_')
      digits += c;
  errno = 0;
  char *end = nullptr;
  long long asInt = std::strtoll(digits.c_str(), &end, 10);
  if (errno == 0 && end && *end == '\0')
    return Value::ofInt(asInt);
  errno = 0;
  double asFloat = std::strtod(digits.c_str(), &end);
  if (errno == 0 && end && *end == '\0')
    return Value::ofFloat(asFloat);
  return std::nullopt;
}
