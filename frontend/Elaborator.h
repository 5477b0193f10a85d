//===- Elaborator.h - AST to tfc dialect (MLIRGen) --------------*- C++ -*-===//
//
// The elaborator turns parsed .tfm modules into an MLIR module of primitive
// `tfc` ops. It evaluates configuration, inlines blocks and unrolls loops, so
// every entry point becomes one flat `func.func`. Shapes are checked here,
// symbolically, so that errors name `f32[batch, seq, 768]` and the source
// lines involved; the dialect's verifiers check the result again.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_ELABORATOR_H
#define TFC_FRONTEND_ELABORATOR_H

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "frontend/Value.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace tfc {

/// The name the prelude (frontend/prelude.tfm) has in diagnostics.
constexpr char kPreludeFileName[] = "<prelude>";

/// One checkpoint tensor the model reads.
struct ParamEntry {
  std::string name;  // checkpoint name, e.g. "h.0.attn.c_attn.weight"
  std::string dtype; // stored dtype as declared (f32, f16, bf16)
  std::vector<int64_t> shape;
  SourceLoc loc; // first declaration
};

struct ElaborateOptions {
  /// `--set key=value`: replaces a config entry's value before evaluation.
  std::vector<std::pair<std::string, Value>> overrides;
  /// Binds symbolic dimensions to sizes (e.g. seq=128) so the IR is static.
  std::map<std::string, int64_t> dimValues;
};

struct ElaboratedModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string modelName;
  std::vector<std::pair<std::string, Value>> config;
  std::vector<ParamEntry> params; // unique by name, in first-use order
  std::map<std::string, int64_t> dimBounds;
};

/// Elaborates `modules` (the prelude and imports first, the model file last:
/// later definitions may use earlier ones). Errors go to `diags`; the result
/// is only meaningful when `diags.hasErrors()` is false.
ElaboratedModel elaborate(const std::vector<const ast::Module *> &modules,
                          mlir::MLIRContext &context, DiagnosticEngine &diags,
                          const ElaborateOptions &options);

/// The names of the functions on static values (`log`, `min`, ...) and of
/// the tensor builtins (`softmax`, ...): what a model can call besides its
/// blocks. Each is documented in docs/language.md (a unit test checks).
std::vector<std::string> staticFunctionNames();
std::vector<std::string> builtinNames();

} // namespace tfc

#endif // TFC_FRONTEND_ELABORATOR_H
