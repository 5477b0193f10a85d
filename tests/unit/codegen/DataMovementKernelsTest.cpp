//===- DataMovementKernelsTest.cpp - Copies and index generators ----------===//

#include "CodegenTestUtil.h"

using namespace tfc::test;

namespace {

/// Row-major flat index of `i` in `shape`.
int64_t flatIndex(const Shape &shape, const Index &i) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + i[d];
  return flat;
}

/// The index of flat position `flat` in `shape`.
Index unflatten(const Shape &shape, int64_t flat) {
  Index i(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    i[d] = flat % shape[d];
    flat /= shape[d];
  }
  return i;
}

TEST(TransposeTest, HeadSplitKeepsLastAxis) {
  std::string ir = singleOpFunc(
      "%x: tensor<?x?x3x8xf32>",
      "tfc.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<?x?x3x8xf32> "
      "-> tensor<?x3x?x8xf32>",
      "tensor<?x3x?x8xf32>");
  Tensor x = Tensor(DT::F32, {2, 5, 3, 8}).random(-1, 1, 1);
  Tensor out = runOp(ir, {x}, DT::F32, {2, 3, 5, 8});
  expectClose(
      out,
      [&](const Index &i) {
        return x.get({i[0], i[2], i[1], i[3]});
      },
      0, 0);
}

TEST(TransposeTest, MovesLastAxis) {
  std::string ir = singleOpFunc(
      "%x: tensor<?x?x19xi32>",
      "tfc.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<?x?x19xi32> -> "
      "tensor<19x?x?xi32>",
      "tensor<19x?x?xi32>");
  Tensor x = Tensor(DT::I32, {3, 21, 19}).random(-100, 100, 2);
  Tensor out = runOp(ir, {x}, DT::I32, {19, 3, 21});
  expectClose(
      out,
      [&](const Index &i) {
        return x.get({i[1], i[2], i[0]});
      },
      0, 0);
}

TEST(ReshapeTest, SplitAndMergeHeads) {
  std::string split = singleOpFunc(
      "%x: tensor<?x?x12xf32>",
      "tfc.reshape %x {shape = array<i64: -1, -1, 3, 4>} : tensor<?x?x12xf32> "
      "-> tensor<?x?x3x4xf32>",
      "tensor<?x?x3x4xf32>");
  Tensor x = Tensor(DT::F32, {2, 5, 12}).random(-1, 1, 3);
  Tensor out = runOp(split, {x}, DT::F32, {2, 5, 3, 4});
  expectClose(
      out,
      [&](const Index &i) {
        return x.get({i[0], i[1], i[2] * 4 + i[3]});
      },
      0, 0);

  std::string merge =
      singleOpFunc("%x: tensor<?x?x3x4xf32>",
                   "tfc.reshape %x {shape = array<i64: -1, -1, 12>} : "
                   "tensor<?x?x3x4xf32> -> tensor<?x?x12xf32>",
                   "tensor<?x?x12xf32>");
  Tensor back = runOp(merge, {out}, DT::F32, {2, 5, 12});
  expectClose(
      back, [&](const Index &i) { return x.get(i); }, 0, 0);
}

TEST(ReshapeTest, RegroupingAcrossADynamicDim) {
  // [2, S, 3] -> [S, 6] is a row-major reshape that moves elements across
  // the dynamic dim: the general (flat index) path.
  std::string ir = singleOpFunc(
      "%x: tensor<2x?x3xf32>",
      "tfc.reshape %x {shape = array<i64: -1, 6>} : tensor<2x?x3xf32> -> "
      "tensor<?x6xf32>",
      "tensor<?x6xf32>");
  Tensor x = Tensor(DT::F32, {2, 7, 3}).random(-1, 1, 4);
  Tensor out = runOp(ir, {x}, DT::F32, {7, 6});
  expectClose(
      out,
      [&](const Index &i) {
        return x.get(unflatten(x.shape, flatIndex(out.shape, i)));
      },
      0, 0);
}

TEST(ReshapeTest, StaticRegroupAndScalar) {
  std::string ir = singleOpFunc(
      "%x: tensor<6x4xi64>",
      "tfc.reshape %x {shape = array<i64: 3, 8>} : tensor<6x4xi64> -> "
      "tensor<3x8xi64>",
      "tensor<3x8xi64>");
  Tensor x = Tensor(DT::I64, {6, 4}).random(-9, 9, 5);
  Tensor out = runOp(ir, {x}, DT::I64, {3, 8});
  expectClose(
      out,
      [&](const Index &i) {
        return x.get(unflatten(x.shape, flatIndex(out.shape, i)));
      },
      0, 0);

  std::string toScalar = singleOpFunc(
      "%x: tensor<1x1xf32>",
      "tfc.reshape %x {shape = array<i64>} : tensor<1x1xf32> -> tensor<f32>",
      "tensor<f32>");
  Tensor one(DT::F32, {1, 1});
  one.set({0, 0}, 42);
  Tensor scalar = runOp(toScalar, {one}, DT::F32, {});
  EXPECT_EQ(scalar.get({}), 42);
}

TEST(SliceTest, StaticAxisOfPackedQKV) {
  std::string ir = singleOpFunc(
      "%x: tensor<?x?x24xf32>",
      "tfc.slice %x {axis = 2 : i64, start = 8 : i64, end = 16 : i64} : "
      "tensor<?x?x24xf32> -> tensor<?x?x8xf32>",
      "tensor<?x?x8xf32>");
  Tensor x = Tensor(DT::F32, {2, 3, 24}).random(-1, 1, 6);
  Tensor out = runOp(ir, {x}, DT::F32, {2, 3, 8});
  expectClose(
      out,
      [&](const Index &i) {
        return x.get({i[0], i[1], i[2] + 8});
      },
      0, 0);
}

TEST(SliceTest, DynamicAxis) {
  std::string ir = singleOpFunc(
      "%x: tensor<?x?x5xf32>",
      "tfc.slice %x {axis = 1 : i64, start = 1 : i64, end = 2 : i64} : "
      "tensor<?x?x5xf32> -> tensor<?x1x5xf32>",
      "tensor<?x1x5xf32>");
  Tensor x = Tensor(DT::F32, {3, 4, 5}).random(-1, 1, 7);
  Tensor out = runOp(ir, {x}, DT::F32, {3, 1, 5});
  expectClose(
      out,
      [&](const Index &i) {
        return x.get({i[0], 1, i[2]});
      },
      0, 0);
}

TEST(ConcatTest, KVCacheAppendAlongDynamicAxis) {
  std::string ir = singleOpFunc(
      "%a: tensor<?x2x?x8xf32>, %b: tensor<?x2x?x8xf32>, %c: "
      "tensor<?x2x1x8xf32>",
      "tfc.concat %a, %b, %c {axis = 2 : i64} : (tensor<?x2x?x8xf32>, "
      "tensor<?x2x?x8xf32>, tensor<?x2x1x8xf32>) -> tensor<?x2x?x8xf32>",
      "tensor<?x2x?x8xf32>");
  Tensor a = Tensor(DT::F32, {2, 2, 5, 8}).random(-1, 1, 8);
  Tensor b = Tensor(DT::F32, {2, 2, 3, 8}).random(-1, 1, 9);
  Tensor c = Tensor(DT::F32, {2, 2, 1, 8}).random(-1, 1, 10);
  Tensor out = runOp(ir, {a, b, c}, DT::F32, {2, 2, 9, 8});
  expectClose(
      out,
      [&](const Index &i) {
        if (i[2] < 5)
          return a.get(i);
        if (i[2] < 8)
          return b.get({i[0], i[1], i[2] - 5, i[3]});
        return c.get({i[0], i[1], i[2] - 8, i[3]});
      },
      0, 0);
}

TEST(ConcatTest, LastAxisAndBooleans) {
  std::string ir =
      singleOpFunc("%a: tensor<?x13xi1>, %b: tensor<?x20xi1>",
                   "tfc.concat %a, %b {axis = 1 : i64} : (tensor<?x13xi1>, "
                   "tensor<?x20xi1>) -> tensor<?x33xi1>",
                   "tensor<?x33xi1>");
  Tensor a = Tensor(DT::Bool, {3, 13}).random(0, 1, 11);
  Tensor b = Tensor(DT::Bool, {3, 20}).random(0, 1, 12);
  Tensor out = runOp(ir, {a, b}, DT::Bool, {3, 33});
  expectClose(
      out,
      [&](const Index &i) {
        return i[1] < 13 ? a.get(i) : b.get({i[0], i[1] - 13});
      },
      0, 0);
}

TEST(GatherTest, EmbeddingLookupClampsBadIds) {
  std::string ir = singleOpFunc(
      "%t: tensor<10x24xf32>, %ids: tensor<?x?xi32>",
      "tfc.gather %t, %ids : (tensor<10x24xf32>, tensor<?x?xi32>) -> "
      "tensor<?x?x24xf32>",
      "tensor<?x?x24xf32>");
  Tensor table = Tensor(DT::F32, {10, 24}).random(-1, 1, 13);
  Tensor ids = Tensor(DT::I32, {2, 6}).random(0, 9, 14);
  ids.set({0, 1}, -5);      // below range: row 0
  ids.set({1, 2}, 1000000); // above range: row 9
  Tensor out = runOp(ir, {table, ids}, DT::F32, {2, 6, 24});
  expectClose(
      out,
      [&](const Index &i) {
        int64_t id = std::clamp<int64_t>(int64_t(ids.get({i[0], i[1]})), 0, 9);
        return table.get({id, i[2]});
      },
      0, 0);
}

TEST(GatherTest, I64IdsAndVectorTable) {
  std::string ir = singleOpFunc(
      "%t: tensor<?xi32>, %ids: tensor<?xi64>",
      "tfc.gather %t, %ids : (tensor<?xi32>, tensor<?xi64>) -> tensor<?xi32>",
      "tensor<?xi32>");
  Tensor table = Tensor(DT::I32, {7}).random(-100, 100, 15);
  Tensor ids = Tensor(DT::I64, {30}).random(0, 6, 16);
  // Wraps to a small positive number if narrowed before clamping.
  ids.set({0}, double(int64_t(1) << 32) + 2);
  ids.set({1}, -1);
  Tensor out = runOp(ir, {table, ids}, DT::I32, {30});
  expectClose(
      out,
      [&](const Index &i) {
        int64_t id = std::clamp<int64_t>(int64_t(ids.get(i)), 0, 6);
        return table.get({id});
      },
      0, 0);
}

TEST(PositionsTest, WithoutOffset) {
  std::string ir =
      "func.func @f(%ids: tensor<?x?xi32>) -> tensor<?xi32> {\n"
      "  %p = tfc.positions %ids {axis = 1 : i64} : tensor<?x?xi32> -> "
      "tensor<?xi32>\n"
      "  return %p : tensor<?xi32>\n}\n";
  Tensor ids(DT::I32, {2, 23});
  Tensor out = runOp(ir, {ids}, DT::I32, {23});
  expectClose(
      out, [&](const Index &i) { return double(i[0]); }, 0, 0);
}

TEST(PositionsTest, OffsetIsTheCacheLength) {
  std::string ir =
      "func.func @f(%ids: tensor<?x?xi32>, %past: tensor<?x2x?x8xf32>) -> "
      "tensor<?xi32> {\n"
      "  %p = tfc.positions %ids, %past {axis = 1 : i64, offset_axis = 2 : "
      "i64} : tensor<?x?xi32>, tensor<?x2x?x8xf32> -> tensor<?xi32>\n"
      "  return %p : tensor<?xi32>\n}\n";
  Tensor ids(DT::I32, {1, 3});
  Tensor past(DT::F32, {1, 2, 17, 8});
  Tensor out = runOp(ir, {ids, past}, DT::I32, {3});
  expectClose(
      out, [&](const Index &i) { return double(17 + i[0]); }, 0, 0);
}

TEST(PositionsTest, RefusesAnOutputOfTheWrongLength) {
  std::string ir =
      "func.func @f(%ids: tensor<?x?xi32>) -> tensor<?xi32> {\n"
      "  %p = tfc.positions %ids {axis = 1 : i64} : tensor<?x?xi32> -> "
      "tensor<?xi32>\n"
      "  return %p : tensor<?xi32>\n}\n";
  ParsedOp parsed = parseOp(ir);
  auto kernel = cache().getOrCompile(parsed.op);
  ASSERT_TRUE(static_cast<bool>(kernel)) << llvm::toString(kernel.takeError());
  Tensor ids(DT::I32, {2, 5}), out(DT::I32, {6});
  void *args[] = {ids.raw(), out.raw()};
  EXPECT_NE(kernel->fn(args), 0);
  EXPECT_NE(tfc::codegen::takeKernelRuntimeError(), "");
}

TEST(CausalMaskTest, PrefillIsLowerTriangle) {
  std::string ir = singleOpFunc(
      "%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>",
      "tfc.causal_mask %q, %k {q_axis = 2 : i64, k_axis = 2 : i64} : "
      "(tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x?xi1>",
      "tensor<?x?xi1>");
  Tensor q(DT::F32, {1, 2, 20, 8}), k(DT::F32, {1, 2, 20, 8});
  Tensor out = runOp(ir, {q, k}, DT::Bool, {20, 20});
  expectClose(
      out, [&](const Index &i) { return double(i[1] <= i[0]); }, 0, 0);
}

TEST(CausalMaskTest, MoreKeysThanQueries) {
  // Decode with a cache: 3 new queries see the 10 cached keys and the new
  // ones up to themselves.
  std::string ir = singleOpFunc(
      "%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>",
      "tfc.causal_mask %q, %k {q_axis = 2 : i64, k_axis = 2 : i64} : "
      "(tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x?xi1>",
      "tensor<?x?xi1>");
  Tensor q(DT::F32, {1, 2, 3, 8}), k(DT::F32, {1, 2, 13, 8});
  Tensor out = runOp(ir, {q, k}, DT::Bool, {3, 13});
  expectClose(
      out, [&](const Index &i) { return double(i[1] <= i[0] + (13 - 3)); }, 0,
      0);
  EXPECT_EQ(out.get({0, 10}), 1);
  EXPECT_EQ(out.get({0, 11}), 0);
  EXPECT_EQ(out.get({2, 12}), 1);
}

} // namespace
