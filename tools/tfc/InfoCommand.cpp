//===- InfoCommand.cpp - tfc info: parameters, memory, FLOPs --------------===//
//
// Parameters are counted once per checkpoint tensor (a tied LM head is the
// same tensor as the embedding), grouped by the layer template they were
// declared under. FLOPs come from a second elaboration with the symbolic
// dimensions bound to the requested sizes, so the IR is static.
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"
#include "tools/tfc/Inputs.h"
#include "tools/tfc/ModelRunner.h"

#include "session/Inspect.h"

#include "codegen/aot/AotProcessSafety.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <set>

using namespace tfc;
using namespace tfc::driver;

namespace {

struct InfoOptions {
  ModelOptions model;
  int64_t batch = 1;
  int64_t seq = 128;
  std::vector<std::string> dims;
  /// Set when registered: whether --batch/--seq were given (a default above a
  /// dim's bound is lowered to the bound; a given value is checked).
  const CLI::Option *batchOption = nullptr;
  const CLI::Option *seqOption = nullptr;
};

/// The size a --batch/--seq value gives dimension `name`: the value, or for
/// a default that exceeds the dim's bound, the bound.
int64_t defaultSize(const InfoOptions &options, const ElaboratedModel &model,
                    const std::string &name) {
  bool isBatch = name == "batch";
  int64_t value = isBatch ? options.batch : options.seq;
  const CLI::Option *given = isBatch ? options.batchOption : options.seqOption;
  auto bound = model.dimBounds.find(name);
  if ((!given || given->count() == 0) && bound != model.dimBounds.end())
    return std::min(value, bound->second);
  return value;
}

struct Group {
  std::string name;
  int64_t tensors = 0;
  double parameters = 0;
  std::set<std::string> layers;
};

/// Groups a checkpoint name by its layer: the dotted prefix up to the first
/// all-digit component ("h.11.attn.c_attn.weight" -> "h.{i}", layer "11");
/// names without one group by their first component ("wte.weight" -> "wte").
std::pair<std::string, std::string> groupOf(const std::string &name) {
  size_t begin = 0;
  while (begin < name.size()) {
    size_t end = name.find('.', begin);
    if (end == std::string::npos)
      end = name.size();
    bool digits = end > begin;
    for (size_t i = begin; i < end; ++i)
      digits = digits && std::isdigit(static_cast<unsigned char>(name[i]));
    if (digits && begin > 0)
      return {name.substr(0, begin) + "{i}", name.substr(begin, end - begin)};
    begin = end + 1;
  }
  size_t dot = name.find('.');
  return {dot == std::string::npos ? name : name.substr(0, dot), ""};
}

int64_t bytesOf(const std::string &dtype) {
  return dtype == "f16" || dtype == "bf16" ? 2 : 4;
}

/// printf into a std::string (llvm::format rejects string literals).
template <typename... Args>
std::string strf(const char *format, Args... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), format, args...);
  return buffer;
}

std::string describeType(mlir::Type type, mlir::ArrayAttr dims) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!tensor)
    return "?";
  std::string out;
  llvm::raw_string_ostream os(out);
  mlir::Type element = tensor.getElementType();
  if (element.isInteger(1))
    os << "bool";
  else if (element.isInteger(32))
    os << "i32";
  else if (element.isInteger(64))
    os << "i64";
  else
    os << "f32";
  os << "[";
  for (int64_t i = 0; i < tensor.getRank(); ++i) {
    if (i)
      os << ", ";
    auto name = dims && i < static_cast<int64_t>(dims.size())
                    ? llvm::dyn_cast<mlir::StringAttr>(dims[i])
                    : nullptr;
    if (tensor.isDynamicDim(i))
      os << (name ? name.getValue() : "?");
    else
      os << tensor.getDimSize(i);
  }
  os << "]";
  return out;
}

int runInfo(const InfoOptions &options) {
  codegen::installProcessSafetyHandlers();
  session::CompileOptions compile = compileOptions(options.model);
  std::optional<CompiledModel> elaborated =
      openToStage(compile, session::Stage::Elaborated);
  if (!elaborated)
    return 1;
  ElaboratedModel &model = elaborated->session->model;
  llvm::raw_ostream &os = llvm::outs();

  os << "model       "
     << (model.modelName.empty() ? std::string("(unnamed)") : model.modelName)
     << " (" << options.model.path << ")\n";

  // Entry signatures, and the symbolic dimensions they use.
  std::set<std::string> symbolic;
  for (auto func : model.module->getOps<mlir::func::FuncOp>()) {
    os << "entry       " << func.getName() << "(";
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto name = func.getArgAttrOfType<mlir::StringAttr>(i, "tfc.name");
      auto dims = func.getArgAttrOfType<mlir::ArrayAttr>(i, "tfc.dims");
      os << (i ? ", " : "") << (name ? name.getValue() : "?") << ": "
         << describeType(func.getArgument(i).getType(), dims);
      if (dims)
        for (mlir::Attribute dim : dims)
          if (auto s = llvm::dyn_cast<mlir::StringAttr>(dim);
              s && !s.getValue().empty() && !std::isdigit(s.getValue()[0]))
            symbolic.insert(s.getValue().str());
    }
    os << ") -> (";
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      auto name = func.getResultAttrOfType<mlir::StringAttr>(i, "tfc.name");
      os << (i ? ", " : "") << (name ? name.getValue() : "?") << ": "
         << describeType(func.getResultTypes()[i],
                         func.getResultAttrOfType<mlir::ArrayAttr>(
                             i, "tfc.dims"));
    }
    os << ")\n";
  }
  os << "config     ";
  for (const auto &[name, value] : model.config)
    os << " " << name << "=" << value.str();
  os << "\n";
  for (const auto &[name, bound] : model.dimBounds)
    os << "dim         " << name << " <= " << bound << "\n";

  // Parameter groups, in first-declaration order.
  std::vector<Group> groups;
  double total = 0, storedBytes = 0;
  for (const ParamEntry &param : model.params) {
    auto [name, layer] = groupOf(param.name);
    // (C++17 lambdas cannot capture a structured binding.)
    auto it =
        std::find_if(groups.begin(), groups.end(),
                     [&name = name](const Group &g) { return g.name == name; });
    if (it == groups.end()) {
      groups.push_back(Group{name});
      it = groups.end() - 1;
    }
    double count = 1;
    for (int64_t d : param.shape)
      count *= static_cast<double>(d);
    it->tensors += 1;
    it->parameters += count;
    if (!layer.empty())
      it->layers.insert(layer);
    total += count;
    storedBytes += count * bytesOf(param.dtype);
  }
  os << "\nparameters\n";
  os << strf("  %-36s %8s %16s %7s\n", "group", "tensors",
                     "parameters", "share");
  for (const Group &group : groups) {
    std::string label = group.name;
    if (!group.layers.empty())
      label += " (x" + std::to_string(group.layers.size()) + ")";
    os << strf("  %-36s %8lld %16s %6.1f%%\n", label.c_str(),
                       static_cast<long long>(group.tensors),
                       withThousands(group.parameters).c_str(),
                       total > 0 ? 100.0 * group.parameters / total : 0.0);
  }
  os << strf("  %-36s %8lld %16s\n", "total",
                     static_cast<long long>(model.params.size()),
                     withThousands(total).c_str());
  os << strf("\nweight memory  %.1f MiB as stored, %.1f MiB as f32\n",
                     storedBytes / (1 << 20), total * 4 / (1 << 20));

  // FLOPs at the requested sizes.
  std::map<std::string, int64_t> dimValues;
  for (const std::string &name : symbolic)
    dimValues[name] = defaultSize(options, model, name);
  for (const std::string &dim : options.dims) {
    size_t eq = dim.find('=');
    int64_t value = 0;
    if (eq == std::string::npos || eq == 0 ||
        llvm::StringRef(dim).substr(eq + 1).getAsInteger(10, value) ||
        value <= 0) {
      llvm::errs() << "error: --dim expects NAME=SIZE, got '" << dim << "'\n";
      return 1;
    }
    dimValues[dim.substr(0, eq)] = value;
  }
  compile.dimValues = dimValues;
  std::optional<CompiledModel> specialized =
      openToStage(compile, session::Stage::Elaborated);
  if (!specialized)
    return 1;
  std::string sizes;
  for (const auto &[name, value] : dimValues)
    sizes += (sizes.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  os << "\nFLOPs at " << (sizes.empty() ? "static shapes" : sizes) << "\n";
  for (const auto &[entry, flops] : session::entryFlops(*specialized)) {
    os << strf("  %-12s %10.3f GFLOP  (matmul %.3f, other %.3f)",
                       entry.c_str(), flops.total() / 1e9,
                       flops.matmul / 1e9, flops.other / 1e9);
    if (flops.dynamicOps)
      os << "  [" << flops.dynamicOps << " ops with dynamic shapes not counted]";
    os << "\n";
  }
  return 0;
}

} // namespace

CommandRunner driver::registerInfoCommand(CLI::App &app) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App *command = app.add_subcommand(
      "info", "Show a model's entries, config, parameters, weight memory and "
              "FLOPs");
  addModelOptions(*command, options->model);
  options->batchOption = command->add_option("--batch", options->batch,
                      "Batch size for the FLOP count")
      ->default_val(1)
      ->check(positiveSize());
  options->seqOption = command->add_option("--seq", options->seq,
                      "Size of every other symbolic dimension (sequence "
                      "lengths) for the FLOP count (by default 128, or a "
                      "dim's bound when lower)")
      ->default_val(128)
      ->check(positiveSize());
  command->add_option("--dim", options->dims,
                      "Size of one symbolic dimension, NAME=SIZE "
                      "(repeatable; overrides --batch/--seq)");
  return [options] { return runInfo(*options); };
}
