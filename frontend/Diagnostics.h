//===- Diagnostics.h - Errors with source locations --------------*- C++ -*-===//
//
// Frontend errors are collected, not thrown: every stage reports into a
// DiagnosticEngine and keeps going where it can, so one run shows every error
// in a file (up to a limit). Printing follows the clang style:
//
//   model.tfm:12:9: error: cannot add f32[batch, seq, 768] and f32[512]
//     x = h + b
//           ^
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_DIAGNOSTICS_H
#define TFC_FRONTEND_DIAGNOSTICS_H

#include "frontend/SourceLocation.h"

#include <functional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tfc {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity;
  SourceLoc loc;
  std::string message;
  /// Of an error: where it was reached from (the elaborator's chain of
  /// block calls, innermost first), printed after its own notes.
  std::vector<Diagnostic> context = {};
};

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &sources,
                            unsigned errorLimit = 20)
      : sources(sources), errorLimit(errorLimit) {}

  /// Reports an error; one identical to an earlier error (same location
  /// and message) is dropped, with its notes.
  void error(SourceLoc loc, std::string message);
  void warning(SourceLoc loc, std::string message);
  /// A note attaches to the previous error or warning (e.g. "`x` was defined
  /// here").
  void note(SourceLoc loc, std::string message);
  /// Sets what gives each later error its context notes (see
  /// Diagnostic::context); an empty function gives none.
  void setContext(std::function<std::vector<Diagnostic>()> provider) {
    context = std::move(provider);
  }

  unsigned getNumErrors() const { return numErrors; }
  bool hasErrors() const { return numErrors != 0; }
  /// True once the error limit is reached: stages should stop early.
  bool tooManyErrors() const { return numErrors >= errorLimit; }
  const std::vector<Diagnostic> &getDiagnostics() const { return diags; }

  /// Prints every diagnostic with its source line and a caret, then
  /// "N error(s) generated." when there were errors.
  void print(llvm::raw_ostream &os) const;
  const SourceManager &getSources() const { return sources; }

private:
  void printOne(llvm::raw_ostream &os, const Diagnostic &diag) const;

  std::function<std::vector<Diagnostic>()> context;
  const SourceManager &sources;
  unsigned errorLimit;
  unsigned numErrors = 0;
  bool droppedLast = false;
  std::vector<Diagnostic> diags;
};

} // namespace tfc

#endif // TFC_FRONTEND_DIAGNOSTICS_H
