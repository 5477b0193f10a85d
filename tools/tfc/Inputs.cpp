//===- Inputs.cpp - Entry inputs from the command line --------------------===//

#include "tools/tfc/Inputs.h"

#include "runtime/Safetensors.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace tfc;
using namespace tfc::driver;

rt::Expected<std::vector<int64_t>> driver::parseIntList(const std::string &text) {
  std::vector<int64_t> values;
  std::string token;
  auto flush = [&]() -> rt::Status {
    if (token.empty())
      return rt::Status::success();
    errno = 0;
    char *end = nullptr;
    long long value = std::strtoll(token.c_str(), &end, 10);
    if (errno != 0 || !end || *end != '\0')
      return rt::Status::error("'" + token + "' is not an integer");
    values.push_back(value);
    token.clear();
    return rt::Status::success();
  };
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      TFC_RT_RETURN_IF_ERROR(flush());
    } else {
      token += c;
    }
  }
  TFC_RT_RETURN_IF_ERROR(flush());
  return values;
}

const CLI::Validator &driver::positiveSize() {
  static const CLI::Validator validator(
      [](std::string &text) -> std::string {
        errno = 0;
        char *end = nullptr;
        long long value = std::strtoll(text.c_str(), &end, 10);
        if (errno != 0 || !end || *end != '\0' || end == text.c_str())
          return "must be an integer, got '" + text + "'";
        if (value < 1)
          return "must be at least 1, got " + text;
        return std::string();
      },
      "SIZE >= 1");
  return validator;
}

namespace {

/// The symbol index of a dimension that is exactly one symbol, or -1.
int32_t symbolOf(const rt::DimExpr &dim) {
  if (dim.constant == 0 && dim.terms.size() == 1 && dim.terms[0].second == 1)
    return dim.terms[0].first;
  return -1;
}

/// Rows of ids padded into an i32 [batch, longest] tensor.
rt::Expected<rt::Tensor> padRows(const std::vector<std::vector<int64_t>> &rows,
                                 int64_t padId, std::vector<int64_t> &lengths) {
  size_t longest = 0;
  for (const auto &row : rows)
    longest = std::max(longest, row.size());
  if (rows.empty() || longest == 0)
    return rt::Status::error("no ids given");
  std::vector<int32_t> data(rows.size() * longest, static_cast<int32_t>(padId));
  lengths.clear();
  for (size_t r = 0; r < rows.size(); ++r) {
    lengths.push_back(static_cast<int64_t>(rows[r].size()));
    for (size_t c = 0; c < rows[r].size(); ++c) {
      if (rows[r][c] < INT32_MIN || rows[r][c] > INT32_MAX)
        return rt::Status::error("id " + std::to_string(rows[r][c]) +
                                 " does not fit in 32 bits");
      data[r * longest + c] = static_cast<int32_t>(rows[r][c]);
    }
  }
  return rt::Tensor::fromI32(
      {static_cast<int64_t>(rows.size()), static_cast<int64_t>(longest)},
      data);
}

} // namespace

/// The option that fills `idLists[key]` ("ids" -> "--ids", "src" ->
/// "--src-ids").
static std::string idOptionName(const std::string &key) {
  return key == "ids" ? "--ids" : "--" + key + "-ids";
}

/// "ids, mask" for messages.
static std::string inputList(const rt::PlanEntry &entry) {
  std::string names;
  for (const std::string &name : entry.inputNames)
    names += (names.empty() ? "" : ", ") + name;
  return names;
}

/// Options that would fill no input of `entry` are errors, not ignored.
static rt::Status
checkOptionsApply(const rt::PlanEntry &entry,
                  const std::map<std::string, std::vector<std::string>> &ids,
                  const InputOptions &options) {
  for (const auto &[key, lists] : ids) {
    if (lists.empty() ||
        std::find(entry.inputNames.begin(), entry.inputNames.end(), key) !=
            entry.inputNames.end())
      continue;
    auto given = options.idLists.find(key);
    bool fromFile = given == options.idLists.end() || given->second.empty();
    std::string option = fromFile ? "--ids-file" : idOptionName(key);
    return rt::Status::error(option + ": entry '" + entry.name +
                             "' has no input '" + key + "' (its inputs: " +
                             inputList(entry) + ")");
  }
  return rt::Status::success();
}

/// The id lists of `options`, with the lines of --ids-file as more "ids".
static rt::Expected<std::map<std::string, std::vector<std::string>>>
readIdLists(const InputOptions &options) {
  std::map<std::string, std::vector<std::string>> idLists = options.idLists;
  if (options.idsFile.empty())
    return idLists;
  std::ifstream in(options.idsFile);
  if (!in)
    return rt::Status::error("cannot read --ids-file '" + options.idsFile +
                             "'");
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r,") != std::string::npos)
      idLists["ids"].push_back(line);
  return idLists;
}

/// Input `name` from --inputs FILE (as "input.NAME" or "NAME"), if there.
static rt::Expected<std::optional<rt::Tensor>>
fileInput(const rt::SafetensorsFile &file, const std::string &name) {
  for (const std::string &key : {"input." + name, name}) {
    if (!file.contains(key))
      continue;
    rt::Expected<rt::Tensor> tensor = file.tensor(key);
    if (!tensor)
      return tensor.status();
    return std::optional<rt::Tensor>(std::move(*tensor));
  }
  return std::optional<rt::Tensor>();
}

/// The [batch, seq] i32 input `name` from its id rows (padded with
/// `padId`); the rows' lengths go to `lengths` under the symbol of its
/// sequence axis.
static rt::Expected<rt::Tensor>
idsInput(const std::string &name, const rt::PlanValue &value,
         const std::vector<std::string> &texts, int64_t padId,
         std::map<int32_t, std::vector<int64_t>> &lengths) {
  if (value.shape.size() != 2)
    return rt::Status::error("input '" + name +
                             "' is not a [batch, seq] tensor of ids");
  std::vector<std::vector<int64_t>> rows;
  for (const std::string &text : texts) {
    rt::Expected<std::vector<int64_t>> row = parseIntList(text);
    if (!row)
      return row.status().withContext("input '" + name + "'");
    rows.push_back(std::move(*row));
  }
  std::vector<int64_t> rowLengths;
  rt::Expected<rt::Tensor> tensor = padRows(rows, padId, rowLengths);
  if (!tensor)
    return tensor.status().withContext("input '" + name + "'");
  int32_t symbol = symbolOf(value.shape[1]);
  if (symbol >= 0)
    lengths[symbol] = rowLengths;
  return tensor;
}

/// The explicit --mask rows as a [batch, seq] tensor of 0/1 ints (the
/// executor converts them to bool).
static rt::Expected<rt::Tensor> explicitMask(const InputOptions &options) {
  std::vector<std::vector<int64_t>> rows;
  for (const std::string &text : options.masks) {
    rt::Expected<std::vector<int64_t>> row = parseIntList(text);
    if (!row)
      return row.status().withContext("--mask");
    rows.push_back(std::move(*row));
  }
  std::vector<int64_t> unused;
  rt::Expected<rt::Tensor> tensor = padRows(rows, 0, unused);
  if (!tensor)
    return tensor.status().withContext("--mask");
  return tensor;
}

/// A bool mask of shape `value` from the lengths `lens` of the ids: a
/// padding mask ([batch, seq] or [batch, 1, 1, seq]) or the seed article's
/// causal target mask ([batch, 1, seq, seq], whose query axis is `symbol`
/// too); nullopt for any other shape.
static rt::Expected<std::optional<rt::Tensor>>
derivedMask(const rt::PlanValue &value, int32_t symbol,
            const std::vector<int64_t> &lens) {
  const size_t rank = value.shape.size();
  const int64_t batch = static_cast<int64_t>(lens.size());
  const int64_t n = *std::max_element(lens.begin(), lens.end());
  bool padding2 = rank == 2;
  bool padding4 = rank == 4 && value.shape[1].isStatic() &&
                  value.shape[1].constant == 1 && value.shape[2].isStatic() &&
                  value.shape[2].constant == 1;
  bool causal4 = rank == 4 && value.shape[1].isStatic() &&
                 value.shape[1].constant == 1 &&
                 symbolOf(value.shape[2]) == symbol;
  if (!padding2 && !padding4 && !causal4)
    return std::optional<rt::Tensor>();
  rt::Shape shape = padding2   ? rt::Shape{batch, n}
                    : padding4 ? rt::Shape{batch, 1, 1, n}
                               : rt::Shape{batch, 1, n, n};
  rt::Expected<rt::Tensor> mask = rt::Tensor::zeros(rt::DType::Bool, shape);
  if (!mask)
    return mask.status();
  uint8_t *bits = mask->dataAs<uint8_t>();
  for (int64_t b = 0; b < batch; ++b) {
    if (!causal4) {
      for (int64_t k = 0; k < n; ++k)
        bits[b * n + k] = k < lens[b];
      continue;
    }
    // The seed article's target mask: padded query rows and future keys
    // are hidden.
    for (int64_t q = 0; q < n; ++q)
      for (int64_t k = 0; k < n; ++k)
        bits[(b * n + q) * n + k] = q < lens[b] && k <= q;
  }
  return std::optional<rt::Tensor>(std::move(*mask));
}

/// Fills the bool inputs that `given` lacks: with explicit --mask rows (a
/// rank-2 one), or derived from the lengths of the ids. Errors if --mask
/// was given and no input took it.
static rt::Status
fillMasks(const rt::PlanEntry &entry, const InputOptions &options,
          const std::map<int32_t, std::vector<int64_t>> &lengths,
          std::vector<std::optional<rt::Tensor>> &given) {
  bool masksUsed = false;
  for (size_t i = 0; i < given.size(); ++i) {
    if (given[i])
      continue;
    const rt::PlanValue &value = entry.values[entry.inputs[i]];
    if (value.dtype != rt::DType::Bool || value.shape.empty())
      continue;
    if (!options.masks.empty() && value.shape.size() == 2) {
      rt::Expected<rt::Tensor> mask = explicitMask(options);
      if (!mask)
        return mask.status();
      given[i] = std::move(*mask);
      masksUsed = true;
      continue;
    }
    int32_t symbol = symbolOf(value.shape.back());
    auto known = lengths.find(symbol);
    if (known == lengths.end())
      continue;
    rt::Expected<std::optional<rt::Tensor>> mask =
        derivedMask(value, symbol, known->second);
    if (!mask)
      return mask.status();
    given[i] = std::move(*mask);
  }
  if (!options.masks.empty() && !masksUsed)
    return rt::Status::error(
        "--mask: entry '" + entry.name +
        "' has no [batch, seq] bool input left to take it (its inputs: " +
        inputList(entry) + ")");
  return rt::Status::success();
}

/// "entry 'forward' needs input 'ids' i32[batch, seq]: pass it with ...".
static rt::Status missingInput(const rt::PlanEntry &entry, size_t i) {
  const rt::PlanValue &value = entry.values[entry.inputs[i]];
  std::string shape = "[";
  for (size_t d = 0; d < value.shape.size(); ++d) {
    const rt::DimExpr &dim = value.shape[d];
    int32_t symbol = symbolOf(dim);
    shape += (d ? ", " : "") +
             (symbol >= 0 && symbol < static_cast<int32_t>(entry.symbols.size())
                  ? entry.symbols[symbol].name
                  : std::to_string(dim.constant));
  }
  return rt::Status::error("entry '" + entry.name + "' needs input '" +
                           entry.inputNames[i] + "' " +
                           rt::dtypeName(value.dtype) + shape +
                           "]: pass it with --inputs FILE.safetensors" +
                           (value.dtype == rt::DType::I32 ? " or --ids" : ""));
}

rt::Expected<std::vector<rt::Tensor>>
driver::buildInputs(const rt::PlanEntry &entry, const InputOptions &options) {
  const size_t count = entry.inputs.size();
  std::vector<std::optional<rt::Tensor>> given(count);
  // Sequence lengths per symbol (e.g. seq, src_seq), from the ids given.
  std::map<int32_t, std::vector<int64_t>> lengths;

  std::optional<rt::SafetensorsFile> file;
  if (!options.inputsFile.empty()) {
    rt::Expected<rt::SafetensorsFile> opened =
        rt::SafetensorsFile::open(options.inputsFile);
    if (!opened)
      return opened.status();
    file = std::move(*opened);
  }
  rt::Expected<std::map<std::string, std::vector<std::string>>> idLists =
      readIdLists(options);
  if (!idLists)
    return idLists.status();
  TFC_RT_RETURN_IF_ERROR(checkOptionsApply(entry, *idLists, options));

  for (size_t i = 0; i < count; ++i) {
    const std::string &name = entry.inputNames[i];
    if (file) {
      rt::Expected<std::optional<rt::Tensor>> tensor = fileInput(*file, name);
      if (!tensor)
        return tensor.status();
      given[i] = std::move(*tensor);
      if (given[i])
        continue;
    }
    auto ids = idLists->find(name);
    if (ids == idLists->end() || ids->second.empty())
      continue;
    rt::Expected<rt::Tensor> tensor =
        idsInput(name, entry.values[entry.inputs[i]], ids->second,
                 options.padId, lengths);
    if (!tensor)
      return tensor.status();
    given[i] = std::move(*tensor);
  }
  TFC_RT_RETURN_IF_ERROR(fillMasks(entry, options, lengths, given));

  std::vector<rt::Tensor> inputs;
  for (size_t i = 0; i < count; ++i) {
    if (!given[i])
      return missingInput(entry, i);
    inputs.push_back(std::move(*given[i]));
  }
  return inputs;
}
