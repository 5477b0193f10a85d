//===- Executor.cpp - Runs a Plan with compiled kernels -------------------===//
//
// A run has three phases, so that every check that can fail on user input
// happens before any kernel has run (and before anything large is
// allocated): (1) inputs are converted and checked against the entry's
// signature, binding the symbols; (2) the plan's index and dim checks run
// and every value's shape is evaluated; (3) the steps run in order, each
// temp allocated just before the step that writes it and freed after the
// step that `release`s it.
//
// Parameters and constants get halide_buffer_t structs that live as long as
// the executor: a GPU kernel records the device copy it makes of a weight in
// that struct, so the upload happens once, not once per run.
//
// Four things keep a run cheap (they change no result):
//  - The weight prologue: a step whose inputs are all parameters, constants
//    or results of such steps (GPT-2's `transpose(wte)` for the tied LM head,
//    a slice of a packed weight) computes the same tensor in every run. It
//    runs once, in create(), and its result is kept like a parameter; runs
//    skip it. Identical prologue computations of several entries (the same
//    kernel on the same weights) are computed and stored once.
//  - Temps are not zero-filled (every kernel writes each element of its
//    outputs) and come from a pool of blocks that outlives single runs, so a
//    run neither memsets nor page-faults fresh memory. A block goes back to
//    the pool when the last tensor using it (an output the caller keeps,
//    too) is gone.
//  - On the host, `tfc.reshape` steps are views: a row-major reshape of a
//    dense tensor has the same bytes, so the result shares the input's block.
//  - Little bookkeeping per step: weights, constants and precomputed values
//    are bound from a per-entry table made once (no lookups by name), the
//    shapes and the BoundBuffers of released values are reused across runs,
//    and block use counts are indexed by value id. After a kernel that
//    streamed megabytes of weights every such structure is a cache miss;
//    GPT-2 small decode spent ~0.44 ms per step outside its kernels with
//    maps and per-step allocations, ~0.30 ms this way.
//
//===----------------------------------------------------------------------===//

#include "runtime/Executor.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace tfc::rt {

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

halide_type_t halideTypeOf(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return halide_type_t(halide_type_float, 32);
  case DType::F64:
    return halide_type_t(halide_type_float, 64);
  case DType::F16:
    return halide_type_t(halide_type_float, 16);
  case DType::BF16:
    return halide_type_t(halide_type_bfloat, 16);
  case DType::I64:
    return halide_type_t(halide_type_int, 64);
  case DType::I32:
    return halide_type_t(halide_type_int, 32);
  case DType::I16:
    return halide_type_t(halide_type_int, 16);
  case DType::I8:
    return halide_type_t(halide_type_int, 8);
  case DType::U8:
  case DType::Bool:
    return halide_type_t(halide_type_uint, 8);
  }
  return halide_type_t(halide_type_uint, 8);
}

Status describeTensor(Tensor &tensor, halide_buffer_t &buffer,
                      halide_dimension_t *dims) {
  const size_t rank = tensor.rank();
  int64_t stride = 1;
  for (size_t i = 0; i < rank; ++i) {
    // Halide's dimension 0 is the innermost (last) axis.
    int64_t extent = tensor.dim(rank - 1 - i);
    if (extent > std::numeric_limits<int32_t>::max() ||
        stride > std::numeric_limits<int32_t>::max())
      return Status::error("tensor " + tensor.typeString() +
                           " is too large for a Halide buffer (extents and "
                           "strides must fit in 32 bits)");
    dims[i] = halide_dimension_t(0, static_cast<int32_t>(extent),
                                 static_cast<int32_t>(stride));
    stride *= extent > 0 ? extent : 1;
  }
  buffer = halide_buffer_t();
  buffer.device = 0;
  buffer.device_interface = nullptr;
  // Never null: Halide reads a buffer with neither host nor device memory
  // as a bounds query and would not compute anything. Owned tensors always
  // have a block, even when empty.
  buffer.host = static_cast<uint8_t *>(tensor.data());
  buffer.flags = 0;
  buffer.type = halideTypeOf(tensor.dtype());
  buffer.dimensions = static_cast<int32_t>(rank);
  buffer.dim = dims;
  buffer.padding = nullptr;
  return Status::success();
}

namespace {

/// A tensor with its halide_buffer_t, at a stable address.
struct BoundBuffer {
  Tensor tensor;
  std::vector<halide_dimension_t> dims;
  halide_buffer_t buffer;
  /// The buffer describes part of `tensor`, or its elements in another
  /// order (a window or a strided view): `tensor` only keeps them alive.
  bool view = false;

  Status bind(Tensor t) {
    tensor = std::move(t);
    view = false;
    dims.assign(tensor.rank(), halide_dimension_t());
    return describeTensor(tensor, buffer, dims.data());
  }

  /// A window of `base` (describeWindow); `tensor` keeps base alive.
  Status bindWindow(Tensor base, const std::vector<int64_t> &offsets,
                    const Shape &shape) {
    tensor = std::move(base);
    view = true;
    dims.assign(shape.size(), halide_dimension_t());
    return describeWindow(tensor, offsets, shape, buffer, dims.data());
  }

  /// `t`, allocated row-major in the order `layout` (PlanStep::layout:
  /// memory axis j is axis layout[j]), described with its axes in their
  /// own order.
  Status bindLaidOut(Tensor t, const std::vector<int32_t> &layout) {
    TFC_RT_RETURN_IF_ERROR(bind(std::move(t)));
    const size_t rank = layout.size();
    std::vector<halide_dimension_t> own(rank);
    // Halide dimension i is memory axis rank - 1 - i, which is axis
    // layout[rank - 1 - i].
    for (size_t i = 0; i < rank; ++i)
      own[rank - 1 - static_cast<size_t>(layout[rank - 1 - i])] = dims[i];
    dims = std::move(own);
    buffer.dim = dims.data();
    view = true;
    return Status::success();
  }

  /// `like` with these dimensions and host pointer; `keep` keeps the
  /// memory alive.
  void bindStrided(Tensor keep, const halide_buffer_t &like,
                   std::vector<halide_dimension_t> viewDims, uint8_t *host) {
    tensor = std::move(keep);
    view = true;
    dims = std::move(viewDims);
    buffer = like;
    buffer.host = host;
    buffer.dim = dims.data();
    buffer.dimensions = static_cast<int32_t>(dims.size());
  }
};

/// A new tensor of `dtype` and `shape` holding the elements `view` (a
/// host buffer of that shape, any strides) describes.
Expected<Tensor> denseCopy(const halide_buffer_t &view, DType dtype,
                           const Shape &shape) {
  Expected<Tensor> t = Tensor::allocate(dtype, shape);
  if (!t)
    return t.status();
  Tensor dense = t.take();
  std::vector<halide_dimension_t> dims(shape.size());
  halide_buffer_t buffer;
  TFC_RT_RETURN_IF_ERROR(describeTensor(dense, buffer, dims.data()));
  TFC_RT_RETURN_IF_ERROR(copyBuffer(view, buffer));
  return dense;
}

/// Whether a buffer of these dimensions holds its elements row-major
/// without gaps (axes of extent 1 may have any stride), so that another
/// shape of as many elements can read the same memory.
bool isDense(const halide_dimension_t *dims, int rank) {
  int64_t expected = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[i].extent == 0)
      return true;
    if (dims[i].extent > 1 && dims[i].stride != expected)
      return false;
    expected *= dims[i].extent;
  }
  return true;
}

bool isDense(const halide_buffer_t &b) { return isDense(b.dim, b.dimensions); }

/// The dimensions of `step`'s strided view of `in` (PlanStep::StridedView)
/// with result extents `shape`, and the element offset of its first
/// element; nullopt when the view would leave the input or make the
/// innermost axis strided (the step then runs its kernel).
std::optional<std::pair<std::vector<halide_dimension_t>, int64_t>>
stridedView(const PlanStep::StridedView &view, const halide_buffer_t &in,
            const Shape &shape) {
  const size_t rank = shape.size();
  if (static_cast<size_t>(in.dimensions) != rank || view.perm.size() != rank)
    return std::nullopt;
  // Halide dimension i is axis rank - 1 - i.
  auto dimOf = [&](int64_t axis) -> const halide_dimension_t & {
    return in.dim[rank - 1 - axis];
  };
  std::vector<halide_dimension_t> dims(rank);
  int64_t offset = 0;
  for (size_t i = 0; i < rank; ++i) {
    int32_t from = view.perm[i];
    const halide_dimension_t &src = dimOf(from);
    int64_t stride = src.stride, extent = shape[i];
    if (from == view.axis) {
      if (extent > 0 && view.start + (extent - 1) * view.step >= src.extent)
        return std::nullopt;
      offset += view.start * stride;
      stride *= view.step;
    } else if (extent != src.extent) {
      return std::nullopt;
    }
    if (stride > std::numeric_limits<int32_t>::max())
      return std::nullopt;
    dims[rank - 1 - i] = halide_dimension_t(0, static_cast<int32_t>(extent),
                                            static_cast<int32_t>(stride));
  }
  if (rank > 0 && dims[0].stride != 1)
    return std::nullopt;
  return std::make_pair(std::move(dims), offset);
}

/// Blocks for temps, reused across steps and runs. Shared (shared_ptr) by
/// the executor and by every tensor allocated from it, so a tensor may
/// outlive the executor. Free blocks are matched by exact size: the same
/// shapes recur in every layer and every run. Blocks of 2 MiB or more are
/// in transparent huge pages (allocateBlock), as the weights: a product
/// reads 8 rows of A at a time, each row of a 3072-wide A three 4 KiB pages
/// long (BERT-base b8 0.8 % faster; docs/benchmarks.md, "Session 25").
class BlockPool : public std::enable_shared_from_this<BlockPool> {
public:
  ~BlockPool() {
    for (auto &entry : freeBlocks)
      for (void *block : entry.second)
        std::free(block);
  }

  /// An uninitialized tensor of `dtype` and `shape` in a pooled block.
  Expected<Tensor> allocate(DType dtype, const Shape &shape) {
    Expected<size_t> aligned = Tensor::alignedBytesFor(dtype, shape);
    if (!aligned)
      return aligned.status();
    const size_t size = *aligned;
    void *block = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (std::vector<void *> *free = bucket(size); free && !free->empty()) {
        block = free->back();
        free->pop_back();
        freeBytes -= size;
      }
    }
    if (!block)
      block = allocateBlock(size);
    if (!block)
      return Status::error("out of memory allocating " +
                           std::to_string(size) + " bytes for " +
                           typeToString(dtype, shape));
    std::weak_ptr<BlockPool> pool = weak_from_this();
    std::shared_ptr<const void> owner(block, [pool, size](const void *p) {
      void *q = const_cast<void *>(p);
      if (std::shared_ptr<BlockPool> alive = pool.lock())
        alive->giveBack(q, size);
      else
        std::free(q);
    });
    return Tensor::borrow(dtype, shape, block, std::move(owner));
  }

private:
  void giveBack(void *block, size_t size) {
    std::lock_guard<std::mutex> lock(mutex);
    // Bounded, so that a run with unusual shapes cannot pin memory forever.
    if (freeBytes + size > kMaxFreeBytes) {
      std::free(block);
      return;
    }
    std::vector<void *> *free = bucket(size);
    if (!free) {
      // Empty buckets stay for the next run, up to kMaxBuckets sizes.
      if (freeBlocks.size() >= kMaxBuckets)
        freeBlocks.erase(std::remove_if(freeBlocks.begin(), freeBlocks.end(),
                                        [](const auto &entry) {
                                          return entry.second.empty();
                                        }),
                         freeBlocks.end());
      free = &freeBlocks.emplace_back(size, std::vector<void *>()).second;
    }
    free->push_back(block);
    freeBytes += size;
  }

  /// The free blocks of `size` bytes, or null. A run uses a handful of
  /// sizes, so a linear search over one contiguous vector touches fewer
  /// cache lines than a tree: a decode step allocates ~200 temps, each
  /// right after a kernel that streamed megabytes of weights through the
  /// caches.
  std::vector<void *> *bucket(size_t size) {
    for (auto &entry : freeBlocks)
      if (entry.first == size)
        return &entry.second;
    return nullptr;
  }

  static constexpr size_t kMaxFreeBytes = size_t(4) << 30;
  static constexpr size_t kMaxBuckets = 64;
  std::mutex mutex;
  std::vector<std::pair<size_t, std::vector<void *>>> freeBlocks;
  size_t freeBytes = 0;
};

/// Storage for the weight prologue's results. A weight (or earlier result)
/// that the prologue has read for the last time and no run reads gives its
/// block back here, and a later result of the same block size takes it
/// instead of a new one: GPT-2's panels are laid out in the blocks of the
/// layer before's weights. Fresh memory is zeroed by the kernel on first
/// touch, which on this project's VM cost more than the packing itself.
class PrologueBlocks {
public:
  /// Counts a result still to come (before the first take()).
  void expect(DType dtype, const Shape &shape) {
    if (Expected<size_t> size = Tensor::storageBytesFor(dtype, shape))
      ++demand[*size];
  }

  /// An uninitialized tensor in a kept block of its size, or a new one.
  Expected<Tensor> take(DType dtype, const Shape &shape) {
    Expected<size_t> size = Tensor::storageBytesFor(dtype, shape);
    if (!size)
      return size.status();
    if (demand[*size])
      --demand[*size];
    std::vector<Tensor> &free = kept[*size];
    if (free.empty())
      return Tensor::allocate(dtype, shape);
    Tensor block = std::move(free.back());
    free.pop_back();
    return Tensor::reuse(std::move(block), dtype, shape);
  }

  /// Keeps `t`'s block when a result still to come has its size and no
  /// other tensor shares it; otherwise `t` is dropped here (its block freed
  /// unless shared).
  void give(Tensor t) {
    if (!t.ownsData() || t.storageShared())
      return;
    std::vector<Tensor> &free = kept[t.storageBytes()];
    if (free.size() < demand[t.storageBytes()])
      free.push_back(std::move(t));
  }

private:
  /// By block size: results still to allocate, and the blocks kept.
  std::map<size_t, size_t> demand;
  std::map<size_t, std::vector<Tensor>> kept;
};

/// Whether a kernel only reinterprets its input (`tfc.reshape`), so that a
/// contiguous input can be passed through as a view.
bool isViewKernel(const PlanKernel &kernel) {
  return kernel.family == KernelFamily::View;
}

/// How errors name a step's kernel: "toy.tfm:9:7: entry 'forward': kernel
/// 'k1_mul' (signature)".
std::string stepKernelLabel(const PlanStep &step, const PlanEntry &entry,
                            const PlanKernel &kernel) {
  return (step.location.empty() ? "" : step.location + ": ") + "entry '" +
         entry.name + "': kernel '" + kernel.name + "' (" + kernel.signature +
         ")";
}

} // namespace

//===----------------------------------------------------------------------===//
// Executor state
//===----------------------------------------------------------------------===//

struct Executor::Impl {
  Plan plan;
  /// Null where ExecutorOptions::compileKernel compiles it when needed.
  std::vector<KernelFn> kernels;
  ExecutorOptions options;
  /// Kernel `index`, compiled now if it was left for later.
  Expected<KernelFn> kernel(size_t index) {
    if (kernels[index])
      return kernels[index];
    if (!options.compileKernel)
      return Status::error("was not compiled");
    Expected<KernelFn> fn = options.compileKernel(index);
    if (!fn)
      return fn.status().withContext("could not be compiled when needed");
    kernels[index] = *fn;
    return *fn;
  }
  /// By parameter name; unique_ptr keeps the structs' addresses stable.
  std::map<std::string, std::unique_ptr<BoundBuffer>> params;
  std::vector<std::unique_ptr<BoundBuffer>> constants;
  /// Results of prologue computations, by key (see prologueKey).
  std::map<std::string, std::unique_ptr<BoundBuffer>> precomputed;
  /// Per entry (in plan order), per value id: the key of its precomputed
  /// tensor, or empty; and per step: whether the prologue ran it.
  std::vector<std::vector<std::string>> precomputedKeys;
  std::vector<std::vector<bool>> skipStep;
  /// Per entry: whether all its kernels were given.
  std::vector<bool> runnable;
  std::shared_ptr<BlockPool> pool = std::make_shared<BlockPool>();
  RunStats stats;
  /// Per entry, after the prologue: each value bound to model memory (a
  /// parameter, constant or precomputed result) with its buffer, so that a
  /// run binds them without looking names up.
  std::vector<std::vector<std::pair<size_t, halide_buffer_t *>>> modelBuffers;
  /// Per entry: storage for the shapes of a run's values (evaluated again
  /// in every run; the vectors keep their capacity).
  std::vector<std::vector<Shape>> shapeStore;
  /// BoundBuffers that runs released, for later steps and runs to reuse.
  std::vector<std::unique_ptr<BoundBuffer>> spareBuffers;

  ~Impl() {
    if (!options.deviceFree)
      return;
    for (auto &entry : params)
      if (entry.second->buffer.device)
        options.deviceFree(nullptr, &entry.second->buffer);
    for (auto &c : constants)
      if (c->buffer.device)
        options.deviceFree(nullptr, &c->buffer);
    for (auto &entry : precomputed)
      if (entry.second->buffer.device)
        options.deviceFree(nullptr, &entry.second->buffer);
  }

  /// One computation of the weight prologue: step `step` of entry `entry`,
  /// named `key` (see planPrologue).
  struct PrologueCall {
    size_t entry, step;
    std::string key;
  };
  /// How value `id` of entry `e` is named among the model's values
  /// ("p:NAME", "c:INDEX", a precomputed key), or empty for a run's value.
  std::string modelKey(size_t e, int32_t id) const;
  /// The buffer of a model value: parameter `value`, a constant, or the
  /// precomputed result named `precomputedKey`; null for a run's value or
  /// one the prologue dropped.
  BoundBuffer *modelValue(const PlanValue &value,
                          const std::string &precomputedKey) const;
  std::vector<PrologueCall> planPrologue();
  std::set<std::string> keysRunsRead() const;
  Status runPrologueCall(const PrologueCall &call, PrologueBlocks &blocks);
  void release(const std::string &key, PrologueBlocks *blocks);
  Status runPrologue();
  void tabulateModelBuffers();
};

Executor::Executor(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Executor::Executor(Executor &&) noexcept = default;
Executor &Executor::operator=(Executor &&) noexcept = default;
Executor::~Executor() = default;

const Plan &Executor::plan() const { return impl->plan; }
const RunStats &Executor::lastRunStats() const { return impl->stats; }

/// Static shape of a Param/Constant value (verifyPlan guarantees it is one).
static Shape staticShape(const PlanValue &value) {
  Shape shape;
  for (const DimExpr &dim : value.shape)
    shape.push_back(dim.constant);
  return shape;
}

Expected<Executor> Executor::create(const Plan &plan,
                                    std::vector<KernelFn> kernels,
                                    WeightMap weights,
                                    ExecutorOptions options) {
  TFC_RT_RETURN_IF_ERROR(verifyPlan(plan));
  if (kernels.size() != plan.kernels.size())
    return Status::error("the plan has " + std::to_string(plan.kernels.size()) +
                         " kernels, but " + std::to_string(kernels.size()) +
                         " were given");
  auto impl = std::make_unique<Impl>();
  // An entry runs only if every kernel it calls is there (or, where views
  // of the entry stand for it, can be compiled when needed): a caller may
  // compile just the entries it needs.
  bool anyRunnable = plan.entries.empty();
  for (const PlanEntry &entry : plan.entries) {
    std::vector<bool> deferrable = options.compileKernel
                                       ? viewOnlyKernels(plan, {entry.name})
                                       : std::vector<bool>(kernels.size());
    bool runnable = true;
    auto present = [&](int32_t k) {
      return k >= 0 && static_cast<size_t>(k) < kernels.size() &&
             (kernels[static_cast<size_t>(k)] ||
              deferrable[static_cast<size_t>(k)]);
    };
    for (const PlanStep &step : entry.steps)
      runnable = runnable && (step.op != PlanStep::Op::Kernel ||
                              (present(step.kernel) &&
                               (step.variant.kernel < 0 ||
                                present(step.variant.kernel))));
    impl->runnable.push_back(runnable);
    anyRunnable = anyRunnable || runnable;
  }
  if (!anyRunnable)
    return Status::error("no entry of the model can run: kernels are null");
  impl->kernels = std::move(kernels);
  impl->options = options;

  // Every problem is listed at once, in the style of bindWeights.
  std::vector<std::string> problems;
  std::set<std::string> seen;
  for (const PlanEntry &entry : plan.entries) {
    for (const PlanValue &value : entry.values) {
      if (value.kind != PlanValue::Kind::Param ||
          !seen.insert(value.name).second)
        continue;
      Shape shape = staticShape(value);
      auto it = weights.find(value.name);
      if (it == weights.end() || it->second.isNull()) {
        problems.push_back("missing tensor '" + value.name + "' (expected " +
                           typeToString(value.dtype, shape) + ")");
        continue;
      }
      Tensor &t = it->second;
      if (t.dtype() != value.dtype) {
        problems.push_back("tensor '" + value.name + "': expected dtype " +
                           dtypeName(value.dtype) + ", found " +
                           dtypeName(t.dtype()));
        continue;
      }
      if (t.shape() != shape) {
        problems.push_back("tensor '" + value.name + "': expected shape " +
                           shapeToString(shape) + ", found " +
                           shapeToString(t.shape()));
        continue;
      }
      // Moved, not shared: the prologue frees (or reuses) the memory of a
      // weight that only it reads once it has read it.
      auto bound = std::make_unique<BoundBuffer>();
      Status s = bound->bind(std::move(t));
      if (!s.ok()) {
        problems.push_back("tensor '" + value.name + "': " + s.message());
        continue;
      }
      // Host memory is the only copy: a GPU kernel must upload it.
      bound->buffer.set_host_dirty(true);
      impl->params.emplace(value.name, std::move(bound));
    }
  }
  if (!problems.empty()) {
    const size_t kMaxProblems = 20;
    std::string msg = "the weights do not match the model (" +
                      std::to_string(problems.size()) + " problem" +
                      (problems.size() == 1 ? "" : "s") + "):";
    for (size_t i = 0; i < problems.size() && i < kMaxProblems; ++i)
      msg += "\n  " + problems[i];
    if (problems.size() > kMaxProblems)
      msg += "\n  ... and " + std::to_string(problems.size() - kMaxProblems) +
             " more";
    return Status::error(msg);
  }

  for (const Tensor &c : plan.constants) {
    auto bound = std::make_unique<BoundBuffer>();
    TFC_RT_RETURN_IF_ERROR(bound->bind(c).withContext("constant"));
    bound->buffer.set_host_dirty(true);
    impl->constants.push_back(std::move(bound));
  }
  impl->plan = plan;
  TFC_RT_RETURN_IF_ERROR(impl->runPrologue());
  impl->tabulateModelBuffers();
  return Executor(std::move(impl));
}

/// Fills modelBuffers and sizes shapeStore. Parameters and precomputed
/// results that the prologue dropped (no remaining step reads them) get no
/// entry.
void Executor::Impl::tabulateModelBuffers() {
  modelBuffers.assign(plan.entries.size(), {});
  shapeStore.assign(plan.entries.size(), {});
  for (size_t e = 0; e < plan.entries.size(); ++e) {
    const PlanEntry &entry = plan.entries[e];
    for (size_t id = 0; id < entry.values.size(); ++id) {
      if (BoundBuffer *bound =
              modelValue(entry.values[id], precomputedKeys[e][id]))
        modelBuffers[e].emplace_back(id, &bound->buffer);
    }
  }
}

BoundBuffer *
Executor::Impl::modelValue(const PlanValue &value,
                           const std::string &precomputedKey) const {
  if (value.kind == PlanValue::Kind::Param) {
    auto it = params.find(value.name);
    return it == params.end() ? nullptr : it->second.get();
  }
  if (value.kind == PlanValue::Kind::Constant)
    return constants[static_cast<size_t>(value.index)].get();
  if (precomputedKey.empty())
    return nullptr;
  auto it = precomputed.find(precomputedKey);
  return it == precomputed.end() ? nullptr : it->second.get();
}

std::string Executor::Impl::modelKey(size_t e, int32_t id) const {
  const PlanValue &v = plan.entries[e].values[static_cast<size_t>(id)];
  if (v.kind == PlanValue::Kind::Param)
    return "p:" + v.name;
  if (v.kind == PlanValue::Kind::Constant)
    return "c:" + std::to_string(v.index);
  return precomputedKeys[e][static_cast<size_t>(id)];
}

/// Finds, per entry, the steps that read only weights (parameters,
/// constants, results of such steps) and have static output shapes, and
/// lists each distinct one once, in order. A computation is named by its
/// kernel and the names of its inputs, so that the same kernel on the same
/// weights in several entries is computed once. Fills precomputedKeys and
/// skipStep.
std::vector<Executor::Impl::PrologueCall> Executor::Impl::planPrologue() {
  precomputedKeys.assign(plan.entries.size(), {});
  skipStep.assign(plan.entries.size(), {});
  std::vector<PrologueCall> calls;
  std::set<std::string> planned;
  for (size_t e = 0; e < plan.entries.size(); ++e) {
    const PlanEntry &entry = plan.entries[e];
    precomputedKeys[e].assign(entry.values.size(), std::string());
    skipStep[e].assign(entry.steps.size(), false);
    if (!runnable[e])
      continue;
    for (size_t si = 0; si < entry.steps.size(); ++si) {
      const PlanStep &step = entry.steps[si];
      // A step with a size variant picks its kernel from run-time shapes.
      bool hoist = !step.outputs.empty() && step.variant.kernel < 0;
      std::string key = "k" + std::to_string(step.kernel) + "(";
      for (int32_t in : step.inputs) {
        std::string k = modelKey(e, in);
        hoist = hoist && !k.empty();
        key += k + ",";
      }
      for (int32_t out : step.outputs)
        for (const DimExpr &d : entry.values[static_cast<size_t>(out)].shape)
          hoist = hoist && d.isStatic();
      if (!hoist)
        continue;
      key += ")";
      if (planned.insert(key).second)
        calls.push_back({e, si, key});
      for (size_t o = 0; o < step.outputs.size(); ++o)
        precomputedKeys[e][static_cast<size_t>(step.outputs[o])] =
            key + "#" + std::to_string(o);
      skipStep[e][si] = true;
    }
  }
  return calls;
}

/// The model values (modelKey) that runs read: inputs of steps the
/// prologue does not compute, and entry outputs.
std::set<std::string> Executor::Impl::keysRunsRead() const {
  std::set<std::string> keys;
  for (size_t e = 0; e < plan.entries.size(); ++e) {
    const PlanEntry &entry = plan.entries[e];
    if (!runnable[e])
      continue;
    for (size_t si = 0; si < entry.steps.size(); ++si)
      if (!skipStep[e][si])
        for (int32_t in : entry.steps[si].inputs)
          keys.insert(modelKey(e, in));
    for (int32_t out : entry.outputs)
      keys.insert(modelKey(e, out));
  }
  keys.erase(std::string());
  return keys;
}

/// Runs one prologue computation, its results in `blocks`' storage.
Status Executor::Impl::runPrologueCall(const PrologueCall &call,
                                       PrologueBlocks &blocks) {
  const PlanEntry &entry = plan.entries[call.entry];
  const PlanStep &step = entry.steps[call.step];
  std::vector<void *> args;
  // planPrologue only lists steps whose inputs are all model values.
  for (int32_t in : step.inputs)
    args.push_back(&modelValue(entry.values[static_cast<size_t>(in)],
                               modelKey(call.entry, in))
                        ->buffer);
  std::vector<std::unique_ptr<BoundBuffer>> outs;
  for (int32_t out : step.outputs) {
    const PlanValue &v = entry.values[static_cast<size_t>(out)];
    Expected<Tensor> t = blocks.take(v.dtype, staticShape(v));
    if (!t)
      return t.status().withContext("precomputing step " +
                                    std::to_string(call.step) + " of entry '" +
                                    entry.name + "'");
    auto bound = std::make_unique<BoundBuffer>();
    TFC_RT_RETURN_IF_ERROR(bound->bind(t.take()));
    args.push_back(&bound->buffer);
    outs.push_back(std::move(bound));
  }
  const PlanKernel &kernel = plan.kernels[static_cast<size_t>(step.kernel)];
  Expected<KernelFn> fn = this->kernel(static_cast<size_t>(step.kernel));
  if (!fn)
    return fn.status().withContext(stepKernelLabel(step, entry, kernel));
  int rc = (*fn)(args.data());
  if (rc != 0) {
    std::string why = options.kernelErrorMessage ? options.kernelErrorMessage()
                                                 : std::string();
    return Status::error(stepKernelLabel(step, entry, kernel) +
                         ", run once on the weights, failed with error code " +
                         std::to_string(rc) + (why.empty() ? "" : ": " + why));
  }
  for (size_t o = 0; o < outs.size(); ++o)
    precomputed.emplace(call.key + "#" + std::to_string(o), std::move(outs[o]));
  return Status::success();
}

/// Drops the parameter or precomputed result named `key` (modelKey), giving
/// its block to `blocks` when there are any. Constants belong to the plan.
void Executor::Impl::release(const std::string &key, PrologueBlocks *blocks) {
  bool isParam = key.compare(0, 2, "p:") == 0;
  auto &table = isParam ? params : precomputed;
  auto it = table.find(isParam ? key.substr(2) : key);
  if (it == table.end())
    return;
  BoundBuffer &b = *it->second;
  if (b.buffer.device && options.deviceFree)
    options.deviceFree(nullptr, &b.buffer);
  if (blocks)
    blocks->give(std::move(b.tensor));
  table.erase(it);
}

/// Runs the prologue's computations once and keeps their results like
/// parameters. A value that no run reads (an [in, out] weight whose panels
/// the kernels read instead, a concatenation that only fed a prologue
/// transpose, a weight no runnable entry uses) is dropped right after the
/// last computation that reads it, so that at most a few originals are
/// resident beside their panels; its memory is freed, or reused by later
/// results, unless the caller holds the tensor too.
Status Executor::Impl::runPrologue() {
  std::vector<PrologueCall> calls = planPrologue();
  std::set<std::string> runsRead = keysRunsRead();
  std::map<std::string, size_t> lastRead;
  PrologueBlocks blocks;
  for (size_t i = 0; i < calls.size(); ++i) {
    const PlanEntry &entry = plan.entries[calls[i].entry];
    const PlanStep &step = entry.steps[calls[i].step];
    for (int32_t in : step.inputs)
      lastRead[modelKey(calls[i].entry, in)] = i;
    for (int32_t out : step.outputs) {
      const PlanValue &v = entry.values[static_cast<size_t>(out)];
      blocks.expect(v.dtype, staticShape(v));
    }
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    TFC_RT_RETURN_IF_ERROR(runPrologueCall(calls[i], blocks));
    const PlanStep &step = plan.entries[calls[i].entry].steps[calls[i].step];
    for (int32_t in : step.inputs) {
      std::string key = modelKey(calls[i].entry, in);
      if (lastRead[key] == i && !runsRead.count(key))
        release(key, &blocks);
    }
  }
  std::vector<std::string> unread;
  for (const auto &p : params)
    if (!runsRead.count("p:" + p.first))
      unread.push_back("p:" + p.first);
  for (const auto &p : precomputed)
    if (!runsRead.count(p.first))
      unread.push_back(p.first);
  for (const std::string &key : unread)
    release(key, nullptr);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Input checks
//===----------------------------------------------------------------------===//

/// "[0, 3]": the coordinates of row-major element `flat` of `shape`.
static std::string coordinates(const Shape &shape, int64_t flat) {
  Shape index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    int64_t d = shape[i] > 0 ? shape[i] : 1;
    index[i] = flat % d;
    flat /= d;
  }
  return shapeToString(index);
}

/// Reads element `i` of an integer or bool tensor as int64.
static int64_t readInteger(const Tensor &t, int64_t i) {
  const uint8_t *p = static_cast<const uint8_t *>(t.data());
  switch (t.dtype()) {
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, p + i * 8, 8);
    return v;
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, p + i * 4, 4);
    return v;
  }
  case DType::I16: {
    int16_t v;
    std::memcpy(&v, p + i * 2, 2);
    return v;
  }
  case DType::I8:
    return static_cast<int8_t>(p[i]);
  case DType::U8:
  case DType::Bool:
    return p[i];
  default:
    return 0;
  }
}

/// "needs seq >= 1, got 0". An upper bound is encoded as `limit - x >= 0`
/// (all coefficients negative) and printed the way round a reader expects:
/// "needs seq + past <= 64, got 65".
static std::string describeDimCheck(const DimCheck &check,
                                    const std::vector<SymbolSource> &names,
                                    const std::vector<int64_t> &symbols) {
  bool upperBound = !check.dim.terms.empty();
  for (const auto &term : check.dim.terms)
    upperBound &= term.second < 0;
  if (!upperBound)
    return "needs " + dimToString(check.dim, names) +
           " >= " + std::to_string(check.min) + ", got " +
           std::to_string(evaluate(check.dim, symbols));
  DimExpr x;
  for (const auto &term : check.dim.terms)
    x.terms.emplace_back(term.first, -term.second);
  return "needs " + dimToString(x, names) +
         " <= " + std::to_string(check.dim.constant - check.min) + ", got " +
         std::to_string(evaluate(x, symbols));
}

namespace {

/// Checks and converts the inputs of one run, binding the entry's symbols.
class InputChecker {
public:
  InputChecker(const PlanEntry &entry) : entry(entry) {}

  /// On success, `converted` holds the inputs in the entry's dtypes and
  /// `symbols` the symbol values.
  Status check(const std::vector<Tensor> &inputs) {
    if (inputs.size() != entry.inputs.size()) {
      std::string names;
      for (const std::string &n : entry.inputNames)
        names += (names.empty() ? "" : ", ") + n;
      return Status::error("takes " + std::to_string(entry.inputs.size()) +
                           " input" + (entry.inputs.size() == 1 ? "" : "s") +
                           " (" + names + "), but " +
                           std::to_string(inputs.size()) + " were given");
    }
    converted.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      TFC_RT_RETURN_IF_ERROR(convert(i, inputs[i]));
    TFC_RT_RETURN_IF_ERROR(bindSymbols());
    for (size_t i = 0; i < inputs.size(); ++i)
      TFC_RT_RETURN_IF_ERROR(checkSymbolicDims(i));
    return Status::success();
  }

  std::vector<Tensor> converted;
  std::vector<int64_t> symbols;

private:
  const PlanEntry &entry;

  const PlanValue &valueOf(size_t input) const {
    return entry.values[static_cast<size_t>(entry.inputs[input])];
  }
  const std::string &nameOf(size_t input) const {
    return entry.inputNames[input];
  }

  Status mismatch(size_t input, const Tensor &given) const {
    return Status::error("input '" + nameOf(input) + "': expected " +
                         valueTypeToString(valueOf(input), entry.symbols) +
                         ", found " + given.typeString());
  }

  /// Dtype conversion, rank and static dims.
  Status convert(size_t input, const Tensor &given) {
    const PlanValue &value = valueOf(input);
    if (given.isNull())
      return Status::error("input '" + nameOf(input) + "': expected " +
                           valueTypeToString(value, entry.symbols) +
                           ", found a null tensor");
    if (given.rank() != value.shape.size())
      return mismatch(input, given);
    for (size_t d = 0; d < value.shape.size(); ++d)
      if (value.shape[d].isStatic() && value.shape[d].constant != given.dim(d))
        return mismatch(input, given);

    const DType want = value.dtype;
    const DType have = given.dtype();
    Tensor &out = converted[input];
    if (want == DType::F32 && isFloatingPoint(have)) {
      Expected<Tensor> f = given.toF32();
      if (!f)
        return f.status().withContext("input '" + nameOf(input) + "'");
      out = f.take();
      return Status::success();
    }
    if (have == want && want != DType::Bool) {
      out = given;
      return Status::success();
    }

    bool integerSource = have == DType::I64 || have == DType::I32 ||
                         have == DType::U8 || have == DType::Bool;
    if (!integerSource ||
        (want != DType::I32 && want != DType::I64 && want != DType::Bool))
      return mismatch(input, given);
    // Bool wants 0/1; i32 wants values that fit. Checked element by element
    // so that the message can say which one is wrong.
    int64_t lo = want == DType::Bool ? 0 : std::numeric_limits<int32_t>::min();
    int64_t hi = want == DType::Bool ? 1 : std::numeric_limits<int32_t>::max();
    if (want == DType::I64) {
      lo = std::numeric_limits<int64_t>::min();
      hi = std::numeric_limits<int64_t>::max();
    }
    Expected<Tensor> t = Tensor::zeros(want, given.shape());
    if (!t)
      return t.status().withContext("input '" + nameOf(input) + "'");
    uint8_t *dst = static_cast<uint8_t *>(t->data());
    const size_t size = dtypeSize(want);
    for (int64_t i = 0; i < given.numElements(); ++i) {
      int64_t v = readInteger(given, i);
      if (v < lo || v > hi)
        return Status::error(
            "input '" + nameOf(input) + "': value " + std::to_string(v) +
            " at " + coordinates(given.shape(), i) +
            (want == DType::Bool
                 ? " is not 0 or 1 (the input is bool)"
                 : " does not fit in " + std::string(dtypeName(want))));
      if (want == DType::Bool) {
        dst[i] = static_cast<uint8_t>(v);
      } else if (want == DType::I32) {
        int32_t narrow = static_cast<int32_t>(v);
        std::memcpy(dst + i * size, &narrow, size);
      } else {
        std::memcpy(dst + i * size, &v, size);
      }
    }
    out = t.take();
    return Status::success();
  }

  Status bindSymbols() {
    symbols.assign(entry.symbols.size(), 0);
    for (size_t s = 0; s < entry.symbols.size(); ++s) {
      const SymbolSource &src = entry.symbols[s];
      int64_t v = converted[static_cast<size_t>(src.input)].dim(
          static_cast<size_t>(src.axis));
      if (src.bound > 0 && v > src.bound)
        return Status::error(
            "input '" + nameOf(static_cast<size_t>(src.input)) +
            "': " + src.name + " = " + std::to_string(v) + " (axis " +
            std::to_string(src.axis) + ") exceeds its bound " +
            std::to_string(src.bound) + " (dim " + src.name +
            " <= " + std::to_string(src.bound) + ")");
      symbols[s] = v;
    }
    return Status::success();
  }

  /// Every dim of every input must agree with the bound symbols (batch of
  /// `mask` equals batch of `ids`).
  Status checkSymbolicDims(size_t input) {
    const PlanValue &value = valueOf(input);
    const Tensor &t = converted[input];
    for (size_t d = 0; d < value.shape.size(); ++d) {
      const DimExpr &dim = value.shape[d];
      if (dim.isStatic())
        continue;
      int64_t want = evaluate(dim, symbols);
      if (want == t.dim(d))
        continue;
      std::string what = dimToString(dim, entry.symbols);
      std::string source;
      if (dim.terms.size() == 1 && dim.constant == 0 &&
          dim.terms[0].second == 1) {
        const SymbolSource &src =
            entry.symbols[static_cast<size_t>(dim.terms[0].first)];
        source = " in input '" + nameOf(static_cast<size_t>(src.input)) +
                 "' (axis " + std::to_string(src.axis) + ")";
      }
      return Status::error("input '" + nameOf(input) + "': " + what + " is " +
                           std::to_string(t.dim(d)) + " here (axis " +
                           std::to_string(d) + "), but " +
                           std::to_string(want) + source + "; expected " +
                           valueTypeToString(value, entry.symbols) +
                           ", found " + t.typeString());
    }
    return Status::success();
  }
};

/// Per-run buffers. Frees any device memory that kernels left in them when
/// the run ends, successfully or not.
struct RunState {
  std::vector<std::unique_ptr<BoundBuffer>> owned; // inputs and temps
  std::vector<halide_buffer_t *> buffers;          // by value id
  const ExecutorOptions &options;
  /// Released BoundBuffers (their tensors reset), reused by take().
  std::vector<std::unique_ptr<BoundBuffer>> &spare;

  RunState(size_t numValues, const ExecutorOptions &options,
           std::vector<std::unique_ptr<BoundBuffer>> &spare)
      : owned(numValues), buffers(numValues, nullptr), options(options),
        spare(spare) {}

  /// A BoundBuffer to bind: a released one when there is one.
  std::unique_ptr<BoundBuffer> take() {
    if (spare.empty())
      return std::make_unique<BoundBuffer>();
    std::unique_ptr<BoundBuffer> b = std::move(spare.back());
    spare.pop_back();
    return b;
  }

  void release(size_t id) {
    if (owned[id]) {
      if (owned[id]->buffer.device && options.deviceFree)
        options.deviceFree(nullptr, &owned[id]->buffer);
      owned[id]->tensor = Tensor(); // gives its block back
      owned[id]->buffer = halide_buffer_t();
      spare.push_back(std::move(owned[id]));
    }
    buffers[id] = nullptr;
  }

  ~RunState() {
    for (size_t id = 0; id < owned.size(); ++id)
      release(id);
  }
};

} // namespace

/// An entry whose every input is empty (ids of shape [1, 0]) has nothing
/// to compute: refused, naming the first empty axis, rather than failing in
/// a kernel with an error code. An empty input next to others is fine (an
/// empty KV cache, past = 0), and the plan's dim checks come first.
static Status checkNotAllEmpty(const PlanEntry &entry,
                               const InputChecker &checker) {
  if (checker.converted.empty())
    return Status::success();
  for (const Tensor &t : checker.converted)
    if (t.numElements() != 0)
      return Status::success();
  const Tensor &first = checker.converted.front();
  size_t axis = 0;
  while (axis + 1 < first.rank() && first.dim(axis) != 0)
    ++axis;
  std::string symbol;
  for (const SymbolSource &src : entry.symbols)
    if (src.input == 0 && static_cast<size_t>(src.axis) == axis)
      symbol = src.name + " = 0, ";
  return Status::error("entry '" + entry.name + "': input '" +
                       entry.inputNames.front() + "' is empty (" + symbol +
                       "axis " + std::to_string(axis) +
                       "), and so is every other input: there is nothing to "
                       "compute");
}

/// Everything run() checks before the first kernel: the inputs (count,
/// dtypes, shapes, symbols) through `checker`, ids against their tables and
/// the plan's dim checks.
static Status checkEntryInputs(const PlanEntry &entry,
                               const std::vector<Tensor> &inputs,
                               InputChecker &checker) {
  auto fail = [&](const std::string &msg) {
    return Status::error("entry '" + entry.name + "': " + msg);
  };
  TFC_RT_RETURN_IF_ERROR(
      checker.check(inputs).withContext("entry '" + entry.name + "'"));
  for (const IndexCheck &c : entry.indexChecks) {
    const PlanValue &value = entry.values[static_cast<size_t>(c.value)];
    const Tensor &t = checker.converted[static_cast<size_t>(value.index)];
    for (int64_t i = 0; i < t.numElements(); ++i) {
      int64_t id = readInteger(t, i);
      if (id < 0 || id >= c.limit)
        return fail("token id " + std::to_string(id) + " at " +
                    coordinates(t.shape(), i) + " of input '" +
                    entry.inputNames[static_cast<size_t>(value.index)] +
                    "' is outside [0, " + std::to_string(c.limit) + ")" +
                    (c.what.empty() ? "" : " (" + c.what + ")"));
    }
  }
  for (const DimCheck &c : entry.dimChecks)
    if (evaluate(c.dim, checker.symbols) < c.min)
      return fail((c.what.empty() ? "" : c.what + ": ") +
                  describeDimCheck(c, entry.symbols, checker.symbols));
  return checkNotAllEmpty(entry, checker);
}

Status checkInputs(const PlanEntry &entry, const std::vector<Tensor> &inputs) {
  InputChecker checker(entry);
  return checkEntryInputs(entry, inputs, checker);
}

//===----------------------------------------------------------------------===//
// Key/value caches grown in place (KvCache.h)
//===----------------------------------------------------------------------===//

/// `inputs` with each cache input replaced by a tensor shaped like the
/// filled prefix of its buffer, for the input checks (which read shapes
/// only; the kernels get a strided window of the buffer).
static Expected<std::vector<Tensor>>
withCacheShapes(const PlanEntry &entry, std::vector<Tensor> inputs,
                const KvCache &cache) {
  if (cache.buffers.size() != entry.caches.size())
    return Status::error("the KV cache has " +
                         std::to_string(cache.buffers.size()) +
                         " buffers, the entry grows " +
                         std::to_string(entry.caches.size()));
  if (cache.length < 0 || cache.length > cache.capacity)
    return Status::error("the KV cache holds " + std::to_string(cache.length) +
                         " positions but has room for " +
                         std::to_string(cache.capacity));
  if (inputs.size() != entry.inputs.size())
    return inputs; // The input checks say what is wrong.
  for (size_t c = 0; c < entry.caches.size(); ++c) {
    const PlanCache &info = entry.caches[c];
    const Tensor &buffer = cache.buffers[c];
    const size_t axis = static_cast<size_t>(info.axis);
    if (buffer.isNull() || buffer.rank() <= axis ||
        buffer.dim(axis) != cache.capacity)
      return Status::error(
          "KV cache buffer " + std::to_string(c) + " (" +
          (buffer.isNull() ? "null" : buffer.typeString()) +
          ") does not have the capacity " + std::to_string(cache.capacity) +
          " on axis " + std::to_string(axis));
    Shape shape = buffer.shape();
    shape[axis] = cache.length;
    auto keep = std::make_shared<Tensor>(buffer);
    Expected<Tensor> prefix =
        Tensor::borrow(buffer.dtype(), shape, keep->data(), keep);
    if (!prefix)
      return prefix.status();
    inputs[static_cast<size_t>(info.input)] = prefix.take();
  }
  return inputs;
}

/// Fails unless every cache output of this run fits in `cache`.
static Status checkCapacity(const PlanEntry &entry,
                            const std::vector<Shape> &shapes,
                            const KvCache &cache) {
  for (const PlanCache &info : entry.caches) {
    size_t out = static_cast<size_t>(
        entry.outputs[static_cast<size_t>(info.output)]);
    int64_t needed = shapes[out][static_cast<size_t>(info.axis)];
    if (needed > cache.capacity)
      return Status::error(
          "output '" + entry.outputNames[static_cast<size_t>(info.output)] +
          "' needs " + std::to_string(needed) +
          " positions, but the KV cache has room for " +
          std::to_string(cache.capacity));
  }
  return Status::success();
}

/// A cache of exactly the grown length holding copies of the given cache
/// inputs: run() without a KvCache.
static Expected<KvCache> copyIntoCache(const PlanEntry &entry,
                                       const std::vector<Tensor> &inputs,
                                       const std::vector<Shape> &shapes) {
  std::vector<Tensor> past;
  for (const PlanCache &info : entry.caches)
    past.push_back(inputs[static_cast<size_t>(info.input)]);
  const PlanCache &first = entry.caches.front();
  int64_t grown = shapes[static_cast<size_t>(
      entry.outputs[static_cast<size_t>(first.output)])]
                        [static_cast<size_t>(first.axis)];
  return createKvCache(entry, past, grown);
}

/// A CacheAppend step writes its new positions into layer `step.layer` of
/// the cache's buffer after the `length` filled ones; its output is that
/// layer's window [0, length + new). A CacheStack step's output is the
/// whole grown cache. Neither copies the cache.
static Status runCacheStep(const PlanEntry &entry, const PlanStep &step,
                           KvCache &cache, const std::vector<Shape> &shapes,
                           RunState &state) {
  const PlanCache &info = entry.caches[static_cast<size_t>(step.cache)];
  Tensor &buffer = cache.buffers[static_cast<size_t>(step.cache)];
  std::vector<int64_t> offsets(buffer.rank(), 0);
  if (step.op == PlanStep::Op::CacheAppend) {
    size_t fresh = static_cast<size_t>(step.inputs[1]);
    halide_buffer_t *source = state.buffers[fresh];
    if (source->device_dirty()) {
      if (!state.options.copyToHost ||
          state.options.copyToHost(nullptr, source) != 0)
        return Status::error("could not copy the new positions to the host");
    }
    offsets[0] = step.layer;
    offsets[static_cast<size_t>(info.axis)] = cache.length;
    BoundBuffer window;
    TFC_RT_RETURN_IF_ERROR(
        window.bindWindow(buffer, offsets, shapes[fresh]));
    TFC_RT_RETURN_IF_ERROR(copyBuffer(*source, window.buffer));
    offsets[static_cast<size_t>(info.axis)] = 0;
  }
  size_t out = static_cast<size_t>(step.outputs[0]);
  std::unique_ptr<BoundBuffer> bound = state.take();
  TFC_RT_RETURN_IF_ERROR(bound->bindWindow(buffer, offsets, shapes[out]));
  bound->buffer.set_host_dirty(true);
  state.buffers[out] = &bound->buffer;
  state.owned[out] = std::move(bound);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

Expected<std::vector<Tensor>> Executor::run(const std::string &entryName,
                                            const std::vector<Tensor> &inputs) {
  return runEntry(entryName, inputs, nullptr);
}

Expected<std::vector<Tensor>> Executor::run(const std::string &entryName,
                                            const std::vector<Tensor> &inputs,
                                            KvCache &cache) {
  return runEntry(entryName, inputs, &cache);
}

/// One run of one entry: its shapes, the buffers bound to its values and
/// the accounting of temp memory. runEntry calls the phases in order.
struct Executor::Run {
  Impl &impl;
  const PlanEntry &entry;
  const std::vector<std::string> &precomputedKeys;
  const std::vector<bool> &skipStep;
  KvCache *cache;
  /// Without a caller's KvCache, the cache inputs are copied once into this
  /// one, of exactly the grown length, which the cache outputs then are.
  KvCache ownCache;
  bool ownsCache = false;
  /// The inputs in the entry's dtypes.
  std::vector<Tensor> converted;
  /// Every value's shape (storage kept by the executor across runs).
  std::vector<Shape> &shapes;
  const std::vector<std::pair<size_t, halide_buffer_t *>> &modelBuffers;
  RunState state;
  /// Temp memory is counted per block: a view shares its input's block.
  /// The value whose step allocated the block a value lives in (-1: none),
  /// and, for such a value, how many live values use its block.
  std::vector<int32_t> blockOwner;
  std::vector<int32_t> blockUsers;
  /// Whether a value is (a view of) an input or model memory: returned as
  /// a copy.
  std::vector<bool> modelMemory;
  size_t liveTempBytes = 0;
  std::vector<void *> args;

  Run(Impl &impl, const PlanEntry &entry, size_t entryIndex, KvCache *cache)
      : impl(impl), entry(entry),
        precomputedKeys(impl.precomputedKeys[entryIndex]),
        skipStep(impl.skipStep[entryIndex]), cache(cache),
        shapes(impl.shapeStore[entryIndex]),
        modelBuffers(impl.modelBuffers[entryIndex]),
        state(entry.values.size(), impl.options, impl.spareBuffers),
        blockOwner(entry.values.size(), -1),
        blockUsers(entry.values.size(), 0),
        modelMemory(entry.values.size(), false) {}

  Status fail(const std::string &msg) const {
    return Status::error("entry '" + entry.name + "': " + msg);
  }

  Status checkInputsAndShapes(const std::vector<Tensor> &inputs);
  Status prepareCache();
  Status bindInputs();
  void bindModelValues();
  Status runStep(size_t stepIndex);
  bool bindView(const PlanStep &step, Status &status);
  bool bindStridedView(const PlanStep &step);
  const Tensor *memoryOf(size_t in) const;
  void bindAsViewOf(size_t in, size_t id, std::unique_ptr<BoundBuffer> bound);
  bool hostViewable(size_t in) const;
  Status allocateOutputs(const PlanStep &step);
  void releaseAfter(const PlanStep &step);
  Expected<std::vector<Tensor>> collectOutputs();
};

/// (1) Inputs, (2) index and dim checks, then every value's shape. A
/// KvCache gives the cache inputs (their shapes here, their bytes later).
Status Executor::Run::checkInputsAndShapes(const std::vector<Tensor> &inputs) {
  std::vector<Tensor> cacheShaped;
  if (cache && !entry.caches.empty()) {
    Expected<std::vector<Tensor>> shaped =
        withCacheShapes(entry, inputs, *cache);
    if (!shaped)
      return fail(shaped.message());
    cacheShaped = shaped.take();
  }
  InputChecker checker(entry);
  TFC_RT_RETURN_IF_ERROR(checkEntryInputs(
      entry, cacheShaped.empty() ? inputs : cacheShaped, checker));
  converted = std::move(checker.converted);
  shapes.resize(entry.values.size());
  for (size_t id = 0; id < entry.values.size(); ++id) {
    const PlanValue &value = entry.values[id];
    shapes[id].clear();
    for (const DimExpr &dim : value.shape) {
      int64_t d = evaluate(dim, checker.symbols);
      // Inputs satisfy their own shapes; a negative size further on means
      // a symbol combination the model cannot handle (e.g. K - Q < 0).
      if (d < 0)
        return fail("value " + std::to_string(id) + " of type " +
                    valueTypeToString(value, entry.symbols) +
                    " gets a negative size " + std::to_string(d) +
                    " for these inputs");
      shapes[id].push_back(d);
    }
  }
  return Status::success();
}

Status Executor::Run::prepareCache() {
  if (entry.caches.empty())
    return Status::success();
  ownsCache = !cache;
  if (ownsCache) {
    Expected<KvCache> made = copyIntoCache(entry, converted, shapes);
    if (!made)
      return made.status();
    ownCache = made.take();
    cache = &ownCache;
  }
  if (Status s = checkCapacity(entry, shapes, *cache); !s.ok())
    return fail(s.message());
  return Status::success();
}

/// (3) The inputs: their own tensors, or windows of the cache.
Status Executor::Run::bindInputs() {
  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    size_t id = static_cast<size_t>(entry.inputs[i]);
    std::unique_ptr<BoundBuffer> bound = state.take();
    int c = entry.cacheOfInput(static_cast<int>(i));
    Status s =
        c < 0 ? bound->bind(converted[i])
              : bound->bindWindow(cache->buffers[static_cast<size_t>(c)],
                                  std::vector<int64_t>(shapes[id].size(), 0),
                                  shapes[id]);
    TFC_RT_RETURN_IF_ERROR(s.withContext("entry '" + entry.name + "': input '" +
                                         entry.inputNames[i] + "'"));
    bound->buffer.set_host_dirty(true);
    state.buffers[id] = &bound->buffer;
    state.owned[id] = std::move(bound);
  }
  return Status::success();
}

/// Weights, constants and the prologue's results. Those that only the
/// prologue read are gone (runPrologue); no step that runs reads them.
void Executor::Run::bindModelValues() {
  for (const auto &[id, buffer] : modelBuffers)
    state.buffers[id] = buffer;
}

void Executor::Run::releaseAfter(const PlanStep &step) {
  for (int32_t r : step.release) {
    size_t id = static_cast<size_t>(r);
    if (int32_t owner = blockOwner[id]; owner >= 0) {
      if (--blockUsers[static_cast<size_t>(owner)] == 0)
        liveTempBytes -= state.owned[id]->tensor.byteSize();
      blockOwner[id] = -1;
    }
    state.release(id);
  }
}

/// The tensor that keeps value `in`'s memory alive (its own, or the
/// stored weight, constant or precomputed result), or null.
const Tensor *Executor::Run::memoryOf(size_t in) const {
  if (state.owned[in])
    return &state.owned[in]->tensor;
  BoundBuffer *stored = impl.modelValue(entry.values[in], precomputedKeys[in]);
  return stored ? &stored->tensor : nullptr;
}

/// Binds `bound` as value `id`, a view of value `in`'s memory: it counts
/// with in's block, and a view of an input or a weight must be copied if it
/// is returned (collectOutputs).
void Executor::Run::bindAsViewOf(size_t in, size_t id,
                                 std::unique_ptr<BoundBuffer> bound) {
  state.buffers[id] = &bound->buffer;
  state.owned[id] = std::move(bound);
  blockOwner[id] = blockOwner[in];
  modelMemory[id] = modelMemory[in] || !state.owned[in] ||
                    entry.values[in].kind == PlanValue::Kind::Input;
  if (blockOwner[id] >= 0)
    ++blockUsers[static_cast<size_t>(blockOwner[id])];
}

/// Value `in` lies in host memory the run may view.
bool Executor::Run::hostViewable(size_t in) const {
  const halide_buffer_t *b = state.buffers[in];
  return !impl.options.deviceFree && b && !b->device && b->host &&
         memoryOf(in);
}

namespace {
/// What viewOnlyKernels knows of an entry's values as it walks its steps:
/// per value, bound by a kernel step (to a result or a view: memory a run
/// may view); dense in every run (a kernel's result, or a view that keeps
/// it dense); the step that wrote it.
struct ValueFacts {
  std::vector<bool> bound, dense;
  std::vector<const PlanStep *> writer;
  explicit ValueFacts(size_t n) : bound(n), dense(n), writer(n) {}
};

/// Whether a host run binds kernel step `step` as a view of its input for
/// inputs of any size (Executor::Run::bindView, bindStridedView); `dense`
/// is set to whether that view is dense.
bool alwaysView(const Plan &plan, const PlanStep &step, const ValueFacts &v,
                bool &dense) {
  dense = false;
  if (step.inputs.size() != 1 || step.outputs.size() != 1 ||
      step.variant.kernel >= 0)
    return false;
  size_t in = static_cast<size_t>(step.inputs[0]);
  if (isViewKernel(plan.kernels[static_cast<size_t>(step.kernel)]))
    return dense = v.dense[in];
  if (step.view.empty() || !v.bound[in])
    return false;
  const PlanStep *producer = v.writer[in];
  dense = v.dense[in] && producer && !producer->layout.empty() &&
          producer->layout == step.view.perm;
  return step.view.strided || dense;
}
} // namespace

std::vector<bool> viewOnlyKernels(const Plan &plan,
                                  const std::vector<std::string> &entries) {
  size_t count = plan.kernels.size();
  std::vector<bool> called(count, false), viewOnly(count, true);
  auto mark = [&](int32_t k, bool view) {
    if (k < 0 || static_cast<size_t>(k) >= count)
      return;
    called[static_cast<size_t>(k)] = true;
    viewOnly[static_cast<size_t>(k)] = viewOnly[static_cast<size_t>(k)] && view;
  };
  for (const PlanEntry &entry : plan.entries) {
    if (!entries.empty() &&
        std::find(entries.begin(), entries.end(), entry.name) == entries.end())
      continue;
    ValueFacts facts(entry.values.size());
    for (const PlanStep &step : entry.steps) {
      if (step.op != PlanStep::Op::Kernel)
        continue;
      bool denseView = false;
      bool view = alwaysView(plan, step, facts, denseView);
      mark(step.kernel, view);
      mark(step.variant.kernel, false);
      bool result =
          !view && step.view.empty() &&
          !isViewKernel(plan.kernels[static_cast<size_t>(step.kernel)]);
      for (int32_t out : step.outputs) {
        size_t o = static_cast<size_t>(out);
        facts.bound[o] = true;
        facts.dense[o] = result || denseView;
        facts.writer[o] = &step;
      }
    }
  }
  for (size_t k = 0; k < count; ++k)
    viewOnly[k] = viewOnly[k] && called[k];
  return viewOnly;
}

/// A view kernel on the host: the result is the input's bytes with another
/// shape. Returns false when the step must run its kernel instead (device
/// buffers, an input that is not dense, or absent); `status` reports
/// failures.
bool Executor::Run::bindView(const PlanStep &step, Status &status) {
  const PlanKernel &kernel =
      impl.plan.kernels[static_cast<size_t>(step.kernel)];
  if (!isViewKernel(kernel) || step.inputs.size() != 1 ||
      step.outputs.size() != 1)
    return false;
  size_t in = static_cast<size_t>(step.inputs[0]);
  size_t id = static_cast<size_t>(step.outputs[0]);
  if (!hostViewable(in) || !isDense(*state.buffers[in]) ||
      entry.values[in].dtype != entry.values[id].dtype)
    return false;
  int64_t count = 1, have = 1;
  for (int64_t d : shapes[id])
    count *= d;
  for (int i = 0; i < state.buffers[in]->dimensions; ++i)
    have *= state.buffers[in]->dim[i].extent;
  if (count != have)
    return false;
  // The handle copy keeps the block alive as long as the view.
  auto keep = std::make_shared<Tensor>(*memoryOf(in));
  Expected<Tensor> view = Tensor::borrow(entry.values[id].dtype, shapes[id],
                                         state.buffers[in]->host, keep);
  std::unique_ptr<BoundBuffer> bound = state.take();
  status = view ? bound->bind(view.take()) : view.status();
  if (status.ok())
    bindAsViewOf(in, id, std::move(bound));
  return true;
}

/// A transpose or slice on the host (PlanStep::StridedView): the result is
/// bound as a view of the input, no kernel runs, when it reads its input's
/// memory densely (every head split and merge of a decode step: the axes it
/// moves have extent 1; the head merge after an attention laid out for it,
/// PlanStep::layout), or when the plan allows a strided one (only kernels
/// read it: the head split at prefill). Returns false when the step must
/// run its kernel.
bool Executor::Run::bindStridedView(const PlanStep &step) {
  if (step.view.empty() || !impl.options.stridedViews)
    return false;
  size_t in = static_cast<size_t>(step.inputs[0]);
  size_t id = static_cast<size_t>(step.outputs[0]);
  if (!hostViewable(in))
    return false;
  const halide_buffer_t &src = *state.buffers[in];
  auto view = stridedView(step.view, src, shapes[id]);
  if (!view ||
      (!step.view.strided &&
       !isDense(view->first.data(), static_cast<int>(view->first.size()))))
    return false;
  std::unique_ptr<BoundBuffer> bound = state.take();
  bound->bindStrided(*memoryOf(in), src, std::move(view->first),
                     src.host + view->second * src.type.bytes());
  bindAsViewOf(in, id, std::move(bound));
  return true;
}

/// Allocates the step's outputs, each in a block of its own. An output
/// with a layout (PlanStep::layout) is allocated in that order where the
/// executor binds strided views (host buffers), so that the transpose
/// after it is a dense view.
Status Executor::Run::allocateOutputs(const PlanStep &step) {
  const bool laidOut = !step.layout.empty() && impl.options.stridedViews &&
                       !impl.options.deviceFree;
  for (int32_t out : step.outputs) {
    size_t id = static_cast<size_t>(out);
    Shape memory = shapes[id];
    if (laidOut)
      for (size_t j = 0; j < memory.size(); ++j)
        memory[j] = shapes[id][static_cast<size_t>(step.layout[j])];
    Expected<Tensor> t = impl.pool->allocate(entry.values[id].dtype, memory);
    if (!t)
      return Status::error("could not allocate its output " +
                           typeToString(entry.values[id].dtype, shapes[id]) +
                           ": " + t.message());
    std::unique_ptr<BoundBuffer> bound = state.take();
    TFC_RT_RETURN_IF_ERROR(laidOut ? bound->bindLaidOut(t.take(), step.layout)
                                   : bound->bind(t.take()));
    state.buffers[id] = &bound->buffer;
    state.owned[id] = std::move(bound);
    blockOwner[id] = static_cast<int32_t>(id);
    blockUsers[id] = 1;
    liveTempBytes += state.owned[id]->tensor.byteSize();
  }
  impl.stats.peakTempBytes = std::max(impl.stats.peakTempBytes, liveTempBytes);
  return Status::success();
}

/// One step: skipped (the prologue ran it), a cache step, a view, or a
/// kernel call.
Status Executor::Run::runStep(size_t stepIndex) {
  const PlanStep &step = entry.steps[stepIndex];
  // A step the prologue computed is never released; it counts as a step of
  // the run (RunStats::steps: the plan's steps carried out).
  if (skipStep[stepIndex]) {
    ++impl.stats.steps;
    return Status::success();
  }
  if (step.op != PlanStep::Op::Kernel) {
    Status s = runCacheStep(entry, step, *cache, shapes, state);
    if (!s.ok())
      return fail(s.message());
    ++impl.stats.steps;
    releaseAfter(step);
    return Status::success();
  }
  int32_t kernelIndex = step.kernelFor([&](size_t input) -> const Shape & {
    return shapes[static_cast<size_t>(step.inputs[input])];
  });
  const PlanKernel &kernel = impl.plan.kernels[static_cast<size_t>(kernelIndex)];
  auto stepError = [&](const std::string &msg) {
    return Status::error(stepKernelLabel(step, entry, kernel) + " " + msg);
  };
  if (bindStridedView(step)) {
    ++impl.stats.steps;
    ++impl.stats.views;
    releaseAfter(step);
    return Status::success();
  }
  Status viewStatus = Status::success();
  if (bindView(step, viewStatus)) {
    if (!viewStatus.ok())
      return stepError(viewStatus.message());
    ++impl.stats.steps;
    releaseAfter(step);
    return Status::success();
  }
  if (Status s = allocateOutputs(step); !s.ok())
    return stepError(s.message());
  ++impl.stats.steps;
  ++impl.stats.kernelCalls;
  args.clear();
  for (int32_t in : step.inputs)
    args.push_back(state.buffers[static_cast<size_t>(in)]);
  for (int32_t out : step.outputs)
    args.push_back(state.buffers[static_cast<size_t>(out)]);
  Expected<KernelFn> fn = impl.kernel(static_cast<size_t>(kernelIndex));
  if (!fn)
    return stepError(fn.status().message());
  int rc = (*fn)(args.data());
  if (rc != 0) {
    std::string why;
    if (impl.options.kernelErrorMessage)
      why = impl.options.kernelErrorMessage();
    return stepError("failed with error code " + std::to_string(rc) +
                     (why.empty() ? "" : ": " + why));
  }
  if (!impl.options.deviceFree)
    for (int32_t out : step.outputs)
      if (state.buffers[static_cast<size_t>(out)]->device)
        return stepError("left its output in device memory, but the "
                         "executor was created without device support "
                         "(ExecutorOptions)");
  releaseAfter(step);
  return Status::success();
}

/// The entry's results: temps as they are, the cache as the caller's
/// KvCache (or the run's own), and copies of anything that is an input or
/// model memory, so that writing to a result cannot change either.
Expected<std::vector<Tensor>> Executor::Run::collectOutputs() {
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < entry.outputs.size(); ++i) {
    size_t id = static_cast<size_t>(entry.outputs[i]);
    if (int c = entry.cacheOfOutput(static_cast<int>(i)); c >= 0) {
      outputs.push_back(ownsCache ? ownCache.buffers[static_cast<size_t>(c)]
                                  : Tensor());
      continue;
    }
    halide_buffer_t *buffer = state.buffers[id];
    if (buffer->device_dirty()) {
      if (!impl.options.copyToHost)
        return fail("output '" + entry.outputNames[i] +
                    "' is in device memory, but the executor was created "
                    "without device support (ExecutorOptions)");
      int rc = impl.options.copyToHost(nullptr, buffer);
      if (rc != 0)
        return fail("copying output '" + entry.outputNames[i] +
                    "' to the host failed with error code " +
                    std::to_string(rc));
    }
    const PlanValue &value = entry.values[id];
    if (state.owned[id] && state.owned[id]->view) {
      Expected<Tensor> copy = denseCopy(*buffer, value.dtype, shapes[id]);
      if (!copy)
        return fail("output '" + entry.outputNames[i] + "': " +
                    copy.message());
      outputs.push_back(copy.take());
      continue;
    }
    if (value.kind == PlanValue::Kind::Temp && precomputedKeys[id].empty() &&
        !modelMemory[id]) {
      outputs.push_back(state.owned[id]->tensor);
      continue;
    }
    // An input, model memory or a view of either: a copy.
    Expected<Tensor> copy = memoryOf(id)->clone();
    if (!copy)
      return fail("output '" + entry.outputNames[i] + "': " + copy.message());
    outputs.push_back(copy.take());
  }
  if (!entry.caches.empty() && !ownsCache) {
    const PlanCache &first = entry.caches.front();
    cache->length = shapes[static_cast<size_t>(
        entry.outputs[static_cast<size_t>(first.output)])]
                          [static_cast<size_t>(first.axis)];
  }
  return outputs;
}

Expected<std::vector<Tensor>>
Executor::runEntry(const std::string &entryName,
                   const std::vector<Tensor> &inputs, KvCache *cache) {
  const Plan &plan = impl->plan;
  impl->stats = RunStats();
  const PlanEntry *found = plan.findEntry(entryName);
  if (!found) {
    std::string names;
    for (const PlanEntry &e : plan.entries)
      names += (names.empty() ? "" : ", ") + e.name;
    return Status::error("the model has no entry '" + entryName +
                         "' (it has: " + names + ")");
  }
  size_t entryIndex = static_cast<size_t>(found - plan.entries.data());
  Run run(*impl, *found, entryIndex, cache);
  if (!impl->runnable[entryIndex])
    return run.fail("its kernels were not compiled (the executor was created "
                    "for other entries)");
  TFC_RT_RETURN_IF_ERROR(run.checkInputsAndShapes(inputs));
  TFC_RT_RETURN_IF_ERROR(run.prepareCache());
  TFC_RT_RETURN_IF_ERROR(run.bindInputs());
  run.bindModelValues();
  for (size_t i = 0; i < found->steps.size(); ++i)
    TFC_RT_RETURN_IF_ERROR(run.runStep(i));
  return run.collectOutputs();
}

} // namespace tfc::rt
