//===- CodegenTestUtil.cpp - Running single-op kernels in tests -----------===//

#include "CodegenTestUtil.h"

#include "ir/TfcDialect.h"
#include "runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"

#include <cmath>
#include <cstring>
#include <random>

namespace tfc::test {

namespace {

halide_type_t halideType(DT dtype) {
  switch (dtype) {
  case DT::F32:
    return halide_type_of<float>();
  case DT::I32:
    return halide_type_of<int32_t>();
  case DT::I64:
    return halide_type_of<int64_t>();
  case DT::Bool:
    return halide_type_of<uint8_t>();
  case DT::BF16:
    return halide_type_t(halide_type_bfloat, 16);
  }
  return halide_type_of<float>();
}

std::vector<int> halideSizes(const Shape &shape) {
  return std::vector<int>(shape.rbegin(), shape.rend());
}

/// The element at axis-ordered `index` (Halide dim d = axis rank-1-d).
uint8_t *addressOf(const halide_buffer_t *b, const Index &index) {
  int64_t offset = 0;
  int rank = static_cast<int>(index.size());
  for (int axis = 0; axis < rank; ++axis) {
    const halide_dimension_t &dim = b->dim[rank - 1 - axis];
    offset += (index[axis] - dim.min) * int64_t(dim.stride);
  }
  return b->host + offset * b->type.bytes();
}

} // namespace

Tensor::Tensor(DT dtype, Shape shape)
    : dtype(dtype), shape(std::move(shape)),
      buffer(halideType(dtype), halideSizes(this->shape)) {
  // Fresh memory: zero it so a kernel that writes nothing is caught.
  std::memset(buffer.data(), 0, buffer.size_in_bytes());
}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double Tensor::get(const Index &index) const {
  const void *p = addressOf(buffer.raw_buffer(), index);
  switch (dtype) {
  case DT::F32:
    return *static_cast<const float *>(p);
  case DT::I32:
    return *static_cast<const int32_t *>(p);
  case DT::I64:
    return static_cast<double>(*static_cast<const int64_t *>(p));
  case DT::Bool:
    return *static_cast<const uint8_t *>(p);
  case DT::BF16:
    return rt::bf16ToF32(*static_cast<const uint16_t *>(p));
  }
  return 0;
}

void Tensor::set(const Index &index, double value) {
  void *p = addressOf(buffer.raw_buffer(), index);
  switch (dtype) {
  case DT::F32:
    *static_cast<float *>(p) = static_cast<float>(value);
    break;
  case DT::I32:
    *static_cast<int32_t *>(p) = static_cast<int32_t>(value);
    break;
  case DT::I64:
    *static_cast<int64_t *>(p) = static_cast<int64_t>(value);
    break;
  case DT::Bool:
    *static_cast<uint8_t *>(p) = value != 0;
    break;
  case DT::BF16:
    *static_cast<uint16_t *>(p) = rt::f32ToBf16(static_cast<float>(value));
    break;
  }
}

Tensor &Tensor::random(double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int64_t> whole(static_cast<int64_t>(lo),
                                               static_cast<int64_t>(hi));
  std::uniform_int_distribution<int> coin(0, 1);
  forEachIndex(shape, [&](const Index &i) {
    switch (dtype) {
    case DT::F32:
    case DT::BF16:
      set(i, real(rng));
      break;
    case DT::I32:
    case DT::I64:
      set(i, static_cast<double>(whole(rng)));
      break;
    case DT::Bool:
      set(i, coin(rng));
      break;
    }
  });
  return *this;
}

Tensor &Tensor::fill(const std::function<double(const Index &)> &fn) {
  forEachIndex(shape, [&](const Index &i) { set(i, fn(i)); });
  return *this;
}

void forEachIndex(const Shape &shape,
                  const std::function<void(const Index &)> &fn) {
  for (int64_t d : shape)
    if (d == 0)
      return;
  Index index(shape.size(), 0);
  while (true) {
    fn(index);
    int axis = static_cast<int>(shape.size()) - 1;
    while (axis >= 0 && ++index[axis] == shape[axis]) {
      index[axis] = 0;
      --axis;
    }
    if (axis < 0)
      return;
  }
}

mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    auto *c = new mlir::MLIRContext();
    c->loadDialect<mlir::tfc::TfcDialect, mlir::func::FuncDialect>();
    return c;
  }();
  return *ctx;
}

codegen::KernelCache &cache() {
  static codegen::KernelCache *c = new codegen::KernelCache();
  return *c;
}

codegen::KernelCache &noExternCache() {
  static codegen::KernelCache *c =
      new codegen::KernelCache(codegen::hostTarget(), codegen::KernelOptions());
  return *c;
}

ParsedOp parseOp(const std::string &ir, bool verify) {
  ParsedOp parsed;
  parsed.module = mlir::parseSourceString<mlir::ModuleOp>(
      ir, mlir::ParserConfig(&context(), verify));
  if (!parsed.module) {
    ADD_FAILURE() << "IR does not parse:\n" << ir;
    return parsed;
  }
  parsed.module->walk([&](mlir::Operation *op) {
    if (!parsed.op && op->getDialect() &&
        op->getDialect()->getNamespace() == "tfc")
      parsed.op = op;
  });
  if (!parsed.op)
    ADD_FAILURE() << "no tfc op in:\n" << ir;
  return parsed;
}

std::string singleOpFunc(const std::string &args, const std::string &opText,
                         const std::string &resultType) {
  return "func.func @f(" + args + ") -> " + resultType +
         " {\n  %r = " + opText + "\n  return %r : " + resultType + "\n}\n";
}

Tensor runOp(const std::string &ir, std::vector<Tensor> inputs, DT resultType,
             const Shape &resultShape, codegen::KernelCache *with,
             bool verify) {
  ParsedOp parsed = parseOp(ir, verify);
  if (!parsed.op)
    return Tensor();
  llvm::Expected<const codegen::CompiledKernel &> kernel =
      (with ? *with : cache()).getOrCompile(parsed.op);
  if (!kernel) {
    ADD_FAILURE() << llvm::toString(kernel.takeError()) << "\nIR:\n" << ir;
    return Tensor();
  }
  Tensor out(resultType, resultShape);
  std::vector<void *> args;
  for (Tensor &t : inputs)
    args.push_back(t.raw());
  args.push_back(out.raw());
  if (static_cast<int>(inputs.size()) != kernel->numInputs) {
    ADD_FAILURE() << "kernel takes " << kernel->numInputs << " inputs, got "
                  << inputs.size();
    return Tensor();
  }
  int rc = kernel->fn(args.data());
  if (rc != 0) {
    ADD_FAILURE() << "kernel " << kernel->name << " returned " << rc << ": "
                  << codegen::takeKernelRuntimeError() << "\nIR:\n"
                  << ir;
    return Tensor();
  }
  return out;
}

void expectClose(const Tensor &out,
                 const std::function<double(const Index &)> &ref, double rtol,
                 double atol) {
  int failures = 0;
  int64_t checked = 0;
  forEachIndex(out.shape, [&](const Index &i) {
    ++checked;
    double got = out.get(i), want = ref(i);
    bool ok = (std::isnan(got) && std::isnan(want)) ||
              std::abs(got - want) <= atol + rtol * std::abs(want);
    if (!ok && failures++ < 8) {
      std::string idx;
      for (int64_t v : i)
        idx += (idx.empty() ? "" : ",") + std::to_string(v);
      ADD_FAILURE() << "at [" << idx << "]: got " << got << ", want " << want;
    }
  });
  EXPECT_EQ(failures, 0) << failures << " of " << checked << " elements differ";
  EXPECT_EQ(checked, out.numElements());
}

} // namespace tfc::test
