//===- MatmulKernelTest.cpp - tfc.matmul against a naive product ----------===//
//
// Shapes are picked to hit each path of the schedule: exact tiles, tails
// handled by ShiftInwards (static) and by guards with clamped reads
// (dynamic or short), broadcasting batch dims, transpose_b, M = 1, and the
// GEMV variant for at most 8 rows (batch x M, tested at run time when
// dynamic) on [K, N] and [N, K] weights, with 9 rows falling back to tiles;
// and the bf16-weight variants (tiled with vdpbf16ps, and GEMV); and
// weights in column panels (tfc.pack_panels), f32 and bf16.
//
//===----------------------------------------------------------------------===//

#include "CodegenTestUtil.h"
#include "codegen/AmxMatmul.h"
#include "codegen/PanelMatmul.h"

using namespace tfc::test;

namespace {

std::string tensorType(const std::vector<std::string> &dims) {
  std::string t = "tensor<";
  for (const std::string &d : dims)
    t += d + "x";
  return t + "f32>";
}

struct MatmulCase {
  const char *name;
  std::vector<std::string> a, b, r; // IR dims ("?" or a number)
  Shape aShape, bShape, rShape;     // concrete shapes
  bool transposeB;
};

void PrintTo(const MatmulCase &c, std::ostream *os) { *os << c.name; }

class MatmulTest : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(MatmulTest, MatchesNaiveProduct) {
  const MatmulCase &c = GetParam();
  std::string at = tensorType(c.a), bt = tensorType(c.b), rt = tensorType(c.r);
  std::string ir = singleOpFunc(
      "%a: " + at + ", %b: " + bt,
      "tfc.matmul %a, %b " +
          std::string(c.transposeB ? "{transpose_b = true} " : "") + ": (" +
          at + ", " + bt + ") -> " + rt,
      rt);
  Tensor a = Tensor(DT::F32, c.aShape).random(-1, 1, 21);
  Tensor b = Tensor(DT::F32, c.bShape).random(-1, 1, 22);
  Tensor out = runOp(ir, {a, b}, DT::F32, c.rShape);

  int ra = static_cast<int>(c.aShape.size());
  int rb = static_cast<int>(c.bShape.size());
  int rank = static_cast<int>(c.rShape.size());
  int64_t K = c.aShape[ra - 1];
  expectClose(
      out,
      [&](const Index &i) {
        // Broadcast batch indices, as numpy.
        Index ai(ra), bi(rb);
        for (int d = 0; d < ra - 2; ++d)
          ai[d] = c.aShape[d] == 1 ? 0 : i[d + rank - ra];
        for (int d = 0; d < rb - 2; ++d)
          bi[d] = c.bShape[d] == 1 ? 0 : i[d + rank - rb];
        double sum = 0;
        for (int64_t k = 0; k < K; ++k) {
          ai[ra - 2] = i[rank - 2];
          ai[ra - 1] = k;
          if (c.transposeB) {
            bi[rb - 2] = i[rank - 1];
            bi[rb - 1] = k;
          } else {
            bi[rb - 2] = k;
            bi[rb - 1] = i[rank - 1];
          }
          sum += a.get(ai) * b.get(bi);
        }
        return sum;
      },
      1e-4, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulTest,
    ::testing::Values(
        // Two exact micro-kernel tiles (8 static rows would be a GEMV).
        MatmulCase{"ExactTile",
                   {"16", "32"},
                   {"32", "48"},
                   {"16", "48"},
                   {16, 32},
                   {32, 48},
                   {16, 48},
                   false},
        // GEMV, static rows: K a multiple of 4, N of 16.
        MatmulCase{"GemvStatic",
                   {"8", "32"},
                   {"32", "48"},
                   {"8", "48"},
                   {8, 32},
                   {32, 48},
                   {8, 48},
                   false},
        // GEMV at run time: 2 x 3 rows; N = 100 (tasks overlap at the end).
        MatmulCase{"GemvDynamicRows",
                   {"?", "?", "64"},
                   {"64", "100"},
                   {"?", "?", "100"},
                   {2, 3, 64},
                   {64, 100},
                   {2, 3, 100},
                   false},
        // The same kernel with 3 x 3 rows: the tiled path.
        MatmulCase{"GemvNineRowsTiled",
                   {"?", "?", "64"},
                   {"64", "100"},
                   {"?", "?", "100"},
                   {3, 3, 64},
                   {64, 100},
                   {3, 3, 100},
                   false},
        // GEMV with an odd K, N = 40.
        MatmulCase{"GemvOddK",
                   {"?", "37"},
                   {"37", "40"},
                   {"?", "40"},
                   {5, 37},
                   {37, 40},
                   {5, 40},
                   false},
        // GEMV over two tasks of 4096 columns, the second shifted inwards
        // (it recomputes columns of the first): N = 4100, K = 19.
        MatmulCase{"GemvTwoColumnTasks",
                   {"?", "19"},
                   {"19", "4100"},
                   {"?", "4100"},
                   {3, 19},
                   {19, 4100},
                   {3, 4100},
                   false},
        // GEMV on an [N, K] weight (a tied LM head), one result row: dot
        // products over K in 32 lanes (two vectors), N = 50 (not a multiple
        // of 16).
        MatmulCase{"GemvTransposed",
                   {"?", "?", "32"},
                   {"50", "32"},
                   {"?", "?", "50"},
                   {1, 1, 32},
                   {50, 32},
                   {1, 1, 50},
                   true},
        // K = 48, not a multiple of 32: one vector of lanes.
        MatmulCase{"GemvTransposedEightRows",
                   {"?", "48"},
                   {"70", "48"},
                   {"?", "70"},
                   {8, 48},
                   {70, 48},
                   {8, 70},
                   true},
        // Tasks of 256 results (the last one shifted inwards), their lane
        // sums 16 results at a time.
        MatmulCase{"GemvTransposedManyTasks",
                   {"?", "?", "64"},
                   {"601", "64"},
                   {"?", "?", "601"},
                   {1, 1, 64},
                   {601, 64},
                   {1, 1, 601},
                   true},
        // [N, K] with fewer results than a vector: one task of 5.
        MatmulCase{"GemvTransposedNarrow",
                   {"?", "32"},
                   {"5", "32"},
                   {"?", "5"},
                   {2, 32},
                   {5, 32},
                   {2, 5},
                   true},
        // [N, K] with K not a multiple of 16: no GEMV, the tiles at M = 2.
        MatmulCase{"TransposedOddKFewRows",
                   {"?", "24"},
                   {"70", "24"},
                   {"?", "70"},
                   {2, 24},
                   {70, 24},
                   {2, 70},
                   true},
        // Static tails: M and N not multiples of the tile (ShiftInwards).
        MatmulCase{"StaticTails",
                   {"130", "96"},
                   {"96", "100"},
                   {"130", "100"},
                   {130, 96},
                   {96, 100},
                   {130, 100},
                   false},
        // A weight shared by a dynamic batch; dynamic M with a tail.
        MatmulCase{"DynamicBatchAndSeq",
                   {"?", "?", "40"},
                   {"40", "50"},
                   {"?", "?", "50"},
                   {3, 19, 40},
                   {40, 50},
                   {3, 19, 50},
                   false},
        // Narrow N (< one tile) and K not a multiple of anything.
        MatmulCase{"NarrowN",
                   {"?", "33"},
                   {"33", "5"},
                   {"?", "5"},
                   {21, 33},
                   {33, 5},
                   {21, 5},
                   false},
        // Decode step: one row.
        MatmulCase{"SingleRow",
                   {"?", "64"},
                   {"64", "96"},
                   {"?", "96"},
                   {1, 64},
                   {64, 96},
                   {1, 96},
                   false},
        // nn.Linear layout.
        MatmulCase{"TransposedWeight",
                   {"?", "24"},
                   {"70", "24"},
                   {"?", "70"},
                   {37, 24},
                   {70, 24},
                   {37, 70},
                   true},
        // The swapped variant (A with >= 32 rows, an [N, K] weight): a
        // dynamic batch, 45 rows (the last row tile shifted inwards), N = 50
        // (not a multiple of the 12 rows of B in a tile).
        MatmulCase{"SwappedBatchAndTails",
                   {"?", "?", "40"},
                   {"50", "40"},
                   {"?", "?", "50"},
                   {3, 45, 40},
                   {50, 40},
                   {3, 45, 50},
                   true},
        // Static rows, exactly two row tiles, N exactly the tile.
        MatmulCase{"SwappedStatic",
                   {"64", "16"},
                   {"12", "16"},
                   {"64", "12"},
                   {64, 16},
                   {12, 16},
                   {64, 12},
                   true},
        // 31 rows: below the swapped variant, the tiles (same kernel).
        MatmulCase{"SwappedBelowRows",
                   {"?", "40"},
                   {"50", "40"},
                   {"?", "50"},
                   {31, 40},
                   {50, 40},
                   {31, 50},
                   true},
        // Attention scores Q @ K^T: batch and both sequence dims dynamic,
        // keys longer than queries.
        MatmulCase{"AttentionScores",
                   {"?", "2", "?", "16"},
                   {"?", "2", "?", "16"},
                   {"?", "2", "?", "?"},
                   {2, 2, 13, 16},
                   {2, 2, 61, 16},
                   {2, 2, 13, 61},
                   true},
        // probs @ V with a dynamic contraction (the key length).
        MatmulCase{"AttentionValues",
                   {"?", "2", "?", "?"},
                   {"?", "2", "?", "16"},
                   {"?", "2", "?", "16"},
                   {2, 2, 9, 30},
                   {2, 2, 30, 16},
                   {2, 2, 9, 16},
                   false},
        // Static-1 batch dims broadcast against each other.
        MatmulCase{"BroadcastBatch",
                   {"1", "4", "6"},
                   {"3", "6", "5"},
                   {"3", "4", "5"},
                   {1, 4, 6},
                   {3, 6, 5},
                   {3, 4, 5},
                   false},
        MatmulCase{"BroadcastBatchRank",
                   {"2", "3", "4", "6"},
                   {"3", "6", "50"},
                   {"2", "3", "4", "50"},
                   {2, 3, 4, 6},
                   {3, 6, 50},
                   {2, 3, 4, 50},
                   false}),
    [](const ::testing::TestParamInfo<MatmulCase> &info) {
      return std::string(info.param.name);
    });

/// The bf16 kernels (`--dtype bf16`): an f32 A times a [K, N] bf16 weight.
/// A's values are bf16 numbers (so the tiled path's rounding of A is exact
/// and both paths have one reference); products accumulate in f32.
struct Bf16Case {
  const char *name;
  std::string a, r; // IR types
  Shape aShape;
  int64_t k, n;
};

void PrintTo(const Bf16Case &c, std::ostream *os) { *os << c.name; }

class MatmulBf16Test : public ::testing::TestWithParam<Bf16Case> {};

TEST_P(MatmulBf16Test, MatchesNaiveProduct) {
  if (!tfc::codegen::supportsBf16Products(cache().target()))
    GTEST_SKIP() << "no AVX512_BF16 on this CPU";
  const Bf16Case &c = GetParam();
  std::string bt = "tensor<" + std::to_string(c.k) + "x" +
                   std::to_string(c.n) + "xbf16>";
  std::string ir = singleOpFunc(
      "%a: " + c.a + ", %b: " + bt,
      "tfc.matmul %a, %b : (" + c.a + ", " + bt + ") -> " + c.r, c.r);
  Tensor a = Tensor(DT::BF16, c.aShape).random(-1, 1, 31);
  Tensor aF32(DT::F32, c.aShape);
  aF32.fill([&](const Index &i) { return a.get(i); });
  Tensor b = Tensor(DT::BF16, {c.k, c.n}).random(-1, 1, 32);
  Shape rShape = c.aShape;
  rShape.back() = c.n;
  Tensor out = runOp(ir, {aF32, b}, DT::F32, rShape);
  int rank = static_cast<int>(rShape.size());
  expectClose(
      out,
      [&](const Index &i) {
        Index ai = i;
        double sum = 0;
        for (int64_t k = 0; k < c.k; ++k) {
          ai[rank - 1] = k;
          sum += a.get(ai) * b.get({k, i[rank - 1]});
        }
        return sum;
      },
      1e-5, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulBf16Test,
    ::testing::Values(
        Bf16Case{"ExactTiles", "tensor<16x32xf32>", "tensor<16x48xf32>",
                 {16, 32}, 32, 48},
        // ShiftInwards tails in M and N; K = 96 pairs.
        Bf16Case{"StaticTails", "tensor<130x96xf32>", "tensor<130x100xf32>",
                 {130, 96}, 96, 100},
        // Dynamic batch and rows (guards, clamped A rows), N = 50.
        Bf16Case{"DynamicBatchAndSeq", "tensor<?x?x40xf32>",
                 "tensor<?x?x50xf32>", {3, 19, 40}, 40, 50},
        // N = 48 (one tile), K = 34.
        Bf16Case{"OneColumnTile", "tensor<?x34xf32>", "tensor<?x48xf32>",
                 {21, 34}, 34, 48},
        // The GEMV variant (6 rows at run time) reads the bf16 weight.
        Bf16Case{"GemvDynamicRows", "tensor<?x?x64xf32>",
                 "tensor<?x?x100xf32>", {2, 3, 64}, 64, 100},
        Bf16Case{"SingleRow", "tensor<?x64xf32>", "tensor<?x96xf32>", {1, 64},
                 64, 96},
        // A long contraction (BERT's FFN input size).
        Bf16Case{"LongK", "tensor<?x768xf32>", "tensor<?x96xf32>", {20, 768},
                 768, 96}),
    [](const ::testing::TestParamInfo<Bf16Case> &info) {
      return std::string(info.param.name);
    });

/// Weights in column panels (tfc.pack_panels, then a product with
/// `packed_n`): the pack kernel lays out a [K, N] or [N, K] (transpose_b)
/// weight, f32 or bf16, and the tiled, bf16 and GEMV kernels read it; N
/// tails (a padded last panel), dynamic rows and batches. `generic`: the
/// product as the planner's shape-generic copy (PlanOptions::
/// genericPanelProducts), whose K, panel count and N are read at run time.
struct PanelCase {
  const char *name;
  std::string a; // IR dims of A, e.g. "?x?x64"
  Shape aShape;
  int64_t k, n;
  bool transposeB, bf16, linear;
  bool generic = false;
};

void PrintTo(const PanelCase &c, std::ostream *os) { *os << c.name; }

class MatmulPanelTest : public ::testing::TestWithParam<PanelCase> {};

std::string dimsText(const std::vector<int64_t> &dims) {
  std::string t;
  for (int64_t d : dims)
    t += std::to_string(d) + "x";
  return t;
}

TEST_P(MatmulPanelTest, MatchesNaiveProduct) {
  const PanelCase &c = GetParam();
  if (c.bf16 && !tfc::codegen::supportsBf16Products(cache().target()))
    GTEST_SKIP() << "no AVX512_BF16 on this CPU";
  std::string elt = c.bf16 ? "bf16" : "f32";
  Shape wShape = c.transposeB ? Shape{c.n, c.k} : Shape{c.k, c.n};
  int64_t panels = (c.n + 47) / 48;
  Shape pShape = c.bf16 ? Shape{panels, c.k / 2, 48, 2}
                        : Shape{panels, c.k, 48};
  std::string wt = "tensor<" + dimsText(wShape) + elt + ">";
  std::string pt = "tensor<" + dimsText(pShape) + elt + ">";
  DT dt = c.bf16 ? DT::BF16 : DT::F32;
  // bf16 values in A too: the bf16 tiles round A to bf16, exactly then.
  Tensor a = Tensor(DT::BF16, c.aShape).random(-1, 1, 41);
  Tensor aF32(DT::F32, c.aShape);
  aF32.fill([&](const Index &i) { return a.get(i); });
  Tensor w = Tensor(dt, wShape).random(-1, 1, 42);
  Tensor packed = runOp(
      singleOpFunc("%w: " + wt,
                   "tfc.pack_panels %w " +
                       std::string(c.transposeB ? "{transpose_b = true} "
                                                : "") +
                       ": " + wt + " -> " + pt,
                   pt),
      {w}, dt, pShape);
  // The layout itself, padding included.
  expectClose(packed, [&](const Index &i) -> double {
    int64_t col = i[0] * 48 + i[2];
    int64_t k = c.bf16 ? 2 * i[1] + i[3] : i[1];
    if (col >= c.n)
      return 0;
    return c.transposeB ? w.get({col, k}) : w.get({k, col});
  });

  Shape rShape = c.aShape;
  rShape.back() = c.n;
  std::string rDims = c.a.substr(0, c.a.rfind('x') + 1);
  std::string at = "tensor<" + (c.generic ? rDims + "?" : c.a) + "xf32>";
  std::string rt =
      "tensor<" + rDims + (c.generic ? "?" : std::to_string(c.n)) + "xf32>";
  std::string productPt = c.generic ? "tensor<?x?x48xf32>" : pt;
  std::string op = c.linear ? "tfc.linear" : "tfc.matmul";
  std::string attrs =
      "{packed_n = " + std::to_string(c.n) + " : i64" +
      (c.linear ? std::string(", activation = \"relu\"") : "") + "}";
  std::string ir = singleOpFunc("%a: " + at + ", %p: " + productPt,
                                op + " %a, %p " + attrs + " : (" + at + ", " +
                                    productPt + ") -> " + rt,
                                rt);
  int rank = static_cast<int>(rShape.size());
  auto expected = [&](const Index &i) {
    Index ai = i;
    int64_t col = i[rank - 1];
    double sum = 0;
    for (int64_t k = 0; k < c.k; ++k) {
      ai[rank - 1] = k;
      sum += a.get(ai) * (c.transposeB ? w.get({col, k}) : w.get({k, col}));
    }
    return c.linear ? std::max(sum, 0.0) : sum;
  };
  bool verify = !c.generic;
  expectClose(runOp(ir, {aF32, packed}, DT::F32, rShape, nullptr, verify),
              expected, 1e-5, 1e-4);
  // Where the process uses an extern stage (AMX tiles or the bf16 panel
  // stage for bf16; the fp32 panel stage), the Halide kernel too.
  const tfc::codegen::KernelOptions &host = cache().kernelOptions();
  if (c.bf16 ? host.amxTiles || host.bf16PanelStage : host.f32PanelStage)
    expectClose(
        runOp(ir, {aF32, packed}, DT::F32, rShape, &noExternCache(), verify),
        expected, 1e-5, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulPanelTest,
    // One case per line or two, as a table.
    // clang-format off
    ::testing::Values(
        // Static rows, two exact panels.
        PanelCase{"ExactPanels", "16x32", {16, 32}, 32, 96, false, false,
                  false},
        // N = 100: the last panel has 4 columns (guarded stores); static
        // row tails.
        PanelCase{"StaticTails", "130x96", {130, 96}, 96, 100, false, false,
                  false},
        // nn.Linear's [N, K], packed with transpose_b; dynamic rows.
        PanelCase{"TransposedSource", "?x24", {37, 24}, 24, 70, true, false,
                  true},
        // Dynamic batch and rows, N = 50.
        PanelCase{"DynamicBatchAndSeq", "?x?x40", {3, 19, 40}, 40, 50, false,
                  false, false},
        // The GEMV variant on panels: 6 rows at run time, N tail.
        PanelCase{"GemvDynamicRows", "?x?x64", {2, 3, 64}, 64, 100, false,
                  false, true},
        // One row (a decode step), one panel exactly.
        PanelCase{"GemvSingleRow", "?x64", {1, 64}, 64, 48, true, false,
                  false},
        // Nine rows: the tiles, in the same kernel as the GEMV.
        PanelCase{"NineRowsTiled", "?x?x64", {3, 3, 64}, 64, 100, false,
                  false, false},
        PanelCase{"LongK", "?x768", {20, 768}, 768, 144, true, false, true},
        // K in 8 parts: read side by side at up to 128 result rows (LongK),
        // one after another above (here 2 x 100 rows).
        PanelCase{"LongKManyRows", "?x?x256", {2, 100, 256}, 256, 96, false,
                  false, false},
        // A long K that is not a multiple of the fp32 panel stage's 4 steps
        // per iteration (and past 1024: its blocks one panel wide); a row
        // tail, a padded last panel, a batch.
        PanelCase{"LongOddK", "?x?x1102", {2, 13, 1102}, 1102, 100, true,
                  false, true},
        // A larger than 2 MiB in whole blocks of 128 rows per batch entry:
        // the extern blocks with the rows outermost (MatmulKernel.cpp,
        // rowsOuterBlocks); a row tail (260 = 2 x 128 + 4), a padded panel.
        PanelCase{"RowsOuterBlocks", "?x?x700", {3, 260, 700}, 700, 100,
                  false, false, true},
        // A of 8.8 MB, more than 4 times a 2 MiB L2: the stage's tiles
        // prefetch their rows of A (MatmulKernel.cpp, prefetchRowsOfA); a
        // K not a multiple of the 16 floats per line, a padded panel.
        PanelCase{"PrefetchedRowsOfA", "?x?x1102", {2, 1000, 1102}, 1102, 10,
                  false, false, true},
        // [N, K] with K shorter than a 16 x 16 transpose tile, and one that
        // is not a multiple of it (the last tile shifted inwards).
        PanelCase{"TransposedShortK", "?x7", {5, 7}, 7, 70, true, false,
                  false},
        PanelCase{"TransposedKTail", "?x40", {9, 40}, 40, 50, true, false,
                  false},
        // bf16 panels (pairs of K): tiles with vdpbf16ps, and the GEMV.
        PanelCase{"Bf16ExactPanels", "16x32", {16, 32}, 32, 96, false, true,
                  false},
        PanelCase{"Bf16StaticTails", "130x96", {130, 96}, 96, 100, true,
                  true, true},
        PanelCase{"Bf16DynamicBatchAndSeq", "?x?x40", {3, 19, 40}, 40, 50,
                  false, true, false},
        PanelCase{"Bf16GemvDynamicRows", "?x?x64", {2, 3, 64}, 64, 100, true,
                  true, true},
        PanelCase{"Bf16GemvSingleRow", "?x34", {1, 34}, 34, 60, false, true,
                  false},
        PanelCase{"Bf16LongK", "?x768", {20, 768}, 768, 96, true, true,
                  false},
        // AMX blocks (K a multiple of 32): rows past one block of 128 and
        // not a multiple of 32, two column blocks and a padded panel,
        // batches; a row count the GEMV takes, and exact blocks.
        PanelCase{"Bf16BlockTails", "?x?x64", {2, 150, 64}, 64, 250, false,
                  true, true},
        PanelCase{"Bf16ExactBlocks", "128x96", {128, 96}, 96, 192, true, true,
                  false},
        // AMX blocks with the rows outermost (as RowsOuterBlocks).
        PanelCase{"Bf16RowsOuterBlocks", "?x?x704", {3, 260, 704}, 704, 100,
                  true, true, true},
        // K not a multiple of 32 (the bf16 panel stage, not AMX) nor of the
        // stage's 8 per iteration: 21 pairs, the last one after the loop;
        // a row tail, a padded panel, a batch.
        PanelCase{"Bf16OddPairs", "?x?x42", {2, 21, 42}, 42, 100, false, true,
                  true},
        // bf16 rows of A prefetched (8.8 MB of them, as PrefetchedRowsOfA).
        PanelCase{"Bf16PrefetchedRowsOfA", "?x?x1102", {2, 2000, 1102}, 1102,
                  10, false, true, true}),
    // clang-format on
    [](const ::testing::TestParamInfo<PanelCase> &info) {
      return std::string(info.param.name);
    });

// Shape-generic (K, panels and N at run time): the stage's blocks with row
// and column tails; the GEMV on 6 rows and on one; a long odd K with a batch;
// the blocks with the rows outermost.
INSTANTIATE_TEST_SUITE_P(
    GenericShapes, MatmulPanelTest,
    ::testing::Values(
        PanelCase{
            "Tails", "?x100", {37, 100}, 100, 70, false, false, true, true},
        PanelCase{
            "GemvRows", "?x?x64", {2, 3, 64}, 64, 100, true, false, true, true},
        PanelCase{"GemvSingleRow",
                  "?x?x64",
                  {1, 1, 64},
                  64,
                  150,
                  false,
                  false,
                  false,
                  true},
        PanelCase{"LongOddK",
                  "?x?x1102",
                  {2, 13, 1102},
                  1102,
                  250,
                  true,
                  false,
                  true,
                  true},
        PanelCase{"RowsOuterBlocks",
                  "?x?x700",
                  {3, 260, 700},
                  700,
                  100,
                  false,
                  false,
                  true,
                  true}),
    [](const ::testing::TestParamInfo<PanelCase> &info) {
      return std::string(info.param.name);
    });

TEST(MatmulKernelTest, RefusesNarrowBf16Weight) {
  // Fewer columns than one tile: refused with a reason (bf16-weights keeps
  // such weights f32).
  std::string ir = singleOpFunc(
      "%a: tensor<?x34xf32>, %b: tensor<34x5xbf16>",
      "tfc.matmul %a, %b : (tensor<?x34xf32>, tensor<34x5xbf16>) -> "
      "tensor<?x5xf32>",
      "tensor<?x5xf32>");
  ParsedOp parsed = parseOp(ir);
  auto kernel = cache().getOrCompile(parsed.op);
  ASSERT_FALSE(static_cast<bool>(kernel));
  std::string message = llvm::toString(kernel.takeError());
  EXPECT_NE(message.find("static N >= 48"), std::string::npos) << message;
}

/// `A x P` (P: 2 panels, 96 columns, of type `panels`; A: f32 [?, K]).
ParsedOp panelProduct(int64_t k, const std::string &panels) {
  std::string at = "tensor<?x" + std::to_string(k) + "xf32>";
  return parseOp(singleOpFunc("%a: " + at + ", %p: " + panels,
                              "tfc.matmul %a, %p {packed_n = 96 : i64} : (" +
                                  at + ", " + panels + ") -> tensor<?x96xf32>",
                              "tensor<?x96xf32>"));
}

/// The lowered statement of panelProduct(k, panels) built with `options`, or
/// "error: " and why.
std::string panelProductStmt(int64_t k, const std::string &panels,
                             const tfc::codegen::KernelOptions &options) {
  ParsedOp parsed = panelProduct(k, panels);
  auto kernel = tfc::codegen::buildKernel(
      parsed.op, tfc::codegen::hostTarget(), "", options);
  if (!kernel)
    return "error: " + llvm::toString(kernel.takeError());
  auto stmt = tfc::codegen::loweredStmt(*kernel, tfc::codegen::hostTarget());
  return stmt ? *stmt : "error: " + llvm::toString(stmt.takeError());
}

/// panelProductStmt on bf16 panels [2, K / 2, 48, 2], with the AMX stage
/// and the bf16 panel stage asked for or not.
std::string bf16StageStmt(int64_t k, bool amx, bool panelStage) {
  tfc::codegen::KernelOptions options;
  options.amxTiles = amx;
  options.bf16PanelStage = panelStage;
  return panelProductStmt(
      k, "tensor<2x" + std::to_string(k / 2) + "x48x2xbf16>", options);
}

/// The AMX extern stage is in a kernel only where KernelOptions ask for it
/// and it applies (bf16 panels, K a multiple of 32). Building needs no AMX.
TEST(MatmulKernelTest, AmxStageWhereAsked) {
  auto stmtOf = [](int64_t k, bool amx) {
    return bf16StageStmt(k, amx, false);
  };
  if (!tfc::codegen::supportsBf16Products(tfc::codegen::hostTarget()))
    GTEST_SKIP() << "no AVX512_BF16 on this CPU";
  EXPECT_NE(stmtOf(64, true).find(tfc::codegen::kAmxMatmulSymbol),
            std::string::npos);
  EXPECT_EQ(stmtOf(64, false).find(tfc::codegen::kAmxMatmulSymbol),
            std::string::npos);
  // K = 40: not a whole number of 32-wide tiles; the vdpbf16ps kernel.
  std::string k40 = stmtOf(40, true);
  EXPECT_NE(k40.rfind("error: ", 0), 0u) << k40;
  EXPECT_EQ(k40.find(tfc::codegen::kAmxMatmulSymbol), std::string::npos);
}

/// The bf16 panel stage is in a kernel only where KernelOptions ask for it
/// and it applies (bf16 panels, an even static K), and AMX is preferred
/// where both are asked for and K is a multiple of 32.
TEST(MatmulKernelTest, Bf16PanelStageWhereAsked) {
  auto stmtOf = [](int64_t k, bool stage, bool amx) {
    return bf16StageStmt(k, amx, stage);
  };
  if (!tfc::codegen::supportsBf16Products(tfc::codegen::hostTarget()))
    GTEST_SKIP() << "no AVX512_BF16 on this CPU";
  using tfc::codegen::kAmxMatmulSymbol, tfc::codegen::kBf16PanelMatmulSymbol;
  EXPECT_NE(stmtOf(40, true, false).find(kBf16PanelMatmulSymbol),
            std::string::npos);
  std::string without = stmtOf(40, false, false);
  EXPECT_NE(without.rfind("error: ", 0), 0u) << without;
  EXPECT_EQ(without.find(kBf16PanelMatmulSymbol), std::string::npos);
  std::string both = stmtOf(64, true, true);
  EXPECT_NE(both.find(kAmxMatmulSymbol), std::string::npos);
  EXPECT_EQ(both.find(kBf16PanelMatmulSymbol), std::string::npos);
  // K = 40 with both: not AMX's 32-wide tiles, the bf16 panel stage.
  EXPECT_NE(stmtOf(40, true, true).find(kBf16PanelMatmulSymbol),
            std::string::npos);
}

/// The bf16 panel stage refuses buffers it cannot read, with a reason,
/// before reading them (on any CPU).
TEST(MatmulKernelTest, Bf16PanelStageRefusesBadBuffers) {
  // An odd K.
  Tensor a(DT::BF16, {4, 41}), p(DT::BF16, {1, 20, 48, 2}),
      out(DT::F32, {4, 48});
  EXPECT_NE(
      tfc_panel_matmul_bf16(a.raw(), p.raw(), 41, 48, nullptr, 0, 0, out.raw()),
      0);
  std::string why = tfc::codegen::takeKernelRuntimeError();
  EXPECT_NE(why.find("positive and even"), std::string::npos) << why;
  // Panels of another K than the one passed.
  Tensor a40(DT::BF16, {4, 40}), p16(DT::BF16, {1, 16, 48, 2});
  EXPECT_NE(tfc_panel_matmul_bf16(a40.raw(), p16.raw(), 40, 48, nullptr, 0, 0,
                                  out.raw()),
            0);
  why = tfc::codegen::takeKernelRuntimeError();
  EXPECT_NE(why.find("not dense [panels, K / 2, 48, 2]"), std::string::npos)
      << why;
  // A block wider than the panels.
  Tensor wide(DT::F32, {4, 96});
  EXPECT_NE(tfc_panel_matmul_bf16(a40.raw(), p.raw(), 40, 96, nullptr, 0, 0,
                                  wide.raw()),
            0);
  why = tfc::codegen::takeKernelRuntimeError();
  EXPECT_NE(why.find("not within the panels"), std::string::npos) << why;
  // f32 activations.
  Tensor a32(DT::F32, {4, 40});
  EXPECT_NE(tfc_panel_matmul_bf16(a32.raw(), p.raw(), 40, 48, nullptr, 0, 0,
                                  out.raw()),
            0);
  why = tfc::codegen::takeKernelRuntimeError();
  EXPECT_NE(why.find("expects bf16"), std::string::npos) << why;
}

/// The extern stage refuses buffers it cannot read, with a reason, before
/// touching any tile (on any CPU).
TEST(MatmulKernelTest, AmxStageRefusesBadBuffers) {
  Tensor a(DT::BF16, {4, 40}), p(DT::BF16, {1, 20, 48, 2}),
      out(DT::F32, {4, 48});
  EXPECT_NE(
      tfc_amx_matmul_bf16(a.raw(), p.raw(), 40, 48, nullptr, 0, out.raw()), 0);
  std::string why = tfc::codegen::takeKernelRuntimeError();
  EXPECT_NE(why.find("multiple of 32"), std::string::npos) << why;
  Tensor a32(DT::BF16, {4, 32}), p32(DT::BF16, {1, 16, 48, 2}),
      wide(DT::F32, {4, 96});
  EXPECT_NE(
      tfc_amx_matmul_bf16(a32.raw(), p32.raw(), 32, 96, nullptr, 0, wide.raw()),
      0);
  why = tfc::codegen::takeKernelRuntimeError();
  EXPECT_NE(why.find("not within the panels"), std::string::npos) << why;
}

/// The fp32 panel stage is in a kernel only where KernelOptions ask for it
/// and it applies (fp32 panels, a static K); building needs no AVX-512.
TEST(MatmulKernelTest, F32PanelStageWhereAsked) {
  auto stmtOf = [](bool stage) {
    tfc::codegen::KernelOptions options;
    options.f32PanelStage = stage;
    return panelProductStmt(64, "tensor<2x64x48xf32>", options);
  };
  std::string with = stmtOf(true);
  EXPECT_NE(with.find(tfc::codegen::kPanelMatmulSymbol), std::string::npos)
      << with.substr(0, 200);
  std::string without = stmtOf(false);
  EXPECT_EQ(without.rfind("error: ", 0), std::string::npos) << without;
  EXPECT_EQ(without.find(tfc::codegen::kPanelMatmulSymbol), std::string::npos);
}

/// How many panels wide the blocks of a panel stage's epilogue are in
/// `stmt` (its loop over a block row's 16-float vectors: 3 per panel), or 0.
int blockPanels(const std::string &stmt) {
  bool one = stmt.find(".xni.xni, 0, 3)") != std::string::npos;
  bool two = stmt.find(".xni.xni, 0, 6)") != std::string::npos;
  return one == two ? 0 : one ? 1 : 2;
}

/// Options with the fp32 (or only the bf16) panel stage, its blocks sized
/// for a per-core L2 of `l2` bytes (0: the default).
tfc::codegen::KernelOptions panelStageOptions(int64_t l2, bool bf16 = false) {
  tfc::codegen::KernelOptions options;
  options.f32PanelStage = !bf16;
  options.bf16PanelStage = bf16;
  options.panelL2Bytes = l2;
  return options;
}

/// Whether `stmt` compares a count of A's rows with the constant `m` (the
/// kernels' run-time rules on M).
bool comparesRowsWith(const std::string &stmt, const std::string &m) {
  return stmt.find("(int64)" + m + " < ") != std::string::npos;
}

/// The panel stages' blocks are one panel wide from a K that depends on the
/// per-core L2 (MatmulKernel.cpp, onePanelFromK): at K = 768, fp32 blocks
/// are one panel with a 1 MiB L2 (Zen 5's) and two with 2 MiB (Emerald
/// Rapids', also where the options give none); bf16 (half the bytes) two
/// with 1 MiB. Their row blocks are outermost where A outgrows L2
/// (rowsOuterBlocks). Building needs neither AVX-512 nor a CPU with that L2.
TEST(MatmulKernelTest, PanelBlocksFollowL2) {
  // Kernels built for one L2 are cached apart from those for another.
  tfc::codegen::KernelOptions keyed;
  keyed.f32PanelStage = true;
  keyed.panelL2Bytes = int64_t(1) << 20;
  EXPECT_EQ(keyed.cacheKey(), "f32-panel-stage panel-l2=1048576");
  auto f32Stmt = [](int64_t l2) {
    return panelProductStmt(768, "tensor<2x768x48xf32>", panelStageOptions(l2));
  };
  std::string mib1 = f32Stmt(int64_t(1) << 20),
              mib2 = f32Stmt(int64_t(2) << 20);
  EXPECT_EQ(blockPanels(mib1), 1);
  EXPECT_EQ(blockPanels(mib2), 2);
  EXPECT_EQ(blockPanels(f32Stmt(0)), 2);
  // The row blocks are outermost where A (M x 768 floats) outgrows L2: from
  // M = 342 with 1 MiB, 683 with 2 MiB (the run-time test on M).
  EXPECT_TRUE(comparesRowsWith(mib1, "341"));
  EXPECT_FALSE(comparesRowsWith(mib1, "682"));
  EXPECT_TRUE(comparesRowsWith(mib2, "682"));
  if (!tfc::codegen::supportsBf16Products(tfc::codegen::hostTarget()))
    GTEST_SKIP() << "no AVX512_BF16 on this CPU";
  tfc::codegen::KernelOptions options =
      panelStageOptions(int64_t(1) << 20, /*bf16=*/true);
  EXPECT_EQ(
      blockPanels(panelProductStmt(768, "tensor<2x384x48x2xbf16>", options)),
      2);
  // K = 1024 (bf16) from 1 MiB, as K = 768 for fp32: one panel.
  EXPECT_EQ(
      blockPanels(panelProductStmt(1024, "tensor<2x512x48x2xbf16>", options)),
      1);
}

/// The panel stages' tiles prefetch their rows of A where A is more than 4
/// times the per-core L2 and the columns are outermost (MatmulKernel.cpp,
/// prefetchRowsOfA): at K = 3072 (never rows outermost), from M = 342 rows
/// with a 1 MiB L2 (12 KiB per row, over 4 MiB), 683 with 2 MiB; bf16 rows
/// (half the bytes) from 683 with 1 MiB. Building needs no AVX-512.
TEST(MatmulKernelTest, PanelStagesPrefetchRowsOfABeyondL2) {
  auto stmtFor = [](int64_t l2, bool bf16) {
    return panelProductStmt(
        3072, bf16 ? "tensor<2x1536x48x2xbf16>" : "tensor<2x3072x48xf32>",
        panelStageOptions(l2, bf16));
  };
  std::string f32Mib1 = stmtFor(int64_t(1) << 20, false);
  EXPECT_TRUE(comparesRowsWith(f32Mib1, "341"));
  EXPECT_FALSE(comparesRowsWith(f32Mib1, "682"));
  EXPECT_TRUE(comparesRowsWith(stmtFor(int64_t(2) << 20, false), "682"));
  if (!tfc::codegen::supportsBf16Products(tfc::codegen::hostTarget()))
    GTEST_SKIP() << "no AVX512_BF16 on this CPU";
  std::string bf16Mib1 = stmtFor(int64_t(1) << 20, true);
  EXPECT_TRUE(comparesRowsWith(bf16Mib1, "682"));
  EXPECT_FALSE(comparesRowsWith(bf16Mib1, "341"));
}

/// The stage's handle to the kernel's result names the result's buffer as
/// Halide named the output Func: a second Func of a name already used in the
/// process is made unique ("name$1"), and a handle by the plain name would
/// not compile (the disk cache compiles kernels whose names repeat).
TEST(MatmulKernelTest, PanelStageResultHandleCompilesUnderARepeatedName) {
  ParsedOp parsed = panelProduct(64, "tensor<2x64x48xf32>");
  tfc::codegen::KernelOptions options;
  options.f32PanelStage = true;
  for (int i = 0; i < 2; ++i) {
    auto kernel = tfc::codegen::buildKernel(
        parsed.op, tfc::codegen::hostTarget(), "tfc_repeated_panel", options);
    ASSERT_TRUE(static_cast<bool>(kernel))
        << llvm::toString(kernel.takeError());
    std::string name = kernel->output.name();
    EXPECT_EQ(name, i == 0 ? "repeated_panel" : "repeated_panel$1");
    auto stmt = tfc::codegen::loweredStmt(*kernel, tfc::codegen::hostTarget());
    ASSERT_TRUE(static_cast<bool>(stmt)) << llvm::toString(stmt.takeError());
    EXPECT_NE(stmt->find("(void *)" + name + ".buffer"), std::string::npos);
    llvm::Error err = tfc::codegen::withHalideErrors([&] {
      kernel->pipeline
          .compile_to_module(kernel->arguments, kernel->name,
                             tfc::codegen::hostTarget())
          .compile_to_buffer();
    });
    EXPECT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
  }
}

/// While counting is on, the panel stages count each tile they run (8 rows
/// by one panel over all of K) by K and kind, with its FLOPs and a positive
/// time; nothing while it is off.
TEST(MatmulKernelTest, PanelStagesCountTheirTiles) {
  if (!tfc::codegen::hostHasF32PanelStage())
    GTEST_SKIP() << "no AVX-512F in this process";
  // 20 rows: tiles of rows 0-7 (a block's first), 8-15 and 16-19 (cut).
  Tensor a = Tensor(DT::F32, {20, 40}).random(-1, 1, 7);
  Tensor p = Tensor(DT::F32, {1, 40, 48}).random(-1, 1, 8);
  Tensor out(DT::F32, {20, 48});
  auto product = [&] {
    return tfc_panel_matmul_f32(a.raw(), p.raw(), 40, 48, nullptr, 0, 0,
                                out.raw());
  };
  tfc::codegen::startPanelTileCounts();
  ASSERT_EQ(product(), 0);
  std::vector<tfc::codegen::PanelTileCount> counts =
      tfc::codegen::stopPanelTileCounts();
  ASSERT_EQ(counts.size(), 2u);
  for (const tfc::codegen::PanelTileCount &c : counts) {
    EXPECT_EQ(c.k, 40);
    EXPECT_FALSE(c.bf16);
    EXPECT_EQ(c.tiles, c.first ? 1u : 2u);
    EXPECT_DOUBLE_EQ(c.flops, 2.0 * 8 * 48 * 40 * c.tiles);
    EXPECT_GT(c.seconds, 0);
  }
  EXPECT_TRUE(counts[1].first);
  // The product itself, as the stage computed it while counted.
  expectClose(out, [&](const Index &i) -> double {
    double sum = 0;
    for (int64_t k = 0; k < 40; ++k)
      sum += double(a.get({i[0], k})) * p.get({0, k, i[1]});
    return sum;
  });
  // Off: a second call adds nothing to the counts.
  ASSERT_EQ(product(), 0);
  counts = tfc::codegen::stopPanelTileCounts();
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].tiles + counts[1].tiles, 3u);
  // Starting again starts from zero.
  tfc::codegen::startPanelTileCounts();
  EXPECT_TRUE(tfc::codegen::stopPanelTileCounts().empty());
}

/// The fp32 panel stage refuses buffers it cannot read, with a reason,
/// before reading them (on any CPU).
TEST(MatmulKernelTest, F32PanelStageRefusesBadBuffers) {
  // Panels of another K than the one passed.
  Tensor a(DT::F32, {4, 40}), p(DT::F32, {1, 32, 48}), out(DT::F32, {4, 48});
  EXPECT_NE(
      tfc_panel_matmul_f32(a.raw(), p.raw(), 40, 48, nullptr, 0, 0, out.raw()),
      0);
  std::string why = tfc::codegen::takeKernelRuntimeError();
  EXPECT_NE(why.find("not dense [panels, K, 48]"), std::string::npos) << why;
  // A block wider than the panels.
  Tensor p40(DT::F32, {1, 40, 48}), wide(DT::F32, {4, 96});
  EXPECT_NE(tfc_panel_matmul_f32(a.raw(), p40.raw(), 40, 96, nullptr, 0, 0,
                                 wide.raw()),
            0);
  why = tfc::codegen::takeKernelRuntimeError();
  EXPECT_NE(why.find("not within the panels"), std::string::npos) << why;
  // bf16 activations.
  Tensor a16(DT::BF16, {4, 40});
  EXPECT_NE(tfc_panel_matmul_f32(a16.raw(), p40.raw(), 40, 48, nullptr, 0, 0,
                                 out.raw()),
            0);
  why = tfc::codegen::takeKernelRuntimeError();
  EXPECT_NE(why.find("expects f32"), std::string::npos) << why;
}

/// A shape-generic product on panels (K, panel count and N read at run
/// time) refuses, with a reason, panels of another K than A's and too few
/// panels for the result's columns, rather than reading past them.
TEST(MatmulKernelTest, GenericPanelProductRefusesMismatchedPanels) {
  std::string ir = singleOpFunc(
      "%a: tensor<?x?xf32>, %p: tensor<?x?x48xf32>",
      "tfc.linear %a, %p {packed_n = 96 : i64} : (tensor<?x?xf32>, "
      "tensor<?x?x48xf32>) -> tensor<?x?xf32>",
      "tensor<?x?xf32>");
  ParsedOp parsed = parseOp(ir, /*verify=*/false);
  for (tfc::codegen::KernelCache *with : {&cache(), &noExternCache()}) {
    auto kernel = with->getOrCompile(parsed.op);
    ASSERT_TRUE(static_cast<bool>(kernel))
        << llvm::toString(kernel.takeError());
    for (int64_t rows : {1, 20}) { // the GEMV, the tiles or the stage
      Tensor a(DT::F32, {rows, 64}), otherK(DT::F32, {2, 32, 48}),
          onePanel(DT::F32, {1, 64, 48}), out(DT::F32, {rows, 96});
      for (Tensor *p : {&otherK, &onePanel}) {
        void *args[] = {a.raw(), p->raw(), out.raw()};
        EXPECT_NE(kernel->fn(args), 0) << rows << " rows";
        EXPECT_NE(tfc::codegen::takeKernelRuntimeError(), "");
      }
    }
  }
}

TEST(MatmulKernelTest, RefusesMismatchedContraction) {
  // K is dynamic on both sides: the kernel constrains them to be equal and
  // reports a mismatch instead of reading past B.
  std::string ir =
      singleOpFunc("%a: tensor<?x?xf32>, %b: tensor<?x8xf32>",
                   "tfc.matmul %a, %b : (tensor<?x?xf32>, tensor<?x8xf32>) -> "
                   "tensor<?x8xf32>",
                   "tensor<?x8xf32>");
  ParsedOp parsed = parseOp(ir);
  auto kernel = cache().getOrCompile(parsed.op);
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  Tensor a(DT::F32, {4, 10}), b(DT::F32, {9, 8}), out(DT::F32, {4, 8});
  void *args[] = {a.raw(), b.raw(), out.raw()};
  EXPECT_NE(kernel->fn(args), 0);
  EXPECT_NE(tfc::codegen::takeKernelRuntimeError(), "");
}

} // namespace
