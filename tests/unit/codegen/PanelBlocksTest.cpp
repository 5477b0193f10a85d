//===- PanelBlocksTest.cpp - The extern stages' prefetch plans ------------===//
//
// PanelBlocks.h plans, per call of an extern product stage, which lines of
// the kernel's result the stage fetches for writing, and which part of the
// next block's panels it fetches into L2. The plan must walk exactly the
// block's lines of the result (its rows, their cache lines), evenly over the
// call's steps, and plan nothing where it cannot know them; of the panels,
// it takes the call's share (its rows among A's), or all of them where the
// kernel's row blocks are outermost; at a thread's last block of a parallel
// loop, the first block it computed in the loop that followed the last time.
//
//===----------------------------------------------------------------------===//

#include "codegen/PanelBlocks.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <vector>

using tfc::codegen::PanelPrefetch;
using tfc::codegen::planPanelPrefetch;

namespace {

/// A dense f32 buffer description with Halide dims (extent, min) listed
/// innermost first; `host` points into `storage`.
struct Buf {
  std::vector<halide_dimension_t> dims;
  halide_buffer_t b{};
  Buf(const Buf &) = delete;
  Buf(std::vector<std::pair<int, int>> extentsAndMins, void *host) {
    int32_t stride = 1;
    for (auto [extent, min] : extentsAndMins) {
      dims.push_back(halide_dimension_t(min, extent, stride));
      stride *= extent;
    }
    b.host = static_cast<uint8_t *>(host);
    b.type = halide_type_t(halide_type_float, 32);
    b.dimensions = static_cast<int>(dims.size());
    b.dim = dims.data();
  }
};

constexpr int kN = 2304, kM = 300, kBatch = 2, kK = 64;
constexpr long kPanelBytes = long(kK) * 48 * 4;

/// Room for a weight's panels (never read: the plans only point into them),
/// and a few floats more, so that the tests below can start their panels a
/// little apart (each product's guess starts over at its own panels).
alignas(64) float panelStorage[kN * kK + 64];

struct Fixture {
  alignas(64) static inline float result[kBatch * kM * kN];
  const float *panels = panelStorage;
  Buf a{{{kK, 0}, {kM, 0}, {kBatch, 0}}, nullptr};
  Buf res{{{kN, 0}, {kM, 0}, {kBatch, 0}}, result};
  /// A block's product: columns [96, 192) of rows [128, 256) of
  /// `entries` batch entries from `entry`.
  Buf block;
  explicit Fixture(int entries = 1, int entry = 1)
      : block({{96, 96}, {128, 128}, {entries, entry}}, nullptr) {}
  PanelPrefetch plan(const void *r, bool rowsOuter = false) {
    return planPanelPrefetch(&a.b, &block.b, panels, kPanelBytes, kN / 48, 48,
                             r, rowsOuter);
  }
};

TEST(PanelBlocksTest, ResultPrefetchWalksTheBlocksLines) {
  Fixture f;
  PanelPrefetch pf = f.plan(&f.res.b);
  const char *first = reinterpret_cast<const char *>(
      &Fixture::result[(1 * kM + 128) * kN + 96]);
  EXPECT_EQ(pf.result.row, first);
  EXPECT_EQ(pf.result.rowBytes, long(kN) * 4);
  EXPECT_EQ(pf.result.rows, 128);
  EXPECT_EQ(pf.result.lineCount, 6); // 96 floats from a 64-byte boundary
  EXPECT_EQ(pf.result.lines, 128 * 6);
  // Spread over 1000 steps: after 500, about half the rows are left; after
  // all of them, none, and the walk stopped one row past the block.
  pf.spread(1000);
  for (int i = 0; i < 500; ++i)
    pf.result.step();
  EXPECT_NEAR(pf.result.rows, 64, 1);
  for (int i = 0; i < 500; ++i)
    pf.result.step();
  EXPECT_EQ(pf.result.rows, 0);
  EXPECT_EQ(pf.result.row, first + 128L * kN * 4);
}

TEST(PanelBlocksTest, ResultPrefetchOnlyWhereItKnowsTheLines) {
  Fixture f;
  EXPECT_EQ(f.plan(nullptr).result.lines, 0);
  // A result without host memory (a bounds query).
  Buf query{{{kN, 0}, {kM, 0}, {kBatch, 0}}, nullptr};
  EXPECT_EQ(f.plan(&query.b).result.lines, 0);
  // A result that does not hold the block.
  Buf small{{{kN, 0}, {200, 0}, {kBatch, 0}}, Fixture::result};
  EXPECT_EQ(f.plan(&small.b).result.lines, 0);
  // A block of two batch entries.
  Fixture two(2, 0);
  EXPECT_EQ(two.plan(&two.res.b).result.lines, 0);
}

TEST(PanelBlocksTest, PanelPrefetchTakesTheCallsShareOfTheNextBlock) {
  Fixture f;
  // The block after columns [96, 192): panels 4 and 5.
  const char *next = reinterpret_cast<const char *>(f.panels) + 4 * kPanelBytes;
  long bytes = 2 * kPanelBytes;
  // Columns outermost: this call's rows [128, 256) of entry 1 are rows
  // [428, 556) of A's 600.
  PanelPrefetch share = f.plan(nullptr);
  EXPECT_EQ(share.next, next + bytes * 428 / 600 / 64 * 64);
  EXPECT_EQ(share.end, next + bytes * 556 / 600);
  // Rows outermost: all of the next block.
  PanelPrefetch whole = f.plan(nullptr, /*rowsOuter=*/true);
  EXPECT_EQ(whole.next, next);
  EXPECT_EQ(whole.end, next + bytes);
}

/// Where the rows-outer plan of a call on columns [col0, col0 + 96) and rows
/// [row0, row0 + 128) of the panels `panels` starts fetching (null:
/// nothing), in calls on one thread's stage.
const char *fetchedFrom(const float *panels, int col0, int row0 = 0) {
  Buf a{{{kK, 0}, {kM, 0}}, nullptr};
  Buf block{{{96, col0}, {128, row0}}, nullptr};
  return planPanelPrefetch(&a.b, &block.b, panels, kPanelBytes, kN / 48, 48,
                           nullptr, true)
      .next;
}

/// The first panel that fetchedFrom's plan fetches (-1: none).
int guessedPanel(const float *panels, int col0) {
  const char *next = fetchedFrom(panels, col0);
  if (!next)
    return -1;
  return int((next - reinterpret_cast<const char *>(panels)) / kPanelBytes);
}

TEST(PanelBlocksTest, PanelPrefetchGuessesTheThreadsNextBlock) {
  // Each product's own panels (the guess starts over per product).
  const float *first = panelStorage + 16, *second = panelStorage + 32,
              *third = panelStorage + 48;
  // Consecutive blocks (one thread, or a thread's chunk of the loop): the
  // next one; at the product's last block, none.
  EXPECT_EQ(guessedPanel(first, 0), 2);
  EXPECT_EQ(guessedPanel(first, 96), 4);
  EXPECT_EQ(guessedPanel(first, kN - 96), -1);
  // Every other block: two on.
  EXPECT_EQ(guessedPanel(second, 0), 2);
  EXPECT_EQ(guessedPanel(second, 192), 8);
  // Back to an earlier block (a thread that helps with another's chunk from
  // its end, or the next row block where the rows are outermost): the next
  // one.
  EXPECT_EQ(guessedPanel(third, 960), 22);
  EXPECT_EQ(guessedPanel(third, 1056), 24);
  EXPECT_EQ(guessedPanel(third, 960), 22);
}

TEST(PanelBlocksTest, PanelPrefetchLearnsWhichLoopFollows) {
  // Three products' panels, apart from the other tests' (the thread's
  // memory of its loops is kept per product).
  const float *x = panelStorage + 3, *y = panelStorage + 5,
              *z = panelStorage + 7;
  auto panel = [](const float *panels, int index) {
    return reinterpret_cast<const char *>(panels) + index * kPanelBytes;
  };
  // A first run, a block of each product's start and end: at x's last
  // block, nothing (what follows is not known yet).
  EXPECT_EQ(fetchedFrom(x, 0), panel(x, 2));
  EXPECT_EQ(fetchedFrom(x, kN - 96), nullptr);
  EXPECT_EQ(fetchedFrom(y, 0), panel(y, 2));
  EXPECT_EQ(fetchedFrom(y, kN - 96), nullptr);
  // The second run: x's last block fetches the thread's first block of y,
  // and y's last that of x (the run after).
  EXPECT_EQ(fetchedFrom(x, 0), panel(x, 2));
  EXPECT_EQ(fetchedFrom(x, kN - 96), panel(y, 0));
  EXPECT_EQ(fetchedFrom(y, 0), panel(y, 2));
  EXPECT_EQ(fetchedFrom(y, kN - 96), panel(x, 0));
  // A third run in which the thread's last block of x is another (it
  // helped another thread): the guess within x again.
  EXPECT_EQ(fetchedFrom(x, 0), panel(x, 2));
  EXPECT_EQ(fetchedFrom(x, 192), panel(x, 8));
  // Rows outermost (a third product), each row block is a loop of its own:
  // the thread's last block of rows [0, 128) fetches its first of rows
  // [128, 256), and the other way round.
  for (int run = 0; run < 2; ++run) {
    EXPECT_EQ(fetchedFrom(z, 960, 0), panel(z, 22));
    EXPECT_EQ(fetchedFrom(z, 1056, 0), run == 0 ? panel(z, 24) : panel(z, 20));
    EXPECT_EQ(fetchedFrom(z, 960, 128), panel(z, 22));
    EXPECT_EQ(fetchedFrom(z, 1056, 128),
              run == 0 ? panel(z, 24) : panel(z, 20));
  }
}

} // namespace
