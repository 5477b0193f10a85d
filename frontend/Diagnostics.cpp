//===- Diagnostics.cpp - Errors with source locations ---------------------===//

#include "frontend/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

namespace tfc {

void DiagnosticEngine::error(SourceLoc loc, std::string message) {
  // The same error at the same place is reported once: a block called once
  // per layer (a prelude block, with --set heads=0) would repeat it per
  // call. Its notes are dropped with it.
  for (const Diagnostic &diag : diags)
    if (diag.severity == Severity::Error && diag.loc.fileId == loc.fileId &&
        diag.loc.line == loc.line && diag.loc.col == loc.col &&
        diag.message == message) {
      droppedLast = true;
      return;
    }
  // Past the limit, errors are counted but not kept so a pathological input
  // cannot make the output grow without bound.
  droppedLast = tooManyErrors();
  ++numErrors;
  if (!droppedLast)
    diags.push_back({Severity::Error, loc, std::move(message),
                     context ? context() : std::vector<Diagnostic>{}});
}

void DiagnosticEngine::warning(SourceLoc loc, std::string message) {
  droppedLast = false;
  diags.push_back({Severity::Warning, loc, std::move(message)});
}

void DiagnosticEngine::note(SourceLoc loc, std::string message) {
  if (!droppedLast && !diags.empty())
    diags.push_back({Severity::Note, loc, std::move(message)});
}

void DiagnosticEngine::print(llvm::raw_ostream &os) const {
  // An error's context follows its own notes.
  const std::vector<Diagnostic> *pending = nullptr;
  auto flush = [&] {
    if (pending)
      for (const Diagnostic &note : *pending)
        printOne(os, note);
    pending = nullptr;
  };
  for (const Diagnostic &diag : diags) {
    if (diag.severity != Severity::Note)
      flush();
    printOne(os, diag);
    if (diag.severity == Severity::Error)
      pending = &diag.context;
  }
  flush();
  if (numErrors > 0) {
    if (numErrors > errorLimit)
      os << "too many errors; stopped after " << errorLimit << ".\n";
    os << numErrors << (numErrors == 1 ? " error" : " errors")
       << " generated.\n";
  }
}

void DiagnosticEngine::printOne(llvm::raw_ostream &os,
                                const Diagnostic &diag) const {
  if (diag.loc.isValid())
    os << sources.format(diag.loc) << ": ";
  switch (diag.severity) {
  case Severity::Error:
    os << "error: ";
    break;
  case Severity::Warning:
    os << "warning: ";
    break;
  case Severity::Note:
    os << "note: ";
    break;
  }
  os << diag.message << "\n";
  if (!diag.loc.isValid())
    return;
  std::string line = sources.getLine(diag.loc.fileId, diag.loc.line);
  if (line.empty())
    return;
  // Control bytes (NUL, ESC, ...) would garble a terminal: show them as
  // '?'. Columns count bytes, so a one-byte replacement keeps the caret
  // aligned.
  for (char &c : line)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
      c = '?';
  os << line << "\n";
  // Keep tabs in the caret line so the caret lines up under the column.
  std::string caret;
  for (uint32_t i = 1; i < diag.loc.col && i <= line.size(); ++i)
    caret += line[i - 1] == '\t' ? '\t' : ' ';
  os << caret << "^\n";
}

} // namespace tfc
