//===- CodegenTestUtil.h - Running single-op kernels in tests ---*- C++ -*-===//
//
// Tests write one tfc op in a func.func, JIT its kernel through a
// KernelCache, call the argv function on Halide::Runtime buffers, and
// compare with a naive reference computed in double.
//
// Tensors are indexed in tensor-axis order (axis 0 outermost) like the IR;
// the buffers underneath follow the kernel contract (Halide dim 0 = last
// axis, i1 stored as uint8).
//
//===----------------------------------------------------------------------===//

#ifndef TFC_TESTS_UNIT_CODEGEN_CODEGENTESTUTIL_H
#define TFC_TESTS_UNIT_CODEGEN_CODEGENTESTUTIL_H

#include "codegen/KernelCache.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "gtest/gtest.h"

#include <functional>
#include <string>
#include <vector>

namespace tfc::test {

using Shape = std::vector<int64_t>;
using Index = std::vector<int64_t>;

/// BF16: bfloat16 storage (get/set convert: round to nearest even).
enum class DT { F32, I32, I64, Bool, BF16 };

/// A host tensor for a kernel argument.
struct Tensor {
  Tensor() = default;
  Tensor(DT dtype, Shape shape);

  DT dtype = DT::F32;
  Shape shape;
  Halide::Runtime::Buffer<void> buffer;

  int64_t numElements() const;
  double get(const Index &index) const;
  void set(const Index &index, double value);
  /// Uniform in [lo, hi] (integers: whole numbers; bool: 0/1).
  Tensor &random(double lo, double hi, unsigned seed);
  Tensor &fill(const std::function<double(const Index &)> &fn);
  halide_buffer_t *raw() { return buffer.raw_buffer(); }
};

/// Calls `fn` for every index of `shape`, row-major.
void forEachIndex(const Shape &shape,
                  const std::function<void(const Index &)> &fn);

/// The MLIR context with the tfc and func dialects.
mlir::MLIRContext &context();

/// A parsed module and its first tfc op.
struct ParsedOp {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Operation *op = nullptr;
};

/// Parses `ir` (a module body: func.func definitions) and finds the first
/// op of the tfc dialect. Fails the test if the IR does not parse (or, with
/// `verify`, does not verify: the planner's shape-generic copies of ops,
/// which only the code generator reads, need not).
ParsedOp parseOp(const std::string &ir, bool verify = true);

/// `%r = <opText>` in a function of `args` ("%a: tensor<?x4xf32>, ...")
/// returning `resultType`.
std::string singleOpFunc(const std::string &args, const std::string &opText,
                         const std::string &resultType);

/// JIT-compiles the op of `ir` (in `with`, default cache()), runs it on
/// `inputs` into a fresh tensor of `resultShape`/`resultType`, and returns
/// it. Fails the test (and returns an empty tensor) on any error.
Tensor runOp(const std::string &ir, std::vector<Tensor> inputs, DT resultType,
             const Shape &resultShape, codegen::KernelCache *with = nullptr,
             bool verify = true);

/// Element-wise comparison: |out - ref| <= atol + rtol * |ref| everywhere
/// (NaN equal to NaN). Reports the first few mismatches.
void expectClose(const Tensor &out,
                 const std::function<double(const Index &)> &ref,
                 double rtol = 1e-5, double atol = 1e-6);

/// The process-wide cache the tests compile with.
codegen::KernelCache &cache();

/// A cache like cache() but without the extern stages (AMX tiles, the fp32
/// panel stage): the Halide kernels (AVX512_BF16, the fp32 tile), for
/// testing them on a CPU where cache() uses the stages.
codegen::KernelCache &noExternCache();

} // namespace tfc::test

#endif // TFC_TESTS_UNIT_CODEGEN_CODEGENTESTUTIL_H
