#include <gtest/gtest.h>

#include "runtime/stop-matcher.h"

namespace rc::runtime {

TEST(StopMatcher, PassesTextThroughWithoutStops) {
  StopMatcher m({});
  bool stopped = true;
  EXPECT_EQ(m.feed("hello", &stopped), "hello");
  EXPECT_FALSE(stopped);
}

TEST(StopMatcher, CutsAtStopStringSplitAcrossPieces) {
  StopMatcher m({"\nUser:"});
  bool stopped = false;
  std::string shown = m.feed("Sure.\nUs", &stopped);
  EXPECT_EQ(shown, "Sure.");
  EXPECT_FALSE(stopped);
  shown = m.feed("er: hi", &stopped);
  EXPECT_TRUE(stopped);
  EXPECT_EQ(shown, "");
}

TEST(StopMatcher, ReleasesHeldTextWhenItDoesNotMatch) {
  StopMatcher m({"END"});
  bool stopped = false;
  EXPECT_EQ(m.feed("the EN", &stopped), "the ");
  EXPECT_EQ(m.feed("D", &stopped), "");
  EXPECT_TRUE(stopped);

  StopMatcher n({"END"});
  EXPECT_EQ(n.feed("the EN", &stopped), "the ");
  EXPECT_EQ(n.feed("emy", &stopped), "ENemy");
  EXPECT_FALSE(stopped);
  EXPECT_EQ(n.flush(), "");
}

TEST(StopMatcher, EarliestStopWins) {
  StopMatcher m({"bb", "a"});
  bool stopped = false;
  EXPECT_EQ(m.feed("xxbba", &stopped), "xx");
  EXPECT_TRUE(stopped);
}

TEST(StopMatcher, FlushReturnsHeldTail) {
  StopMatcher m({"###"});
  bool stopped = false;
  EXPECT_EQ(m.feed("done #", &stopped), "done ");
  EXPECT_EQ(m.flush(), "#");
}

}  // namespace rc::runtime
