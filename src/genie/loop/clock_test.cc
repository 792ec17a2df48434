#include "genie/loop/clock.h"

#include <gtest/gtest.h>

namespace genie::loop {
namespace {

TEST(ClockTest, ManualClockMovesOnlyWhenAdvanced) {
  ManualClock c(5);
  EXPECT_EQ(c.Now(), 5);
  EXPECT_EQ(c.Now(), 5);
  c.Advance(10);
  EXPECT_EQ(c.Now(), 15);
  c.Advance(-3);  // ignored: time never goes back
  EXPECT_EQ(c.Now(), 15);
}

TEST(ClockTest, MonotonicClockNeverGoesBackAndIsShared) {
  const Clock* c = MonotonicClock::Default();
  EXPECT_EQ(c, MonotonicClock::Default());
  TimeNs prev = c->Now();
  for (int i = 0; i < 1000; ++i) {
    const TimeNs now = c->Now();
    EXPECT_GE(now, prev);
    prev = now;
  }
}

}  // namespace
}  // namespace genie::loop
