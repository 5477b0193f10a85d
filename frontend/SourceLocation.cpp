//===- SourceLocation.cpp - Files and positions of .tfm sources -----------===//

#include "frontend/SourceLocation.h"

namespace tfc {

uint32_t SourceManager::addBuffer(std::string name, std::string contents) {
  File file{std::move(name), std::move(contents), {0}};
  for (size_t i = 0; i < file.contents.size(); ++i)
    if (file.contents[i] == '\n')
      file.lineStarts.push_back(i + 1);
  files.push_back(std::move(file));
  return static_cast<uint32_t>(files.size());
}

const std::string &SourceManager::getName(uint32_t fileId) const {
  static const std::string unknown = "<unknown>";
  if (fileId == 0 || fileId > files.size())
    return unknown;
  return files[fileId - 1].name;
}

const std::string &SourceManager::getContents(uint32_t fileId) const {
  static const std::string empty;
  if (fileId == 0 || fileId > files.size())
    return empty;
  return files[fileId - 1].contents;
}

std::string SourceManager::getLine(uint32_t fileId, uint32_t line) const {
  if (fileId == 0 || fileId > files.size())
    return {};
  const File &file = files[fileId - 1];
  if (line == 0 || line > file.lineStarts.size())
    return {};
  size_t begin = file.lineStarts[line - 1];
  size_t end = file.contents.find('\n', begin);
  if (end == std::string::npos)
    end = file.contents.size();
  std::string text = file.contents.substr(begin, end - begin);
  if (!text.empty() && text.back() == '\r')
    text.pop_back();
  return text;
}

std::string SourceManager::format(SourceLoc loc) const {
  if (loc.line == 0)
    return getName(loc.fileId); // the whole file
  return getName(loc.fileId) + ":" + std::to_string(loc.line) + ":" +
         std::to_string(loc.col);
}

} // namespace tfc
