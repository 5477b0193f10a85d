//===- runner.cpp - Run, check and time a model built by `tfc compile` ----===//
//
// The program the GPU route carries to the device (docs/cuda.md): built
// here against one model's library (`tfc compile --target cuda`, or host /
// opencl for the references and the offline checks), it needs only libcuda
// (or libOpenCL) at run time.
//
//   runner [--weights FILE | --seed N] [--entry NAME]
//          [--batch B] [--seq S] [--past P] [--inputs FILE]
//          [--write FILE] [--reference FILE] [--tolerance T]
//          [--repeat N] [--warmup W] [--label TEXT] [--expect OUT=NAME]
//
// Inputs: from --inputs (a .safetensors file's `input.NAME` tensors, e.g. a
// fixture of tests/fixtures or a file written by --write), or made up from
// the plan: symbolic sizes named batch / seq / past take --batch / --seq /
// --past (any other symbol --seq); token ids are (31 i + 7) mod the
// smallest vocabulary they index; bool inputs (masks) are all true; f32
// inputs (a KV cache) are deterministic values in [-1, 1).
//
// --write FILE: the inputs (`input.NAME`, unless they are larger than
// kWholeElements together) and the outputs, whole
// (`expected.NAME`) when at most kWholeElements elements, else every
// stride-th element (`sample.NAME`, 1-D, with `stride.NAME`): the CPU
// references carried to the device stay small. --reference FILE: compares
// each output with the file's `expected.NAME` or `sample.NAME` and prints
// the max abs error; exit 1 when one is above --tolerance (default 1e-4).
// --repeat N: times N runs after --warmup W (default 3) and prints the
// median, min and max wall-clock ms (a run returns after its outputs are
// back in host memory, so it includes the device's work).
//
//===----------------------------------------------------------------------===//

#include TFC_MODEL_HEADER

#include "HalideRuntime.h"
#include "runtime/Safetensors.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using Model = TFC_MODEL_CLASS;
namespace rt = tfc::rt;

namespace {

constexpr int64_t kWholeElements = 1 << 18;

struct Options {
  std::string weights, entry, inputs, write, reference, label;
  /// --expect OUT=NAME: compare output OUT with NAME, not expected.OUT.
  std::map<std::string, std::string> expect;
  uint64_t seed = 0;
  int64_t batch = 1, seq = 128, past = 0;
  double tolerance = 1e-4;
  int repeat = 0, warmup = 3;
};

bool parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      return false;
    std::string value = argv[++i];
    if (arg == "--weights")
      o.weights = value;
    else if (arg == "--seed")
      o.seed = std::strtoull(value.c_str(), nullptr, 10);
    else if (arg == "--entry")
      o.entry = value;
    else if (arg == "--batch")
      o.batch = std::atoll(value.c_str());
    else if (arg == "--seq")
      o.seq = std::atoll(value.c_str());
    else if (arg == "--past")
      o.past = std::atoll(value.c_str());
    else if (arg == "--inputs")
      o.inputs = value;
    else if (arg == "--write")
      o.write = value;
    else if (arg == "--reference")
      o.reference = value;
    else if (arg == "--tolerance")
      o.tolerance = std::atof(value.c_str());
    else if (arg == "--repeat")
      o.repeat = std::atoi(value.c_str());
    else if (arg == "--warmup")
      o.warmup = std::atoi(value.c_str());
    else if (arg == "--label")
      o.label = value;
    else if (arg == "--expect" && value.find('=') != std::string::npos)
      o.expect[value.substr(0, value.find('='))] =
          value.substr(value.find('=') + 1);
    else
      return false;
  }
  return o.batch >= 1 && o.seq >= 1 && o.past >= 0 && o.repeat >= 0;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 2;
}

/// `tensor` converted to `dtype` (integers and bools between each other).
rt::Expected<rt::Tensor> convert(const rt::Tensor &tensor, rt::DType dtype) {
  if (tensor.dtype() == dtype)
    return tensor;
  rt::Expected<rt::Tensor> out = rt::Tensor::zeros(dtype, tensor.shape());
  if (!out)
    return out;
  auto get = [&](int64_t i) -> int64_t {
    switch (tensor.dtype()) {
    case rt::DType::I32:
      return tensor.dataAs<int32_t>()[i];
    case rt::DType::I64:
      return tensor.dataAs<int64_t>()[i];
    case rt::DType::Bool:
      return tensor.dataAs<uint8_t>()[i];
    default:
      return static_cast<int64_t>(tensor.dataAs<float>()[i]);
    }
  };
  for (int64_t i = 0; i < tensor.numElements(); ++i) {
    int64_t v = get(i);
    switch (dtype) {
    case rt::DType::I32:
      out->dataAs<int32_t>()[i] = static_cast<int32_t>(v);
      break;
    case rt::DType::I64:
      out->dataAs<int64_t>()[i] = v;
      break;
    case rt::DType::Bool:
      out->dataAs<uint8_t>()[i] = v != 0;
      break;
    default:
      out->dataAs<float>()[i] = static_cast<float>(v);
      break;
    }
  }
  return out;
}

rt::Expected<std::vector<rt::Tensor>> inputsFromFile(const rt::PlanEntry &entry,
                                                     const std::string &path) {
  rt::Expected<rt::SafetensorsFile> file = rt::SafetensorsFile::open(path);
  if (!file)
    return rt::Status::error(file.message());
  std::vector<rt::Tensor> inputs;
  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    std::string name = "input." + entry.inputNames[i];
    if (!file->contains(name))
      return rt::Status::error(path + " has no tensor '" + name + "'");
    rt::Expected<rt::Tensor> t = file->tensor(name);
    if (!t)
      return rt::Status::error(t.message());
    rt::Expected<rt::Tensor> c =
        convert(*t, entry.values[entry.inputs[i]].dtype);
    if (!c)
      return rt::Status::error(c.message());
    inputs.push_back(std::move(*c));
  }
  return inputs;
}

rt::Expected<std::vector<rt::Tensor>> madeUpInputs(const rt::PlanEntry &entry,
                                                   const Options &o) {
  std::vector<int64_t> symbols;
  for (const rt::SymbolSource &s : entry.symbols)
    symbols.push_back(s.name == "batch"  ? o.batch
                      : s.name == "past" ? o.past
                                         : o.seq);
  std::map<int32_t, int64_t> limits; // value id -> smallest index limit
  for (const rt::IndexCheck &check : entry.indexChecks) {
    auto it = limits.find(check.value);
    limits[check.value] =
        it == limits.end() ? check.limit : std::min(it->second, check.limit);
  }
  std::vector<rt::Tensor> inputs;
  uint32_t state = 12345;
  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    const rt::PlanValue &value = entry.values[entry.inputs[i]];
    rt::Shape shape;
    for (const rt::DimExpr &dim : value.shape)
      shape.push_back(rt::evaluate(dim, symbols));
    rt::Expected<rt::Tensor> t = rt::Tensor::zeros(value.dtype, shape);
    if (!t)
      return rt::Status::error("input '" + entry.inputNames[i] +
                               "': " + t.message());
    int64_t limit = limits.count(entry.inputs[i]) ? limits[entry.inputs[i]]
                                                  : 1000;
    for (int64_t k = 0; k < t->numElements(); ++k) {
      state = state * 1664525u + 1013904223u;
      switch (value.dtype) {
      case rt::DType::I32:
        t->dataAs<int32_t>()[k] = static_cast<int32_t>((31 * k + 7) % limit);
        break;
      case rt::DType::I64:
        t->dataAs<int64_t>()[k] = (31 * k + 7) % limit;
        break;
      case rt::DType::Bool:
        t->dataAs<uint8_t>()[k] = 1;
        break;
      default:
        t->dataAs<float>()[k] = static_cast<float>(state >> 8) / 8388608.0f - 1;
        break;
      }
    }
    inputs.push_back(std::move(*t));
  }
  return inputs;
}

/// Every `stride`-th element of an f32 tensor, as a 1-D tensor.
rt::Tensor sampled(const rt::Tensor &t, int64_t stride) {
  int64_t n = (t.numElements() + stride - 1) / stride;
  std::vector<float> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(t.dataAs<float>()[i * stride]);
  return *rt::Tensor::fromF32({n}, values);
}

int64_t strideFor(const rt::Tensor &t) {
  return t.numElements() <= kWholeElements
             ? 1
             : (t.numElements() + kWholeElements - 1) / kWholeElements;
}

rt::Status writeFile(const std::string &path, const rt::PlanEntry &entry,
                     const std::vector<rt::Tensor> &inputs,
                     const std::vector<rt::Tensor> &outputs) {
  std::map<std::string, rt::Tensor> named;
  // Large inputs (a KV cache) are left out: --inputs is then not used, and
  // the made-up inputs are the same wherever the runner runs.
  int64_t inputElements = 0;
  for (const rt::Tensor &t : inputs)
    inputElements += t.numElements();
  for (size_t i = 0; i < inputs.size() && inputElements <= kWholeElements; ++i)
    named.emplace("input." + entry.inputNames[i], inputs[i]);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string &name = entry.outputNames[i];
    int64_t stride = strideFor(outputs[i]);
    if (outputs[i].dtype() != rt::DType::F32 || stride == 1) {
      named.emplace("expected." + name, outputs[i]);
      continue;
    }
    named.emplace("sample." + name, sampled(outputs[i], stride));
    named.emplace("stride." + name, *rt::Tensor::fromI64({1}, {stride}));
  }
  return rt::writeSafetensors(path, named);
}

/// Compares the outputs with the reference file; prints one line each.
rt::Expected<bool> compare(const std::string &path, const rt::PlanEntry &entry,
                           const std::vector<rt::Tensor> &outputs,
                           const Options &o) {
  rt::Expected<rt::SafetensorsFile> file = rt::SafetensorsFile::open(path);
  if (!file)
    return rt::Status::error(file.message());
  bool ok = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string &name = entry.outputNames[i];
    const rt::Tensor &out = outputs[i];
    int64_t stride = 1;
    std::string refName =
        o.expect.count(name) ? o.expect.at(name) : "expected." + name;
    if (!file->contains(refName)) {
      refName = "sample." + name;
      rt::Expected<rt::Tensor> s = file->tensor("stride." + name);
      if (!file->contains(refName) || !s)
        return rt::Status::error(path + " has no reference for '" + name + "'");
      stride = s->dataAs<int64_t>()[0];
    }
    rt::Expected<rt::Tensor> ref = file->loadF32(refName);
    if (!ref)
      return rt::Status::error(ref.message());
    rt::Expected<rt::Tensor> got = convert(out, rt::DType::F32);
    if (!got)
      return rt::Status::error(got.message());
    int64_t n = ref->numElements();
    if ((got->numElements() + stride - 1) / stride != n)
      return rt::Status::error("'" + name + "': " +
                               std::to_string(got->numElements()) +
                               " elements, the reference has " +
                               std::to_string(n) + " (stride " +
                               std::to_string(stride) + ")");
    double maxErr = 0;
    int64_t at = 0;
    for (int64_t k = 0; k < n; ++k) {
      double d = std::fabs(static_cast<double>(got->dataAs<float>()[k * stride]) -
                           ref->dataAs<float>()[k]);
      if (std::isnan(d) || d > maxErr) {
        maxErr = std::isnan(d) ? INFINITY : d;
        at = k * stride;
      }
    }
    bool pass = maxErr <= o.tolerance;
    ok = ok && pass;
    std::printf("check  %s %s %s: max abs error %.3e at %lld (%lld of %lld "
                "elements) %s\n",
                o.label.c_str(), entry.name.c_str(), name.c_str(), maxErr,
                static_cast<long long>(at), static_cast<long long>(n),
                static_cast<long long>(got->numElements()),
                pass ? "ok" : "FAIL");
  }
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: %s [--weights FILE | --seed N] [--entry NAME] "
                 "[--batch B] [--seq S] [--past P] [--inputs FILE] "
                 "[--write FILE] [--reference FILE] [--tolerance T] "
                 "[--repeat N] [--warmup W] [--label TEXT] "
                 "[--expect OUT=NAME]\n",
                 argv[0]);
    return 2;
  }
  // Device memory of the temps goes back to Halide's cache, not the driver,
  // when the executor frees it: no cuMemAlloc/cuMemFree per run.
  halide_reuse_device_allocations(nullptr, true);
  if (o.label.empty())
    o.label = Model::kModelName;

  auto start = std::chrono::steady_clock::now();
  rt::Expected<Model> model = o.weights.empty()
                                  ? Model::randomWeights(o.seed)
                                  : Model::load(o.weights, nullptr);
  if (!model)
    return fail(model.message());
  const rt::Plan &plan = model->plan();
  const rt::PlanEntry *entry =
      o.entry.empty() ? &plan.entries.front() : plan.findEntry(o.entry);
  if (!entry)
    return fail("the model has no entry '" + o.entry + "'");
  rt::Expected<std::vector<rt::Tensor>> inputs =
      o.inputs.empty() ? madeUpInputs(*entry, o)
                       : inputsFromFile(*entry, o.inputs);
  if (!inputs)
    return fail(inputs.message());

  rt::Expected<std::vector<rt::Tensor>> outputs =
      model->run(entry->name, *inputs);
  if (!outputs)
    return fail(outputs.message());
  double firstMs = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  std::printf("run    %s %s (%s): first run %.1f ms (weights, upload, "
              "kernel load)\n",
              o.label.c_str(), entry->name.c_str(), Model::kTarget, firstMs);

  int status = 0;
  if (!o.write.empty()) {
    rt::Status written = writeFile(o.write, *entry, *inputs, *outputs);
    if (!written.ok())
      return fail(written.message());
  }
  if (!o.reference.empty()) {
    rt::Expected<bool> ok =
        compare(o.reference, *entry, *outputs, o);
    if (!ok)
      return fail(ok.message());
    status = *ok ? 0 : 1;
  }
  if (o.repeat > 0) {
    std::vector<double> ms;
    for (int r = 0; r < o.warmup + o.repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      rt::Expected<std::vector<rt::Tensor>> again =
          model->run(entry->name, *inputs);
      if (!again)
        return fail(again.message());
      double t = std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count();
      if (r >= o.warmup)
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("time   %s %s: median %.3f ms (min %.3f, max %.3f, %d runs)\n",
                o.label.c_str(), entry->name.c_str(), ms[ms.size() / 2],
                ms.front(), ms.back(), o.repeat);
  }
  return status;
}
