//===- FusionReport.h - what fused, per layer, and what did not -*- C++ -*-===//
//
// Built from the IR after the passes ran (runDefaultPipeline fills one):
//
//  - per function and per layer, how many fused ops there are: attention
//    (tfc.fused_attention), add + LayerNorm (tfc.add_layer_norm), linear
//    layers with a fused bias and/or activation (tfc.linear, with the number
//    that carry an activation), and packed QKV projections (a linear whose
//    result is split by two or more slices along its last axis: merged by
//    merge-qkv, or packed in the checkpoint like GPT-2's c_attn);
//  - for every tfc.softmax, tfc.layer_norm and tfc.matmul left, the op that
//    blocked its fusion and why, from the same matchers the passes use.
//
// The layer of an op comes from the names of the nearest tfc.params it
// reads (`h.3.`, `encoder.layer.3.`); ops outside the layers (embeddings,
// final norm, LM head) are listed as "(outside layers)".
//
//===----------------------------------------------------------------------===//

#ifndef TFC_PASSES_FUSIONREPORT_H
#define TFC_PASSES_FUSIONREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>
#include <vector>

namespace tfc {

struct FusionReport {
  /// Fused ops of one layer of one function.
  struct Layer {
    std::string name; // "h.3", or "" outside the layers
    unsigned attention = 0;
    unsigned addLayerNorm = 0;
    unsigned linear = 0;           // tfc.linear ops
    unsigned linearActivation = 0; // ... of which with an activation
    unsigned qkv = 0;              // packed/merged projections
    unsigned unfused = 0;          // entries in `unfused` for this layer
  };
  /// A softmax, layer_norm or matmul that did not fuse.
  struct Unfused {
    std::string layer;
    std::string op;       // "tfc.softmax"
    std::string location; // "gpt2-arch.tfm:54:32 (<prelude>:40:10)"
    std::string blocker;  // "tfc.add at ...", the op that blocked it
    std::string reason;   // a sentence
  };
  struct Function {
    std::string name;
    std::vector<Layer> layers; // in program order of their first op
    std::vector<Unfused> unfused;
    Layer total() const;
  };

  std::string model; // the module's tfc.model, if any
  std::vector<std::string> disabled;
  std::vector<Function> functions;

  /// A readable table per function, then the unfused ops with reasons.
  void print(llvm::raw_ostream &os) const;
};

/// Builds the report for `module` as it is now. `disabled` names the passes
/// that did not run, so that the report can say so instead of giving a
/// pattern reason.
FusionReport buildFusionReport(mlir::ModuleOp module,
                               const std::set<std::string> &disabled = {});

} // namespace tfc

#endif // TFC_PASSES_FUSIONREPORT_H
