//===- AotApi.cpp - The generated C++ API of a compiled model -------------===//
//
// Generated code is kept small and boring on purpose: the class only holds
// an Executor and hands it the embedded Plan, the kernel table and the
// weights, so that every check and error message of the runtime applies to
// AOT models exactly as to `tfc run`. What differs per target (device
// copy-back hooks for CUDA) is decided here, not at run time.
//
//===----------------------------------------------------------------------===//

#include "codegen/aot/AotSupport.h"

#include "runtime/FileWriter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdio>

using namespace tfc;
using namespace tfc::codegen;
using namespace tfc::codegen::aot;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

std::string codegen::modelSymbolName(const std::string &modelName) {
  std::string name;
  for (char c : modelName)
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    name = "model_" + name;
  return name;
}

std::string codegen::modelClassName(const std::string &modelName) {
  std::string name;
  bool upper = true;
  for (char c : modelSymbolName(modelName)) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name += upper
                ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                : c;
    upper = false;
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    name = "Model" + name;
  return name;
}

namespace {

const llvm::StringSet<> &cxxKeywords() {
  static const llvm::StringSet<> keywords = {
      "alignas",   "alignof",  "and",      "asm",       "auto",     "bool",
      "break",     "case",     "catch",    "char",      "class",    "const",
      "constexpr", "continue", "default",  "delete",    "do",       "double",
      "else",      "enum",     "explicit", "export",    "extern",   "false",
      "float",     "for",      "friend",   "goto",      "if",       "inline",
      "int",       "long",     "mutable",  "namespace", "new",      "noexcept",
      "not",       "nullptr",  "operator", "or",        "private",  "protected",
      "public",    "register", "return",   "short",     "signed",   "sizeof",
      "static",    "struct",   "switch",   "template",  "this",     "throw",
      "true",      "try",      "typedef",  "typeid",    "typename", "union",
      "unsigned",  "using",    "virtual",  "void",      "volatile", "while",
      "xor",       "int32_t",  "int64_t",  "uint64_t"};
  return keywords;
}

bool isIdentifier(llvm::StringRef name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  // Reserved (leading underscore + capital, double underscore) and keywords.
  if (name.starts_with("_") || name.contains("__"))
    return false;
  return !cxxKeywords().contains(name);
}

/// Members of the generated class: an entry with one of these names gets no
/// convenience method (run("name", ...) still works).
bool isMemberName(llvm::StringRef name) {
  return llvm::is_contained(
      {"run", "plan", "load", "randomWeights", "fromWeights", "embeddedPlan",
       "paramTable", "lastRunStats", "executor", "kModelName", "kTarget"},
      name);
}

/// A C string literal (for names from the model: they could hold quotes).
std::string cString(llvm::StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      // Three octal digits: unlike \x, they cannot swallow what follows.
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\%03o", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// A one-line comment-safe version of `text` (no "*/", no newlines).
std::string commentSafe(llvm::StringRef text) {
  std::string out;
  for (char c : text)
    out += (c == '\n' || c == '\r') ? ' ' : c;
  size_t pos;
  while ((pos = out.find("*/")) != std::string::npos)
    out.replace(pos, 2, "* /");
  return out;
}

/// "encode(ids: i32[batch, seq], mask: bool[batch, seq])
///    -> (last_hidden_state: f32[batch, seq, 64], ...)"
std::string entrySignature(const rt::PlanEntry &entry) {
  std::string text = entry.name + "(";
  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    if (i)
      text += ", ";
    text +=
        entry.inputNames[i] + ": " +
        rt::valueTypeToString(
            entry.values[static_cast<size_t>(entry.inputs[i])], entry.symbols);
  }
  text += ") -> (";
  for (size_t i = 0; i < entry.outputs.size(); ++i) {
    if (i)
      text += ", ";
    text +=
        entry.outputNames[i] + ": " +
        rt::valueTypeToString(
            entry.values[static_cast<size_t>(entry.outputs[i])], entry.symbols);
  }
  return text + ")";
}

} // namespace

std::string aot::kernelSymbol(const std::string &modelName,
                              const std::string &kernelName) {
  return "tfc_" + modelName + "_" + kernelName;
}

llvm::Expected<GeneratedModel> aot::prepareModel(const BuiltPlan &built,
                                                 const AotOptions &options) {
  if (options.outputDir.empty())
    return llvm::createStringError("no output folder given (-o DIR)");
  if (built.kernelOps.size() != built.plan.kernels.size())
    return llvm::createStringError("internal error: the plan has " +
                     llvm::Twine(built.plan.kernels.size()) + " kernels but " +
                     llvm::Twine(built.kernelOps.size()) + " kernel ops");
  GeneratedModel model;
  model.modelName = modelSymbolName(
      built.plan.modelName.empty() ? "model" : built.plan.modelName);
  model.className = options.className.empty() ? modelClassName(model.modelName)
                                              : options.className;
  if (!isIdentifier(model.className))
    return llvm::createStringError("'" + model.className +
                     "' is not a usable C++ class name");
  model.target = options.target.to_string();
  model.usesDevice = options.target.has_gpu_feature();
  model.plan = built.plan;
  for (rt::PlanKernel &kernel : model.plan.kernels)
    kernel.name = kernelSymbol(model.modelName, kernel.name);
  return model;
}

//===----------------------------------------------------------------------===//
// <model>.h
//===----------------------------------------------------------------------===//

namespace {

/// The entries that get a convenience method, with their parameter names.
struct EntryMethod {
  const rt::PlanEntry *entry;
  std::vector<std::string> params;
};

std::vector<EntryMethod> entryMethods(const rt::Plan &plan) {
  std::vector<EntryMethod> methods;
  for (const rt::PlanEntry &entry : plan.entries) {
    if (!isIdentifier(entry.name) || isMemberName(entry.name))
      continue;
    EntryMethod method{&entry, {}};
    llvm::StringSet<> used;
    for (size_t i = 0; i < entry.inputNames.size(); ++i) {
      std::string name = entry.inputNames[i];
      if (!isIdentifier(name) || name == entry.name || used.contains(name))
        name = "input" + std::to_string(i);
      used.insert(name);
      method.params.push_back(name);
    }
    methods.push_back(std::move(method));
  }
  return methods;
}

} // namespace

std::string aot::apiHeader(const GeneratedModel &model) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string guard =
      "TFC_GENERATED_" + llvm::StringRef(model.modelName).upper() + "_H";
  const std::string &cls = model.className;
  os << "// Generated by tfc from model '" << model.modelName
     << "'. Do not edit.\n"
     << "//\n"
     << "// Target: " << model.target << "\n"
     << "// Entries:\n";
  for (const rt::PlanEntry &entry : model.plan.entries)
    os << "//   " << commentSafe(entrySignature(entry)) << "\n";
  os << "//\n"
     << "// Use: include this header (with this folder and include/ on the "
        "include path),\n"
     << "// compile " << model.modelName
     << ".cpp, link the kernels and lib/libtfc_runtime.a (see "
     << model.modelName << ".cmake).\n"
     << "// Errors are values: every function returns tfc::rt::Expected; "
        "nothing throws.\n\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include \"runtime/Executor.h\"\n"
     << "#include \"runtime/Generator.h\"\n"
     << "#include \"runtime/Plan.h\"\n"
     << "#include \"runtime/Tensor.h\"\n"
     << "#include \"runtime/WeightBinding.h\"\n\n"
     << "#include <cstdint>\n#include <string>\n#include <utility>\n"
     << "#include <vector>\n\n"
     << "namespace tfc_generated {\n\n"
     << "/// Model '" << model.modelName
     << "': its Plan and kernels are linked in; weights come\n"
     << "/// from a checkpoint (load), a seed (randomWeights) or the caller "
        "(fromWeights).\n"
     << "/// Not thread-safe: use one instance per thread (they may share "
        "weights).\n"
     << "class " << cls << " {\npublic:\n"
     << "  static constexpr const char *kModelName = "
     << cString(model.modelName) << ";\n"
     << "  static constexpr const char *kTarget = " << cString(model.target)
     << ";\n\n"
     << "  /// The embedded Plan, parsed and verified once per process.\n"
     << "  static tfc::rt::Expected<const tfc::rt::Plan *> embeddedPlan();\n"
     << "  /// The parameters the model reads: checkpoint names and shapes "
        "(f32).\n"
     << "  static tfc::rt::Expected<tfc::rt::ParamTable> paramTable();\n\n"
     << "  /// Binds a .safetensors checkpoint (Hugging Face names; f16/bf16 "
        "are\n"
     << "  /// converted). Every missing or mis-shaped tensor is reported by "
        "name.\n"
     << "  /// Unused checkpoint tensors are listed in `warnings` if given.\n"
     << "  static tfc::rt::Expected<" << cls
     << "> load(const std::string &weightsPath,\n"
     << "      std::vector<std::string> *warnings = nullptr);\n"
     << "  /// Deterministic N(0, 0.02) weights (the same as `tfc run "
        "--random-weights --seed`).\n"
     << "  static tfc::rt::Expected<" << cls
     << "> randomWeights(uint64_t seed = 0);\n"
     << "  static tfc::rt::Expected<" << cls
     << "> fromWeights(tfc::rt::WeightMap weights);\n\n"
     << "  /// Runs entry `entry` on `inputs` (in the entry's input order). "
        "Inputs are\n"
     << "  /// checked against the entry's signature before any kernel runs.\n"
     << "  tfc::rt::Expected<std::vector<tfc::rt::Tensor>>\n"
     << "  run(const std::string &entry, const std::vector<tfc::rt::Tensor> "
        "&inputs);\n";
  for (const EntryMethod &method : entryMethods(model.plan)) {
    os << "\n  /// " << commentSafe(entrySignature(*method.entry)) << "\n"
       << "  tfc::rt::Expected<std::vector<tfc::rt::Tensor>> "
       << method.entry->name << "(";
    for (size_t i = 0; i < method.params.size(); ++i)
      os << (i ? ", " : "") << "const tfc::rt::Tensor &" << method.params[i];
    os << ") {\n    return run(" << cString(method.entry->name) << ", {";
    for (size_t i = 0; i < method.params.size(); ++i)
      os << (i ? ", " : "") << method.params[i];
    os << "});\n  }\n";
  }
  os << "\n  /// Text generation with the `prefill` and `decode` entries (a "
        "decoder with a\n"
     << "  /// KV cache; runtime/Generator.h): sampling, stop ids, a callback "
        "per token.\n"
     << "  tfc::rt::Expected<tfc::rt::GenerationResult>\n"
     << "  generate(const std::vector<int32_t> &prompt,\n"
     << "           const tfc::rt::GenerationOptions &options,\n"
     << "           const tfc::rt::TokenCallback &onToken = {}) {\n"
     << "    return tfc::rt::generate(executor, prompt, options, onToken);\n"
     << "  }\n";
  os << "\n  const tfc::rt::Plan &plan() const { return executor.plan(); }\n"
     << "  const tfc::rt::RunStats &lastRunStats() const {\n"
     << "    return executor.lastRunStats();\n  }\n\n"
     << "private:\n"
     << "  explicit " << cls
     << "(tfc::rt::Executor executor) : executor(std::move(executor)) {}\n"
     << "  tfc::rt::Executor executor;\n"
     << "};\n\n"
     << "} // namespace tfc_generated\n\n"
     << "#endif // " << guard << "\n";
  return text;
}

//===----------------------------------------------------------------------===//
// <model>.cpp
//===----------------------------------------------------------------------===//

/// The generated source's Halide error handler: it keeps the messages so
/// that run() returns them as an error value (part of apiSource). With
/// Halide's own runtime (`tfc compile`), the same one-time set-up points
/// the kernels' parallel loops at tfc's thread pool, as `tfc run` does
/// (tfc emit's runtime shim calls the pool itself).
static void writeHalideErrorGlue(llvm::raw_ostream &os,
                                 const GeneratedModel &model) {
  // Halide's default error handler prints and aborts; this one keeps the
  // message so that run() returns it as an error value. Per thread, since
  // instances may run on several threads.
  os << "// Halide's default error handler prints and aborts; this one keeps "
        "the\n"
     << "// message so that run() returns it as an error value. Per thread: "
        "instances\n"
     << "// may run on several threads. The handler is process-wide (Halide "
        "has one).\n"
     << "// The first message says what failed; when there are several (a "
        "missing\n"
     << "// libcuda reports each entry point, then the library), the last "
        "says why.\n"
     << "struct HalideErrors {\n"
     << "  std::string first, last;\n"
     << "  size_t count = 0;\n"
     << "};\n"
     << "thread_local HalideErrors lastHalideErrors;\n\n"
     << "std::string trimmed(const char *message) {\n"
     << "  std::string text = message ? message : \"(no message)\";\n"
     << "  while (!text.empty() && (text.back() == '\\n' || text.back() == ' "
        "'))\n"
     << "    text.pop_back();\n"
     << "  return text;\n"
     << "}\n\n"
     << "void recordHalideError(void *, const char *message) {\n"
     << "  HalideErrors &errors = lastHalideErrors;\n"
     << "  (errors.count++ == 0 ? errors.first : errors.last) = "
        "trimmed(message);\n"
     << "}\n\n"
     << "std::string takeHalideErrors() {\n"
     << "  HalideErrors errors = lastHalideErrors;\n"
     << "  lastHalideErrors = HalideErrors();\n"
     << "  if (errors.count <= 1)\n"
     << "    return errors.first;\n"
     << "  return errors.first + \" ... (\" + std::to_string(errors.count - 2) "
        "+\n"
     << "         \" more) \" + errors.last;\n"
     << "}\n\n"
     << "void installHalideHooks() {\n"
     << "  static std::once_flag once;\n"
     << "  std::call_once(once, [] {\n"
     << "    halide_set_error_handler(&recordHalideError);\n";
  if (model.halideRuntime)
    os << "    // The kernels' parallel loops run on tfc's thread pool "
          "(runtime/ThreadPool.h).\n"
       << "    halide_set_custom_do_par_for(&tfc::rt::parallelFor);\n";
  os << "  });\n"
     << "}\n\n"
     << "} // namespace\n\n";
}

/// The generated class's methods (part of apiSource): the embedded plan,
/// the weights' loading, and run().
static void writeClassMethods(llvm::raw_ostream &os,
                              const GeneratedModel &model) {
  const std::string &cls = model.className;
  os << "namespace tfc_generated {\n\n"
     << "tfc::rt::Expected<const tfc::rt::Plan *> " << cls
     << "::embeddedPlan() {\n"
     << "  // deserializePlan verifies the plan, so a corrupt copy is an "
        "error, not a crash.\n"
     << "  static const tfc::rt::Expected<tfc::rt::Plan> plan =\n"
     << "      tfc::rt::deserializePlan(std::string(\n"
     << "          reinterpret_cast<const char *>(kPlanJson), sizeof "
        "kPlanJson));\n"
     << "  if (!plan)\n"
     << "    return tfc::rt::Status::error(std::string(kModelName) + \": \" + "
        "plan.message());\n"
     << "  if (plan->kernels.size() != sizeof kKernels / sizeof kKernels[0])\n"
     << "    return tfc::rt::Status::error(std::string(kModelName) +\n"
     << "                                  \": the plan and the kernel table "
        "disagree\");\n"
     << "  return &*plan;\n"
     << "}\n\n";

  os << "tfc::rt::Expected<tfc::rt::ParamTable> " << cls << "::paramTable() {\n"
     << "  tfc::rt::Expected<const tfc::rt::Plan *> plan = embeddedPlan();\n"
     << "  if (!plan)\n    return plan.status();\n"
     << "  tfc::rt::ParamTable table;\n"
     << "  // Kernels compute in f32; checkpoints in f16/bf16 are converted "
        "on load.\n"
     << "  for (const tfc::rt::ParamInfo &param : (*plan)->params)\n"
     << "    table.push_back(tfc::rt::ParamSpec{param.name, param.shape,\n"
     << "                                       tfc::rt::DType::F32});\n"
     << "  return table;\n"
     << "}\n\n";

  os << "tfc::rt::Expected<" << cls << "> " << cls
     << "::load(const std::string &weightsPath,\n"
     << "    std::vector<std::string> *warnings) {\n"
     << "  tfc::rt::Expected<tfc::rt::ParamTable> table = paramTable();\n"
     << "  if (!table)\n    return table.status();\n"
     << "  tfc::rt::Expected<tfc::rt::BoundWeights> bound =\n"
     << "      tfc::rt::bindWeights(*table, weightsPath);\n"
     << "  if (!bound)\n    return bound.status();\n"
     << "  if (warnings)\n    *warnings = bound->warnings;\n"
     << "  return fromWeights(std::move(bound->tensors));\n"
     << "}\n\n";

  os << "tfc::rt::Expected<" << cls << "> " << cls
     << "::randomWeights(uint64_t seed) {\n"
     << "  tfc::rt::Expected<tfc::rt::ParamTable> table = paramTable();\n"
     << "  if (!table)\n    return table.status();\n"
     << "  tfc::rt::Expected<tfc::rt::WeightMap> weights =\n"
     << "      tfc::rt::randomWeights(*table, seed);\n"
     << "  if (!weights)\n    return weights.status();\n"
     << "  return fromWeights(std::move(*weights));\n"
     << "}\n\n";

  os << "tfc::rt::Expected<" << cls << "> " << cls
     << "::fromWeights(tfc::rt::WeightMap weights) {\n"
     << "  tfc::rt::Expected<const tfc::rt::Plan *> plan = embeddedPlan();\n"
     << "  if (!plan)\n    return plan.status();\n"
     << "  installHalideHooks();\n"
     << "  tfc::rt::ExecutorOptions options;\n";
  if (model.usesDevice)
    os << "  // GPU kernels leave results in device memory: the executor "
          "copies entry\n"
       << "  // outputs back and frees device copies with these.\n"
       << "  options.copyToHost = &halide_copy_to_host;\n"
       << "  options.deviceFree = &halide_device_free;\n";
  // The weight prologue runs kernels (panels): their Halide messages say
  // why one failed (e.g. no CUDA driver), as in run().
  os << "  takeHalideErrors();\n"
     << "  tfc::rt::Expected<tfc::rt::Executor> executor =\n"
     << "      tfc::rt::Executor::create(\n"
     << "          **plan, "
        "std::vector<tfc::rt::KernelFn>(std::begin(kKernels), "
        "std::end(kKernels)),\n"
     << "          std::move(weights), options);\n"
     << "  if (!executor) {\n"
     << "    std::string halideErrors = takeHalideErrors();\n"
     << "    if (!halideErrors.empty())\n"
     << "      return tfc::rt::Status::error(executor.message() + \": \" + "
        "halideErrors);\n"
     << "    return executor.status();\n"
     << "  }\n"
     << "  return " << cls << "(std::move(*executor));\n"
     << "}\n\n";

  os << "tfc::rt::Expected<std::vector<tfc::rt::Tensor>>\n"
     << cls
     << "::run(const std::string &entry, const std::vector<tfc::rt::Tensor> "
        "&inputs) {\n"
     << "  takeHalideErrors();\n"
     << "  tfc::rt::Expected<std::vector<tfc::rt::Tensor>> outputs =\n"
     << "      executor.run(entry, inputs);\n"
     << "  std::string halideErrors = takeHalideErrors();\n"
     << "  if (!outputs && !halideErrors.empty())\n"
     << "    return tfc::rt::Status::error(outputs.message() + \": \" + "
        "halideErrors);\n"
     << "  return outputs;\n"
     << "}\n\n"
     << "} // namespace tfc_generated\n";
}

llvm::Expected<std::string> aot::apiSource(const GeneratedModel &model,
                                           llvm::StringRef producer) {
  rt::Expected<std::string> json = rt::serializePlan(model.plan);
  if (!json)
    return llvm::createStringError("serializing the plan: " + json.message());

  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Generated by " << producer << " from model '" << model.modelName
     << "'. Do not edit.\n"
     << "// Target: " << model.target << "\n\n"
     << "#include \"" << model.modelName << ".h\"\n\n"
     << "#include \"HalideRuntime.h\"\n";
  if (model.halideRuntime)
    os << "#include \"runtime/ThreadPool.h\"\n";
  os << "\n"
     << "#include <iterator>\n#include <mutex>\n#include <string>\n"
     << "#include <utility>\n\n";

  // The kernel table, in Plan order: Plan step `kernel` indices refer to it.
  os << "// The kernels, in the Plan's order (Halide argv convention).\n"
     << "extern \"C\" {\n";
  for (const rt::PlanKernel &kernel : model.plan.kernels)
    os << "int " << kernel.name << "_argv(void **args);\n";
  os << "}\n\n";

  os << "namespace {\n\n"
     << "// The serialized Plan (runtime/Plan.h), as bytes so that any size "
        "and any\n"
     << "// content compiles.\n"
     << "const unsigned char kPlanJson[] = {";
  for (size_t i = 0; i < json->size(); ++i) {
    if (i % 24 == 0)
      os << "\n";
    os << static_cast<unsigned>(static_cast<unsigned char>((*json)[i])) << ",";
  }
  os << "\n};\n\n";

  os << "tfc::rt::KernelFn const kKernels[] = {\n";
  for (const rt::PlanKernel &kernel : model.plan.kernels)
    os << "    &" << kernel.name << "_argv,\n";
  os << "};\n\n";

  writeHalideErrorGlue(os, model);
  writeClassMethods(os, model);
  return text;
}

//===----------------------------------------------------------------------===//
// CMake glue
//===----------------------------------------------------------------------===//

std::string aot::cmakeSnippet(const GeneratedModel &model,
                              const CMakeKernels &kernels,
                              llvm::StringRef producer) {
  const std::string &m = model.modelName;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# Generated by " << producer << " for model '" << m << "' (target "
     << model.target << ").\n"
     << "#\n"
     << "#   include(path/to/" << m
     << ".cmake)   # or add_subdirectory(path/to/this/folder)\n"
     << "#   target_link_libraries(app PRIVATE tfc::" << m << ")\n"
     << "#\n"
     << "# The target compiles " << m
     << ".cpp (the C++ API) in your build and links the\n"
     << "# kernels and the tfc runtime: no Halide, MLIR or LLVM library is "
        "needed.\n"
     << "# Afterwards TFC_MODEL_TARGET, TFC_MODEL_CLASS and TFC_MODEL_HEADER "
        "name what\n"
     << "# it defined (tfc_generated::" << model.className << ", \"" << m
     << ".h\").\n\n"
     << "# Needs CMake 3.16 or newer and a C++17 compiler.\n"
     << "include_guard(GLOBAL)\n"
     << "find_package(Threads REQUIRED)\n\n"
     << "set(_tfc_" << m << "_dir \"${CMAKE_CURRENT_LIST_DIR}\")\n\n"
     << "# The tfc runtime (tensors, checkpoints, the executor); shared by "
        "every\n"
     << "# model included into one project.\n"
     << "if(NOT TARGET tfc::runtime)\n"
     << "  add_library(tfc_runtime_prebuilt STATIC IMPORTED GLOBAL)\n"
     << "  set_target_properties(tfc_runtime_prebuilt PROPERTIES\n"
     << "    IMPORTED_LOCATION \"${_tfc_" << m
     << "_dir}/lib/libtfc_runtime.a\"\n"
     << "    INTERFACE_INCLUDE_DIRECTORIES \"${_tfc_" << m
     << "_dir}/include\")\n"
     << "  add_library(tfc::runtime ALIAS tfc_runtime_prebuilt)\n"
     << "endif()\n\n"
     << "# The tokenizers (runtime/tokenizer/Tokenizer.h), for programs that "
        "turn text\n"
     << "# into ids: link tfc::tokenizer. They need PCRE2 and ICU "
        "(libpcre2-dev,\n"
     << "# libicu-dev).\n"
     << "if(NOT TARGET tfc::tokenizer AND EXISTS \"${_tfc_" << m
     << "_dir}/lib/libtfc_tokenizer.a\")\n"
     << "  find_package(PkgConfig QUIET)\n"
     << "  if(PkgConfig_FOUND)\n"
     << "    pkg_check_modules(TFC_TOKENIZER_DEPS QUIET IMPORTED_TARGET "
        "libpcre2-8 icu-uc)\n"
     << "  endif()\n"
     << "  if(TFC_TOKENIZER_DEPS_FOUND)\n"
     << "    add_library(tfc_tokenizer_prebuilt STATIC IMPORTED GLOBAL)\n"
     << "    set_target_properties(tfc_tokenizer_prebuilt PROPERTIES\n"
     << "      IMPORTED_LOCATION \"${_tfc_" << m
     << "_dir}/lib/libtfc_tokenizer.a\"\n"
     << "      INTERFACE_LINK_LIBRARIES "
        "\"tfc::runtime;PkgConfig::TFC_TOKENIZER_DEPS\")\n"
     << "    add_library(tfc::tokenizer ALIAS tfc_tokenizer_prebuilt)\n"
     << "  endif()\n"
     << "endif()\n\n";
  std::string kernelsLib;
  if (!kernels.archive.empty()) {
    kernelsLib = "tfc_" + m + "_kernels";
    os << "# The kernels and Halide's standalone runtime, compiled by tfc.\n"
       << "add_library(" << kernelsLib << " STATIC IMPORTED GLOBAL)\n"
       << "set_target_properties(" << kernelsLib
       << " PROPERTIES\n  IMPORTED_LOCATION \"${_tfc_" << m << "_dir}/"
       << kernels.archive << "\")\n\n";
  }
  os << "add_library(tfc_" << m << " STATIC\n  \"${_tfc_" << m << "_dir}/" << m
     << ".cpp\"";
  for (const std::string &source : kernels.sources)
    os << "\n  \"${_tfc_" << m << "_dir}/" << source << "\"";
  os << ")\n"
     << "target_compile_features(tfc_" << m << " PUBLIC cxx_std_17)\n"
     << "target_include_directories(tfc_" << m << " PUBLIC \"${_tfc_" << m
     << "_dir}\")\n";
  if (!kernels.sources.empty())
    os << "# The kernels were scheduled for the vector width of the machine "
          "tfc ran on;\n"
       << "# -march=native lets the compiler use this one's (without it they "
          "are\n"
       << "# correct, but slower).\n"
       << "option(TFC_" << llvm::StringRef(m).upper()
       << "_NATIVE \"Compile the " << m << " kernels with -march=native\" ON)\n"
       << "set(_tfc_" << m << "_arch \"\")\n"
       << "if(TFC_" << llvm::StringRef(m).upper() << "_NATIVE)\n"
       << "  set(_tfc_" << m << "_arch -march=native)\n"
       << "endif()\n"
       << "# Halide's C output: warnings about its generated code are not "
          "yours to fix.\n"
       << "set_source_files_properties(";
  for (const std::string &source : kernels.sources)
    os << "\n  \"${_tfc_" << m << "_dir}/" << source << "\"";
  if (!kernels.sources.empty())
    os << "\n  PROPERTIES COMPILE_OPTIONS "
          "\"$<$<CXX_COMPILER_ID:GNU,Clang>:-w;${_tfc_"
       << m << "_arch}>\")\n";
  os << "target_link_libraries(tfc_" << m << " PUBLIC tfc::runtime";
  if (!kernelsLib.empty())
    os << " " << kernelsLib;
  for (const std::string &lib : kernels.prebuilt)
    os << "\n  \"${_tfc_" << m << "_dir}/" << lib << "\"";
  os << "\n  Threads::Threads ${CMAKE_DL_LIBS})\n"
     << "add_library(tfc::" << m << " ALIAS tfc_" << m << ")\n\n"
     << "set(TFC_MODEL_TARGET tfc::" << m << ")\n"
     << "set(TFC_MODEL_CLASS tfc_generated::" << model.className << ")\n"
     << "set(TFC_MODEL_HEADER \"" << m << ".h\")\n";
  return text;
}

std::string aot::cmakeLists(const GeneratedModel &model) {
  const std::string &m = model.modelName;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# Generated by tfc: add_subdirectory() this folder to get tfc::" << m
     << "\n"
     << "# (the same as include(" << m << ".cmake)).\n"
     << "include(\"${CMAKE_CURRENT_LIST_DIR}/" << m << ".cmake\")\n"
     << "set(TFC_MODEL_TARGET \"${TFC_MODEL_TARGET}\" PARENT_SCOPE)\n"
     << "set(TFC_MODEL_CLASS \"${TFC_MODEL_CLASS}\" PARENT_SCOPE)\n"
     << "set(TFC_MODEL_HEADER \"${TFC_MODEL_HEADER}\" PARENT_SCOPE)\n";
  return text;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

std::string aot::joinPath(const std::string &dir, const std::string &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

llvm::Error aot::makeDirectory(const std::string &dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError("cannot create folder '" + dir + "': " + ec.message());
  return llvm::Error::success();
}

llvm::Error aot::writeFile(const std::string &path, llvm::StringRef contents) {
  // A failed or interrupted run must not leave a truncated file behind that
  // a later build would pick up, nor destroy the previous one: the runtime's
  // writer writes aside, checks every write, and renames.
  rt::Status written =
      rt::writeFileAtomically(path, contents.data(), contents.size());
  if (!written.ok())
    return llvm::createStringError(written.message());
  return llvm::Error::success();
}

uint64_t aot::fileSize(const std::string &path) {
  uint64_t size = 0;
  if (llvm::sys::fs::file_size(path, size))
    return 0;
  return size;
}

std::string aot::sizeString(uint64_t bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes >= (1u << 20))
    os << llvm::format("%.1f MiB", static_cast<double>(bytes) / (1u << 20));
  else if (bytes >= 1024)
    os << llvm::format("%.1f KiB", static_cast<double>(bytes) / 1024);
  else
    os << bytes << " bytes";
  return text;
}

/// Copies a file of the tfc installation into the output, as writeFile
/// writes (not llvm::sys::fs::copy_file, which truncates the target first
/// and leaves it half-written when the disk fills up).
static llvm::Error copyInto(const std::string &from, const std::string &to) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> contents =
      llvm::MemoryBuffer::getFile(from, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!contents)
    return llvm::createStringError("cannot read '" + from +
                     "': " + contents.getError().message());
  return writeFile(to, (*contents)->getBuffer());
}

/// Copies the `*.h` files of `from` into `to` (created); how many, or an
/// error when there are none.
static llvm::Expected<size_t> copyHeaders(const std::string &from,
                                          const std::string &to) {
  if (llvm::Error err = makeDirectory(to))
    return std::move(err);
  std::error_code ec;
  size_t headers = 0;
  for (llvm::sys::fs::directory_iterator it(from, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef path = it->path();
    if (!path.ends_with(".h"))
      continue;
    if (llvm::Error err = copyInto(
            path.str(), joinPath(to, llvm::sys::path::filename(path).str())))
      return std::move(err);
    ++headers;
  }
  if (ec || headers == 0)
    return llvm::createStringError("cannot read the headers in '" + from + "'" +
                     (ec ? ": " + ec.message() : std::string()));
  return headers;
}

/// The tokenizer library and its headers (include/runtime/tokenizer/), when
/// this tfc knows where its library is.
static llvm::Error copyTokenizer(const RuntimeFiles &runtime,
                                 const std::string &dir, AotResult &result) {
  if (runtime.tokenizerLibrary.empty() ||
      !llvm::sys::fs::exists(runtime.tokenizerLibrary))
    return llvm::Error::success();
  llvm::Expected<size_t> headers =
      copyHeaders(joinPath(runtime.sourceRoot, "runtime/tokenizer"),
                  joinPath(dir, "include/runtime/tokenizer"));
  if (!headers)
    return headers.takeError();
  std::string lib = joinPath(dir, "lib/libtfc_tokenizer.a");
  if (llvm::Error err = copyInto(runtime.tokenizerLibrary, lib))
    return err;
  result.files.push_back(
      {lib, "the tokenizers (tfc::tokenizer; PCRE2 and ICU), " +
                sizeString(fileSize(lib))});
  return llvm::Error::success();
}

llvm::Error aot::copyRuntime(const RuntimeFiles &runtime,
                             const std::string &dir, AotResult &result) {
  if (runtime.library.empty() || runtime.sourceRoot.empty() ||
      runtime.halideIncludeDir.empty())
    return llvm::createStringError("the tfc runtime's location is unknown (this tfc was "
                     "built without it); pass --runtime-library and "
                     "--runtime-source");
  if (!llvm::sys::fs::exists(runtime.library))
    return llvm::createStringError("the tfc runtime library '" + runtime.library +
                     "' does not exist (build the tfc_runtime target)");

  std::string includeDir = joinPath(dir, "include");
  std::string runtimeHeaders = joinPath(includeDir, "runtime");
  llvm::Expected<size_t> headers =
      copyHeaders(joinPath(runtime.sourceRoot, "runtime"), runtimeHeaders);
  if (!headers)
    return llvm::createStringError("the tfc runtime: " + llvm::toString(headers.takeError()));
  if (llvm::Error err =
          copyInto(joinPath(runtime.halideIncludeDir, "HalideRuntime.h"),
                   joinPath(includeDir, "HalideRuntime.h")))
    return err;
  result.files.push_back(
      {includeDir + "/",
       std::to_string(*headers) + " runtime headers + HalideRuntime.h"});

  std::string libDir = joinPath(dir, "lib");
  if (llvm::Error err = makeDirectory(libDir))
    return err;
  std::string lib = joinPath(libDir, "libtfc_runtime.a");
  if (llvm::Error err = copyInto(runtime.library, lib))
    return err;
  result.files.push_back(
      {lib, "the tfc runtime, " + sizeString(fileSize(lib))});
  return copyTokenizer(runtime, dir, result);
}
