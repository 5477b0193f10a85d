//===- ModelLoader.h - Read a model file with its imports -------*- C++ -*-===//
//
// Loads the standard prelude, the model file and every file it imports
// (relative to the importing file, each once, cycles refused), then
// elaborates them. This is the one entry point the tools use to go from a
// path to verified IR.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_MODELLOADER_H
#define TFC_FRONTEND_MODELLOADER_H

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "frontend/Elaborator.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tfc {

/// The text of frontend/prelude.tfm, compiled into the binary.
const std::string &preludeSource();

class ModelLoader {
public:
  ModelLoader(SourceManager &sources, DiagnosticEngine &diags)
      : sources(sources), diags(diags) {}

  /// Parses the prelude, `path` and its imports. Returns the modules in
  /// elaboration order (prelude, imports, model) or an empty vector when a
  /// file could not be read. Parse errors are in the DiagnosticEngine.
  std::vector<const ast::Module *> load(const std::string &path);
  /// As load(), for source text already in memory (tests, the fuzzer).
  std::vector<const ast::Module *> loadSource(const std::string &name,
                                              const std::string &text);

private:
  const ast::Module *parseFile(const std::string &path, SourceLoc importedAt);
  const ast::Module *parseBuffer(const std::string &name, std::string text);
  void loadImports(const ast::Module &module, const std::string &directory,
                   std::vector<const ast::Module *> &order, unsigned depth);

  SourceManager &sources;
  DiagnosticEngine &diags;
  std::vector<std::unique_ptr<ast::Module>> modules;
  std::vector<std::string> loadedPaths;
};

/// Parses the value of `--set key=value`: an int, a float, true/false or an
/// identifier (an enum symbol). Returns nullopt for anything else.
std::optional<Value> parseOverrideValue(const std::string &text);

} // namespace tfc

#endif // TFC_FRONTEND_MODELLOADER_H
