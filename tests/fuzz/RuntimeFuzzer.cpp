//===- RuntimeFuzzer.cpp - libFuzzer target for the runtime's input checks ===//
//
// Each input is a .safetensors file (checkpoints and `--inputs` files are
// untrusted). It is:
//
//  1. opened from memory (SafetensorsFile::fromBytes: the header's JSON,
//     dtypes, shapes, offsets and overlaps are validated);
//  2. if it opens, every tensor is read in its stored dtype and as f32 and
//     every byte summed, so that an offset the validation let through is an
//     out-of-bounds read under ASan;
//  3. run through the executor's input checks: the tensors named after the
//     inputs of the toy Plan's entries (tests/unit/runtime/PlanTestUtil.h:
//     `ids`, `mask`, `past`, `x`) are passed to Executor::run. The checks
//     (count, dtype conversion, rank, static dims, symbolic dims across
//     inputs, bounds, index and dim checks) must refuse anything the fake
//     kernels, which index their buffers as a real kernel would, could not
//     handle; a shape they let through wrongly is an ASan report there.
//
// Inputs that start with '{' are also parsed as a JSON Plan
// (deserializePlan) and, when one parses, checked by Executor::create.
//
//===----------------------------------------------------------------------===//

#include "runtime/Executor.h"
#include "runtime/Plan.h"
#include "runtime/Safetensors.h"

#include "../unit/runtime/PlanTestUtil.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

using namespace tfc::rt;

namespace {

/// Reads every byte of `t`; the result only keeps the reads alive.
uint64_t touch(const Tensor &t) {
  const auto *p = static_cast<const uint8_t *>(t.data());
  uint64_t sum = 0;
  for (size_t i = 0; i < t.byteSize(); ++i)
    sum += p[i];
  return sum;
}

volatile uint64_t sink;

void fuzzTensors(const SafetensorsFile &file) {
  for (const std::string &name : file.names()) {
    if (Expected<Tensor> t = file.tensor(name))
      sink = sink + touch(*t);
    if (Expected<Tensor> f = file.loadF32(name))
      sink = sink + touch(*f);
  }
}

void fuzzInputChecks(const SafetensorsFile &file) {
  static Executor *executor = [] {
    Expected<Executor> e = Executor::create(test::makeToyPlan(),
                                            test::toyKernels(),
                                            test::toyWeights());
    return e ? new Executor(e.take()) : nullptr;
  }();
  if (!executor)
    __builtin_trap(); // the toy plan itself must be valid
  for (const PlanEntry &entry : executor->plan().entries) {
    std::vector<Tensor> inputs;
    for (const std::string &name : entry.inputNames) {
      Expected<Tensor> t = file.tensor(name);
      if (!t)
        break;
      inputs.push_back(t.take());
    }
    // A partial list exercises the count check.
    Expected<std::vector<Tensor>> outputs = executor->run(entry.name, inputs);
    if (outputs)
      for (const Tensor &out : *outputs)
        sink = sink + touch(out);
  }
}

void fuzzPlan(const uint8_t *data, size_t size) {
  Expected<Plan> plan =
      deserializePlan(std::string(reinterpret_cast<const char *>(data), size));
  if (!plan)
    return;
  // No-op kernels: create() only checks the plan and the weights.
  std::vector<KernelFn> kernels(plan->kernels.size(),
                                [](void **) { return 0; });
  (void)Executor::create(*plan, std::move(kernels), {});
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 0 && data[0] == '{')
    fuzzPlan(data, size);
  Expected<SafetensorsFile> file = SafetensorsFile::fromBytes(
      std::vector<uint8_t>(data, data + size), "<fuzz>");
  if (!file)
    return 0;
  fuzzTensors(*file);
  fuzzInputChecks(*file);
  return 0;
}
