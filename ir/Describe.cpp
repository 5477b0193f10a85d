//===- Describe.cpp - How messages name an op and a location --------------===//

#include "ir/Describe.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace tfc {

namespace {

/// `file:line:col` of a FileLineColLoc, the file reduced to its base name.
std::string formatFileLoc(FileLineColLoc loc) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::sys::path::filename(loc.getFilename().getValue()) << ":"
     << loc.getLine() << ":" << loc.getColumn();
  return out;
}

/// The file locations of a call-site chain, innermost (callee) first.
void collectFrames(Location loc, SmallVectorImpl<FileLineColLoc> &frames) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    frames.push_back(file);
    return;
  }
  if (auto call = dyn_cast<CallSiteLoc>(loc)) {
    collectFrames(call.getCallee(), frames);
    collectFrames(call.getCaller(), frames);
    return;
  }
  if (auto name = dyn_cast<NameLoc>(loc)) {
    collectFrames(name.getChildLoc(), frames);
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    // The first part that knows a file stands for the group.
    for (Location part : fused.getLocations()) {
      SmallVector<FileLineColLoc> partFrames;
      collectFrames(part, partFrames);
      if (!partFrames.empty()) {
        frames.append(partFrames.begin(), partFrames.end());
        return;
      }
    }
  }
}

} // namespace

std::string formatLocation(Location loc) {
  SmallVector<FileLineColLoc> frames;
  collectFrames(loc, frames);
  if (frames.empty())
    return "?";
  std::string result;
  std::string previous;
  for (FileLineColLoc frame : llvm::reverse(frames)) {
    std::string text = formatFileLoc(frame);
    if (text == previous)
      continue;
    if (!result.empty())
      result += " > ";
    result += text;
    previous = text;
  }
  return result;
}

std::string describe(Operation *op) {
  if (!op)
    return "?";
  return op->getName().getStringRef().str() + " at " +
         formatLocation(op->getLoc());
}

} // namespace tfc
