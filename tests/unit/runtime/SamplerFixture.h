//===- SamplerFixture.h - Reading the sampler/beam fixtures -----*- C++ -*-===//
//
// The reference files in tests/fixtures/sampler/ are written by
// tools/gen_sampler_fixtures.py (Python, numpy and HF transformers); the tests
// only read them.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TESTS_UNIT_RUNTIME_SAMPLERFIXTURE_H
#define TFC_TESTS_UNIT_RUNTIME_SAMPLERFIXTURE_H

#include "runtime/Safetensors.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace tfc::rt::test {

/// tests/fixtures/sampler/<name> under $TFC_SOURCE_DIR (ctest sets it); else
/// the first such file found from the working directory upwards (so the
/// binary also runs by hand from the repository or a build directory).
inline std::string samplerFixturePath(const std::string &name) {
  std::string rel = "tests/fixtures/sampler/" + name;
  if (const char *env = std::getenv("TFC_SOURCE_DIR"))
    return std::string(env) + "/" + rel;
  std::string up;
  for (int depth = 0; depth < 8; ++depth, up += "../")
    if (std::FILE *f = std::fopen((up + rel).c_str(), "rb")) {
      std::fclose(f);
      return up + rel;
    }
  return rel;
}

/// A fixture tensor's elements as a vector of T (T must match the dtype).
template <typename T>
std::optional<std::vector<T>> fixtureValues(const SafetensorsFile &file,
                                            const std::string &name) {
  Expected<Tensor> t = file.tensor(name);
  if (!t.ok()) {
    ADD_FAILURE() << t.message();
    return std::nullopt;
  }
  if (dtypeSize(t->dtype()) != sizeof(T)) {
    ADD_FAILURE() << name << ": unexpected dtype " << t->typeString();
    return std::nullopt;
  }
  std::vector<T> out(static_cast<size_t>(t->numElements()));
  if (!out.empty())
    std::memcpy(out.data(), t->data(), out.size() * sizeof(T));
  return out;
}

} // namespace tfc::rt::test

#endif // TFC_TESTS_UNIT_RUNTIME_SAMPLERFIXTURE_H
