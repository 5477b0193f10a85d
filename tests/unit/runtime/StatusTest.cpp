//===- StatusTest.cpp - tfc::rt::Status and Expected ----------------------===//

#include "runtime/Status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace tfc::rt;

TEST(Status, DefaultIsSuccess) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
  EXPECT_TRUE(Status::success().ok());
}

TEST(Status, ErrorCarriesMessageAndContext) {
  Status s = Status::error("bad thing");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "bad thing");
  EXPECT_EQ(s.withContext("file.bin").message(), "file.bin: bad thing");
  EXPECT_TRUE(Status::success().withContext("x").ok());
}

TEST(Expected, HoldsValueOrError) {
  Expected<int> v = 42;
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(static_cast<bool>(v));
  EXPECT_EQ(*v, 42);
  EXPECT_TRUE(v.status().ok());

  Expected<int> e = Status::error("nope");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.message(), "nope");
}

TEST(Expected, SuccessStatusWithoutValueBecomesError) {
  Expected<int> e = Status::success();
  EXPECT_FALSE(e.ok());
  EXPECT_NE(e.message().find("internal error"), std::string::npos);
}

TEST(Expected, MoveOnlyValues) {
  Expected<std::unique_ptr<int>> p = std::make_unique<int>(7);
  ASSERT_TRUE(p.ok());
  std::unique_ptr<int> taken = p.take();
  EXPECT_EQ(*taken, 7);
}

static Status failsWhen(bool fail) {
  return fail ? Status::error("inner") : Status::success();
}

static Expected<int> chain(bool fail) {
  TFC_RT_RETURN_IF_ERROR(failsWhen(fail));
  return 1;
}

TEST(Expected, ReturnIfErrorPropagates) {
  EXPECT_TRUE(chain(false).ok());
  Expected<int> e = chain(true);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.message(), "inner");
}
