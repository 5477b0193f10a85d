//===- CompileTime.cpp - Where a kernel's compile time went ---------------===//

#include "codegen/CompileTime.h"

#include <ctime>

using namespace tfc;

double codegen::threadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// The specializations under `definition`, nested ones included.
static unsigned countSpecializations(const Halide::Internal::Definition &definition) {
  unsigned count = 0;
  for (const Halide::Internal::Specialization &s :
       definition.specializations())
    count += 1 + countSpecializations(s.definition);
  return count;
}

unsigned codegen::countVariants(const Halide::Pipeline &pipeline) {
  std::vector<Halide::Internal::Function> outputs;
  for (const Halide::Func &f : pipeline.outputs())
    outputs.push_back(f.function());
  unsigned variants = 1;
  for (const auto &[name, function] :
       Halide::Internal::build_environment(outputs)) {
    variants += countSpecializations(function.definition());
    for (const Halide::Internal::Definition &update : function.updates())
      variants += countSpecializations(update);
  }
  return variants;
}
