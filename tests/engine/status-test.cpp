#include <gtest/gtest.h>

#include "radixchat/status.h"

namespace rc {

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.to_string(), "ok");
}

TEST(Status, CarriesCodeAndMessage) {
  Status s(StatusCode::no_pages, "pool of 16 pages is full");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::no_pages);
  EXPECT_EQ(s.to_string(), "no free KV pages: pool of 16 pages is full");
}

TEST(Result, HoldsValueOrStatus) {
  Result<int> good = 7;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 7);
  Result<int> bad = Status(StatusCode::not_found, "x");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::not_found);
}

}  // namespace rc
