//===- SourceLocation.h - Files and positions of .tfm sources ---*- C++ -*-===//
//
// A SourceLoc is a (file, line, column) triple, 1-based. Files are owned by a
// SourceManager so that locations stay small and diagnostics can print the
// offending source line.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_SOURCELOCATION_H
#define TFC_FRONTEND_SOURCELOCATION_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tfc {

struct SourceLoc {
  uint32_t fileId = 0; // 0: unknown
  uint32_t line = 0;
  uint32_t col = 0;
  bool isValid() const { return fileId != 0; }
};

/// Owns the text of every loaded source file.
class SourceManager {
public:
  /// Adds a buffer and returns its file id (never 0).
  uint32_t addBuffer(std::string name, std::string contents);
  const std::string &getName(uint32_t fileId) const;
  const std::string &getContents(uint32_t fileId) const;
  /// The text of line `line` (1-based) without its newline; empty if out of
  /// range.
  std::string getLine(uint32_t fileId, uint32_t line) const;
  /// "file:line:col", or "file" for line 0 (the whole file).
  std::string format(SourceLoc loc) const;

private:
  struct File {
    std::string name;
    std::string contents;
    std::vector<size_t> lineStarts;
  };
  std::vector<File> files;
};

} // namespace tfc

#endif // TFC_FRONTEND_SOURCELOCATION_H
