//===- AotDumpTest.cpp - Fixes to Halide's C backend output ---------------===//
//
// retypeDeviceBuffers on the lines Halide 14's C backend writes for a
// device allocation outside the GPU loops (GPT-2 attention's P V
// accumulator until its chunk loop's bound changed, 6b43a1b; the emitted
// sources of the example models have none today, so tests/lit's emit.test
// no longer sees one).
//
//===----------------------------------------------------------------------===//

#include "codegen/aot/AotDump.h"

#include <gtest/gtest.h>

using tfc::codegen::retypeDeviceBuffers;

namespace {

TEST(AotDumpTest, RetypesADeviceAllocationsBufferStruct) {
  std::string in = "  auto *_12 = _halide_buffer_init(_11, _10, 0, 0, 2);\n"
                   "  float *f_buffer = (float *)_12;\n"
                   "  auto *_13 = _halide_buffer_get_device(f_buffer);\n";
  std::string want = "  auto *_12 = _halide_buffer_init(_11, _10, 0, 0, 2);\n"
                     "  halide_buffer_t *f_buffer = _12;\n"
                     "  auto _13 = _halide_buffer_get_device(f_buffer);\n";
  EXPECT_EQ(retypeDeviceBuffers(in), want);
}

TEST(AotDumpTest, LeavesOtherCastsAlone) {
  // A cast of something that is not a buffer struct stays as it is.
  std::string in = "  float *g_buffer = (float *)_7;\n"
                   "  int32_t x = (int32_t)_8;\n";
  EXPECT_EQ(retypeDeviceBuffers(in), in);
}

} // namespace
