//===- Session.h - Open a model file and optimize its IR --------*- C++ -*-===//
//
// The first half of a compile session, shared by every tfc command, the
// tests and anything else that embeds the compiler: read a model file with
// its `--set` overrides, parse and elaborate it into the tfc dialect, and run
// the optimization pipeline. Nothing here prints: diagnostics come back
// inside the error (a DiagnosticsError, rendered with file:line:col and a
// caret), and warnings stay in Session::diags for the caller to show.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_SESSION_SESSION_H
#define TFC_SESSION_SESSION_H

#include "frontend/Diagnostics.h"
#include "frontend/Elaborator.h"
#include "frontend/ModelLoader.h"
#include "passes/FusionReport.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tfc::session {

/// Which model to read.
struct ModelSource {
  std::string path;
  /// Config overrides, "key=value" (`--set`).
  std::vector<std::string> sets;
};

/// How to run the optimization pipeline (docs/passes.md).
struct PipelineSettings {
  /// Pass names to skip (`--disable-pass`); unknown names are an error.
  std::vector<std::string> disabledPasses;
  /// Run no optimization pass at all (`--no-fusion`).
  bool noFusion = false;
  /// When set, the IR after every pass is printed here.
  llvm::raw_ostream *printIRAfterAll = nullptr;
  /// `--dtype bf16`: product weights in bf16 (pass `bf16-weights`, also
  /// with noFusion); everything else stays f32. Kernels for the host then
  /// need AVX512_BF16 (plan() checks).
  bool bf16Weights = false;
};

/// A model read from disk: sources, diagnostics (warnings remain here after
/// a successful open) and, when elaborated, its IR.
struct Session {
  Session() : diags(sources) {}
  SourceManager sources;
  DiagnosticEngine diags;
  std::unique_ptr<ModelLoader> loader;
  std::vector<const ast::Module *> modules;
  ElaboratedModel model;
};

/// Errors of the frontend: every diagnostic rendered as the user should see
/// it ("model.tfm:3:7: error: ..." with the source line and a caret). The
/// rendering is complete; print it as is, without an "error: " prefix.
class DiagnosticsError : public llvm::ErrorInfo<DiagnosticsError> {
public:
  static char ID;
  explicit DiagnosticsError(std::string rendered)
      : rendered(std::move(rendered)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;
  const std::string &text() const { return rendered; }

private:
  std::string rendered;
};

/// A context with the dialects tfc uses registered and loaded.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Parses the model (and elaborates it when `elaborateIR`, with symbolic
/// dimensions bound to `dimValues` where given).
llvm::Expected<std::unique_ptr<Session>>
openModel(const ModelSource &source, mlir::MLIRContext &context,
          bool elaborateIR,
          const std::map<std::string, int64_t> &dimValues = {});

/// Runs the default pass pipeline on the session's module as `settings`
/// say; fills `report` when given.
llvm::Error optimize(Session &session, const PipelineSettings &settings,
                     FusionReport *report = nullptr);

/// "verify, canonicalize, ...": the pass names `disabledPasses` accepts.
std::string pipelinePassList();

} // namespace tfc::session

#endif // TFC_SESSION_SESSION_H
