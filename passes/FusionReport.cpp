//===- FusionReport.cpp - what fused, per layer, and what did not ---------===//
//
// Walks every function in program order. Fused ops are counted in the layer
// of the parameters they read (FusionUtils' layerOf). Every softmax,
// layer_norm and matmul still present is explained by running the matcher
// of the pass that would have fused it (Matchers.h): its Blocker names the
// op that prevented the fusion. A matcher that succeeds means the pass was
// disabled (or the pattern only appeared after the pass ran).
//
//===----------------------------------------------------------------------===//

#include "passes/FusionReport.h"

#include "passes/Matchers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <map>

using namespace mlir;
namespace tir = mlir::tfc;

namespace tfc {

FusionReport::Layer FusionReport::Function::total() const {
  Layer sum;
  sum.name = "total";
  for (const Layer &layer : layers) {
    sum.attention += layer.attention;
    sum.addLayerNorm += layer.addLayerNorm;
    sum.linear += layer.linear;
    sum.linearActivation += layer.linearActivation;
    sum.qkv += layer.qkv;
    sum.unfused += layer.unfused;
  }
  return sum;
}

namespace {

/// The slices along axis `axis` among `value`'s users, or -1 when another
/// op reads it.
int64_t slicesAlong(Value value, int64_t axis) {
  int64_t slices = 0;
  for (Operation *user : value.getUsers()) {
    auto slice = dyn_cast<tir::SliceOp>(user);
    if (!slice || static_cast<int64_t>(slice.getAxis()) != axis)
      return -1;
    ++slices;
  }
  return slices;
}

/// Whether `linear` computes several projections at once: its result is
/// read only by two or more slices along the last axis, or by one reshape
/// that splits the last axis into heads, read only by such slices of whole
/// heads (tfc-simplify's form of the head split).
bool isPackedProjection(tir::LinearOp linear) {
  Value result = linear.getResult();
  int64_t last = cast<RankedTensorType>(result.getType()).getRank() - 1;
  if (result.hasOneUse())
    if (auto reshape = dyn_cast<tir::ReshapeOp>(*result.getUsers().begin()))
      if (cast<RankedTensorType>(reshape.getType()).getRank() == last + 2)
        return slicesAlong(reshape.getResult(), last) >= 2;
  return slicesAlong(result, last) >= 2;
}

std::string layerLabel(const std::string &layer) {
  return layer.empty() ? "(outside layers)" : layer;
}

struct FunctionBuilder {
  const std::set<std::string> &disabled;
  FusionReport::Function function;
  std::map<std::string, size_t> index;

  FusionReport::Layer &layer(const std::string &name) {
    auto [it, inserted] = index.try_emplace(name, function.layers.size());
    if (inserted) {
      function.layers.emplace_back();
      function.layers.back().name = name;
    }
    return function.layers[it->second];
  }

  /// Records `op` as not fused: `failed` tells whether the matcher failed
  /// (then `why` says why), `pass` is the pass that fuses it.
  void unfused(Operation *op, bool failed, const Blocker &why,
               llvm::StringRef pass) {
    FusionReport::Unfused entry;
    entry.layer = layerOf(op);
    entry.op = op->getName().getStringRef().str();
    entry.location = formatLocation(op->getLoc());
    if (failed) {
      if (why.op && why.op != op)
        entry.blocker = describe(why.op);
      entry.reason = why.reason;
    } else if (disabled.count(pass.str())) {
      entry.reason = "would fuse, but " + pass.str() + " is disabled";
    } else {
      entry.reason = "matches " + pass.str() +
                     " now (the pattern appeared after the pass ran)";
    }
    layer(entry.layer).unfused++;
    function.unfused.push_back(std::move(entry));
  }

  void visit(Operation *op) {
    if (isa<tir::FusedAttentionOp>(op)) {
      layer(layerOf(op)).attention++;
    } else if (isa<tir::AddLayerNormOp>(op)) {
      layer(layerOf(op)).addLayerNorm++;
    } else if (auto linear = dyn_cast<tir::LinearOp>(op)) {
      FusionReport::Layer &entry = layer(layerOf(op));
      entry.linear++;
      if (linear.getActivation() != "none")
        entry.linearActivation++;
      if (isPackedProjection(linear))
        entry.qkv++;
    } else if (auto softmax = dyn_cast<tir::SoftmaxOp>(op)) {
      Blocker why;
      bool failed = mlir::failed(matchAttention(softmax, &why));
      unfused(op, failed, why, "fuse-attention");
    } else if (auto norm = dyn_cast<tir::LayerNormOp>(op)) {
      Blocker why;
      bool failed = mlir::failed(matchAddLayerNorm(norm, &why));
      unfused(op, failed, why, "fuse-add-layernorm");
    } else if (auto matmul = dyn_cast<tir::MatmulOp>(op)) {
      Blocker why;
      bool failed = mlir::failed(matchLinear(matmul, &why));
      // The matmuls of an attention that did not fuse: point at its
      // softmax, which says why.
      if (auto softmax = matmul.getLhs().getDefiningOp<tir::SoftmaxOp>()) {
        why = {softmax, "multiplies the probabilities of the unfused "
                        "attention (" +
                            describe(softmax) + ")"};
        failed = true;
      } else if (matmul.getResult().hasOneUse() &&
                 cast<RankedTensorType>(matmul.getRhs().getType())
                         .getRank() != 2) {
        // Follow the score chain to a softmax.
        Operation *user = *matmul.getResult().user_begin();
        for (int i = 0; i < 6 && user && !isa<tir::SoftmaxOp>(user); ++i)
          user = user->getNumResults() == 1 &&
                         user->getResult(0).hasOneUse()
                     ? *user->getResult(0).user_begin()
                     : nullptr;
        if (user && isa<tir::SoftmaxOp>(user)) {
          why = {user, "computes the scores of the unfused attention (" +
                           describe(user) + ")"};
          failed = true;
        }
      }
      unfused(op, failed, why, "fuse-bias-activation");
    }
  }
};

void printRow(llvm::raw_ostream &os, size_t width, const std::string &name,
              const FusionReport::Layer &layer) {
  std::string linear = std::to_string(layer.linear) + " (" +
                       std::to_string(layer.linearActivation) + ")";
  os << "  " << llvm::left_justify(name, width) << "  "
     << llvm::right_justify(std::to_string(layer.attention), 9) << "  "
     << llvm::right_justify(std::to_string(layer.addLayerNorm), 13) << "  "
     << llvm::right_justify(linear, 12) << "  "
     << llvm::right_justify(std::to_string(layer.qkv), 3) << "  "
     << llvm::right_justify(std::to_string(layer.unfused), 7) << "\n";
}

} // namespace

FusionReport buildFusionReport(ModuleOp module,
                               const std::set<std::string> &disabled) {
  FusionReport report;
  if (auto model = module->getAttrOfType<StringAttr>("tfc.model"))
    report.model = model.getValue().str();
  report.disabled.assign(disabled.begin(), disabled.end());
  module.walk([&](func::FuncOp func) {
    FunctionBuilder builder{disabled, {}, {}};
    builder.function.name = func.getSymName().str();
    func.walk([&](Operation *op) { builder.visit(op); });
    report.functions.push_back(std::move(builder.function));
  });
  return report;
}

void FusionReport::print(llvm::raw_ostream &os) const {
  os << "fusion report";
  if (!model.empty())
    os << " for model " << model;
  os << "\npasses disabled: ";
  if (disabled.empty())
    os << "none";
  for (size_t i = 0; i < disabled.size(); ++i)
    os << (i ? ", " : "") << disabled[i];
  os << "\n";
  for (const Function &function : functions) {
    os << "\n@" << function.name << "\n";
    size_t width = 5;
    for (const Layer &layer : function.layers)
      width = std::max(width, layerLabel(layer.name).size());
    os << "  " << llvm::left_justify("layer", width)
       << "  attention  add+layernorm  linear (act)  qkv  unfused\n";
    for (const Layer &layer : function.layers)
      printRow(os, width, layerLabel(layer.name), layer);
    printRow(os, width, "total", function.total());
    if (function.unfused.empty()) {
      os << "  not fused: nothing (every softmax, layer_norm and matmul "
            "fused)\n";
      continue;
    }
    os << "  not fused:\n";
    for (const Unfused &entry : function.unfused) {
      os << "    " << entry.op << " at " << entry.location << " ["
         << (entry.layer.empty() ? "outside layers" : entry.layer)
         << "]: " << entry.reason;
      if (!entry.blocker.empty() &&
          entry.reason.find(entry.blocker) == std::string::npos)
        os << " (blocked by " << entry.blocker << ")";
      os << "\n";
    }
  }
}

} // namespace tfc
