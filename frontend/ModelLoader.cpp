//===- ModelLoader.cpp - Read a model file with its imports ---------------===//

#include "frontend/ModelLoader.h"

#include "frontend/Parser.h"
#include "runtime/Files.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

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
  module->fileId = fileId;
  modules.push_back(std::move(module));
  return modules.back().get();
}

/// Reads the model source at `path` into `text`, or says why not. Only
/// regular files are read (/dev/zero would never end, a FIFO could block),
/// and the size limit counts the bytes actually read, so a file that grows
/// while being read cannot get past it either.
static std::optional<std::string> readSource(const std::string &path,
                                             std::string &text) {
  int fd = rt::openForReading(path);
  if (fd < 0)
    return std::string(errno == ELOOP ? "it is a symbolic link loop"
                                      : std::strerror(errno));
  struct stat st;
  std::optional<std::string> error;
  if (::fstat(fd, &st) != 0)
    error = std::strerror(errno);
  else if (!S_ISREG(st.st_mode))
    error = std::string("it is ") + rt::fileKind(st.st_mode) +
            ", not a regular file";
  char buffer[65536];
  while (!error) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      error = std::strerror(errno);
    else if (n == 0)
      break;
    else if (text.size() + static_cast<size_t>(n) > kMaxSourceSize)
      error = "larger than 16 MiB";
    else
      text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return error;
}

const ast::Module *ModelLoader::parseFile(const std::string &path,
                                          SourceLoc importedAt) {
  std::string text;
  if (std::optional<std::string> error = readSource(path, text)) {
    diags.error(importedAt, "cannot read '" + path + "': " + *error);
    return nullptr;
  }
  return parseBuffer(path, std::move(text));
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
    // Relative to the importing file; an absolute path stands as it is
    // (path::append would glue it under `directory`).
    llvm::SmallString<256> path(
        llvm::sys::path::is_absolute(import.path) ? "" : directory);
    llvm::sys::path::append(path, import.path);
    llvm::SmallString<256> real;
    if (std::error_code ec = llvm::sys::fs::real_path(path, real)) {
      diags.error(import.loc,
                  "cannot import '" + import.path + "': " +
                      (ec == std::errc::too_many_symbolic_link_levels
                           ? "'" + path.str().str() +
                                 "' is a symbolic link loop"
                           : "no such file '" + path.str().str() + "'"));
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
  const ast::Module *prelude = parseBuffer(kPreludeFileName, preludeSource());
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
  const ast::Module *prelude = parseBuffer(kPreludeFileName, preludeSource());
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
