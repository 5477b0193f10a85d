//===- FrontendFuzzer.cpp - libFuzzer target for the .tfm frontend --------===//
//
// Feeds arbitrary bytes through the whole frontend, as `tfc dump --emit=ir`
// does, so any crash, hang, leak or undefined behaviour there is found:
//
//  1. the lexer and parser, as a file and as a standalone `--set` expression,
//     printing the AST and the diagnostics;
//  2. as ModelLoader::loadSource would load it (the prelude, parsed once
//     here for speed, and the input), the elaborator into the tfc dialect,
//     in a fresh MLIRContext, then the dialect's verifier (which the
//     elaborator runs itself) and the IR printer;
//  3. when that succeeds, the same again with the symbolic dims bound to
//     sizes (ElaborateOptions::dimValues, as `tfc compile --seq=...` does).
//
// The elaborator must report every problem as a located error itself: IR
// that fails to verify ("internal error: generated IR does not verify") is
// an elaborator bug, so the fuzzer treats it as a crash; so is a model that
// elaborates without errors but lacks a function for one of its entries.
//
// Built by tests/fuzz/CMakeLists.txt with clang; run with scripts/fuzz.sh.
// TFC_FUZZ_PRINT=1 prints the diagnostics and the IR of each input to stderr
// (e.g. `TFC_FUZZ_PRINT=1 build-fuzz/tfc-frontend-fuzzer crash-...`).
//
//===----------------------------------------------------------------------===//

#include "frontend/ASTPrinter.h"
#include "frontend/Diagnostics.h"
#include "frontend/Elaborator.h"
#include "frontend/ModelLoader.h"
#include "frontend/Parser.h"
#include "frontend/SourceLocation.h"
#include "ir/TfcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace {

bool printing() {
  static const bool enabled = [] {
    const char *value = std::getenv("TFC_FUZZ_PRINT");
    return value && *value && std::string(value) != "0";
  }();
  return enabled;
}

llvm::raw_ostream &out() {
  static llvm::raw_null_ostream sink;
  return printing() ? llvm::errs() : static_cast<llvm::raw_ostream &>(sink);
}

/// The standard prelude, parsed once: parsing it for every input would take
/// a third of the time. Each input's SourceManager adds the prelude's text
/// first, so the file ids in the prelude's AST are right there too.
const tfc::ast::Module &prelude() {
  static tfc::SourceManager sources;
  static std::unique_ptr<tfc::ast::Module> module = [] {
    uint32_t fileId = sources.addBuffer("<prelude>", tfc::preludeSource());
    tfc::DiagnosticEngine diags(sources);
    std::unique_ptr<tfc::ast::Module> parsed =
        tfc::parseModule(fileId, sources, diags);
    if (!parsed || diags.hasErrors())
      __builtin_trap(); // the prelude must parse
    parsed->fileName = "<prelude>";
    return parsed;
  }();
  return *module;
}

/// What ModelLoader::loadSource does, with the prelude parsed only once:
/// the modules to elaborate (prelude, then the input), which `owner` keeps.
std::vector<const tfc::ast::Module *>
loadInput(const std::string &text, tfc::SourceManager &sources,
          tfc::DiagnosticEngine &diags,
          std::unique_ptr<tfc::ast::Module> &owner) {
  const tfc::ast::Module &preludeModule = prelude();
  if (sources.addBuffer("<prelude>", tfc::preludeSource()) != 1)
    __builtin_trap();
  uint32_t fileId = sources.addBuffer("fuzz.tfm", text);
  owner = tfc::parseModule(fileId, sources, diags);
  if (!owner)
    __builtin_trap(); // parseModule always returns a module
  owner->fileName = "fuzz.tfm";
  for (const tfc::ast::ImportDecl &import : owner->imports)
    diags.error(import.loc, "imports are not available for in-memory sources");
  return {&preludeModule, owner.get()};
}

/// The parser's other entry point: the bytes as a `--set name=<expr>`.
void parseExpression(const std::string &text, tfc::SourceManager &sources) {
  uint32_t exprId = sources.addBuffer("fuzz-expr", text);
  tfc::DiagnosticEngine exprDiags(sources);
  llvm::raw_null_ostream sink;
  if (tfc::ast::ExprPtr expr =
          tfc::parseExpression(exprId, sources, exprDiags)) {
    if (exprDiags.hasErrors())
      __builtin_trap(); // a returned expression means it parsed cleanly
    tfc::printExpr(*expr, sink);
  }
  exprDiags.print(sink);
}

/// Elaborates `modules`; traps on IR the elaborator let through unverified.
/// Returns the names of the symbolic dims of the entries' inputs when the
/// model elaborated without errors.
std::map<std::string, int64_t>
elaborateOnce(const std::vector<const tfc::ast::Module *> &modules,
              tfc::DiagnosticEngine &diags,
              const tfc::ElaborateOptions &options) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<mlir::tfc::TfcDialect, mlir::func::FuncDialect>();
  context.allowUnregisteredDialects(false);
  tfc::ElaboratedModel model = tfc::elaborate(modules, context, diags, options);
  for (const tfc::Diagnostic &diag : diags.getDiagnostics()) {
    if (llvm::StringRef(diag.message).starts_with("internal error")) {
      diags.print(llvm::errs());
      __builtin_trap(); // the elaborator built IR that does not verify
    }
  }
  std::map<std::string, int64_t> dims;
  if (diags.hasErrors())
    return dims;
  if (!model.module)
    __builtin_trap(); // no errors means a module
  // ... with a function for every entry: an entry must not vanish silently.
  std::set<std::string> entries;
  for (const tfc::ast::Module *module : modules)
    for (const tfc::ast::EntryDecl &entry : module->entries)
      entries.insert(entry.name);
  size_t functions = 0;
  for (mlir::func::FuncOp func : model.module->getOps<mlir::func::FuncOp>()) {
    if (!entries.count(func.getName().str()))
      __builtin_trap();
    ++functions;
  }
  if (functions != entries.size()) {
    llvm::errs() << "fuzz: " << entries.size() << " entries but " << functions
                 << " functions, and no error\n";
    __builtin_trap();
  }
  // The elaborator verified the module; the printer must cope with it.
  // (Large constants are elided: printing 2^24 positions is slow and tests
  // only MLIR.)
  model.module->print(out(),
                      mlir::OpPrintingFlags().elideLargeElementsAttrs(64));
  for (mlir::func::FuncOp func : model.module->getOps<mlir::func::FuncOp>())
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto names = func.getArgAttrOfType<mlir::ArrayAttr>(i, "tfc.dims"))
        for (mlir::Attribute name : names)
          if (auto str = llvm::dyn_cast<mlir::StringAttr>(name))
            if (!str.getValue().empty() &&
                !llvm::isDigit(str.getValue().front()))
              dims.emplace(str.getValue().str(), 2 + dims.size() % 3);
  return dims;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  tfc::SourceManager sources;
  tfc::DiagnosticEngine diags(sources);
  std::unique_ptr<tfc::ast::Module> module;
  std::vector<const tfc::ast::Module *> modules =
      loadInput(text, sources, diags, module);
  {
    llvm::raw_null_ostream sink;
    tfc::printAST(*module, sink);
  }
  parseExpression(text, sources);

  if (!diags.hasErrors()) {
    std::map<std::string, int64_t> dims =
        elaborateOnce(modules, diags, tfc::ElaborateOptions{});
    if (!dims.empty()) {
      tfc::ElaborateOptions specialized;
      specialized.dimValues = dims;
      tfc::DiagnosticEngine specializedDiags(sources);
      elaborateOnce(modules, specializedDiags, specialized);
      specializedDiags.print(out());
    }
  }
  diags.print(out());
  return 0;
}
