//===- Inputs.h - Entry inputs from the command line ------------*- C++ -*-===//
//
// `tfc run` takes token ids on the command line (`--ids 464,3139,286`, one
// `--ids` per sequence of the batch), from a file, or any input from a
// .safetensors file. Inputs not given are derived where that is unambiguous:
// padding masks from the sequences' lengths, and the seed-style
// [batch, 1, n, n] target mask as padding AND causal.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TOOLS_TFC_INPUTS_H
#define TFC_TOOLS_TFC_INPUTS_H

#include "runtime/Plan.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace CLI {
class Validator;
} // namespace CLI

namespace tfc::driver {

/// A CLI11 check for sizes (--batch, --seq): an integer of at least 1, with a
/// short message otherwise ("--seq: must be at least 1, got 0") instead of
/// CLI::PositiveNumber's range up to the largest double.
const CLI::Validator &positiveSize();

struct InputOptions {
  /// input name -> sequences (each a list of ids); `--ids` is "ids",
  /// `--src-ids` "src", `--tgt-ids` "tgt".
  std::map<std::string, std::vector<std::string>> idLists;
  std::string idsFile;     // whitespace/comma separated ids, one line per row
  std::string inputsFile;  // .safetensors with NAME or input.NAME tensors
  std::vector<std::string> masks; // --mask 1,1,0 (one per sequence)
  int64_t padId = 0;
};

/// Builds the entry's inputs in order. Errors name the input.
rt::Expected<std::vector<rt::Tensor>>
buildInputs(const rt::PlanEntry &entry, const InputOptions &options);

/// Parses "1,2,3" (commas or spaces) into ints.
rt::Expected<std::vector<int64_t>> parseIntList(const std::string &text);

} // namespace tfc::driver

#endif // TFC_TOOLS_TFC_INPUTS_H
