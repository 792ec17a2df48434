// MessageMatcher: its pool of payload buffers (unexpected messages of one iteration reuse the
// buffers of the last) and the meeting of receives and messages.
#include "genie/net/matcher.h"

#include <gtest/gtest.h>

#include <cstring>
#include <utility>

namespace genie::net {
namespace {

TEST(MessageMatcherPoolTest, AReturnedBufferIsReusedByBestFit) {
  MessageMatcher m;
  MessageMatcher::Buffer big = m.TakeBuffer(4096), small = m.TakeBuffer(64);
  unsigned char* const small_memory = small.get();
  m.ReturnBuffer(std::move(big));
  m.ReturnBuffer(std::move(small));
  MessageMatcher::Buffer b = m.TakeBuffer(32);
  EXPECT_EQ(b.get(), small_memory);  // not the 4 KiB one
  EXPECT_EQ(b.capacity, 64u);
  MessageMatcher::Buffer c = m.TakeBuffer(100);
  ASSERT_NE(c.get(), nullptr);
  EXPECT_EQ(c.capacity, 4096u);
  MessageMatcher::Buffer d = m.TakeBuffer(100);  // the pool is empty: a new one
  ASSERT_NE(d.get(), nullptr);
  EXPECT_GE(d.capacity, 100u);
}

// Regression (--verify over several iterations crashed): a moved-from buffer kept its capacity,
// was pooled, and came back as "4096 bytes" with no memory behind it.
TEST(MessageMatcherPoolTest, AMovedFromBufferIsEmptyAndNeverHandedOutAgain) {
  MessageMatcher m;
  MessageMatcher::Buffer a = m.TakeBuffer(4096);
  MessageMatcher::Buffer moved = std::move(a);
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): what is left behind
  EXPECT_EQ(a.capacity, 0u);
  MessageMatcher::Buffer assigned;
  assigned = std::move(moved);
  EXPECT_EQ(moved.capacity, 0u);     // NOLINT(bugprone-use-after-move)
  m.ReturnBuffer(std::move(a));      // NOLINT(bugprone-use-after-move)
  m.ReturnBuffer(std::move(moved));  // NOLINT(bugprone-use-after-move)
  MessageMatcher::Buffer b = m.TakeBuffer(4096);
  ASSERT_NE(b.get(), nullptr);
  std::memset(b.get(), 0xab, 4096);  // ASan: the memory is really there
  // Even one that claims a capacity without memory is not pooled.
  MessageMatcher::Buffer hollow;
  hollow.capacity = 4096;
  m.ReturnBuffer(std::move(hollow));
  MessageMatcher::Buffer c = m.TakeBuffer(1);
  ASSERT_NE(c.get(), nullptr);
}

TEST(MessageMatcherTest, AMessageMeetsItsReceiveWhicheverCameFirst) {
  MessageMatcher m;
  const MatchKey k{3, 1, 77};
  // Receive first.
  unsigned char into[8] = {};
  m.AddPosted(k, {into, sizeof(into), 5});
  EXPECT_EQ(m.PostedOn(3, 1), 1);
  auto p = m.MatchArrival(0, k, sizeof(into));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((*p)->cookie, 5u);
  EXPECT_EQ(m.PostedOn(3, 1), 0);
  // Message first: held in a pooled buffer, delivered when the receive is posted.
  MessageMatcher::Arrived a{sizeof(into), true, m.TakeBuffer(sizeof(into))};
  std::memcpy(a.buf.get(), "genie!!", 8);
  m.AddArrived(k, std::move(a));
  EXPECT_EQ(m.arrived_count(), 1u);
  auto held = m.MatchPost(0, k, sizeof(into));
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(held->has_value());
  m.Deliver(std::move(**held), into, sizeof(into));
  EXPECT_STREQ(reinterpret_cast<char*>(into), "genie!!");
  EXPECT_EQ(m.arrived_count(), 0u);
}

TEST(MessageMatcherTest, ASizeMismatchNamesBothRanksAndSizes) {
  MessageMatcher m;
  const MatchKey k{2, 0, 9};
  m.AddArrived(k, {100, true, m.TakeBuffer(100)});
  auto r = m.MatchPost(1, k, 64);
  ASSERT_FALSE(r.ok());
  const std::string msg = r.status().message();
  EXPECT_NE(msg.find("rank 2 sent 100 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 1 posted a receive of 64 bytes"), std::string::npos) << msg;
  EXPECT_EQ(m.arrived_count(), 0u);  // consumed, its buffer pooled again
}

TEST(MessageMatcherTest, AWholeArrivalFillsThePostedReceiveOrIsHeldWithACopy) {
  MessageMatcher m;
  const MatchKey k{1, 2, 7};
  unsigned char into[8] = {};
  m.AddPosted(k, {into, sizeof(into), 11});
  auto p = m.ArriveWhole(0, k, "posted!", 8, 5);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((*p)->cookie, 11u);
  EXPECT_STREQ(reinterpret_cast<char*>(into), "posted!");
  // No receive yet: a copy is held (the sender's buffer may be reused at once), with its
  // remote data and handle; filler arrives as zeros.
  char data[8] = "held!!!";
  auto held = m.ArriveWhole(0, k, data, 8, 42, 3);
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(held->has_value());
  data[0] = 'X';
  auto a = m.MatchPost(0, k, 8);
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->remote_data, 42u);
  EXPECT_EQ((*a)->handle, 3u);
  m.Deliver(std::move(**a), into, sizeof(into));
  EXPECT_STREQ(reinterpret_cast<char*>(into), "held!!!");
  ASSERT_TRUE(m.ArriveWhole(0, k, nullptr, 8, 0).ok());
  auto z = m.MatchPost(0, k, 8);
  ASSERT_TRUE(z.ok() && z->has_value());
  m.Deliver(std::move(**z), into, sizeof(into));
  EXPECT_EQ(into[0], 0);
  // A size mismatch is the same error whichever path found it.
  m.AddPosted(k, {into, 4, 12});
  auto bad = m.ArriveWhole(0, k, data, 8, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("rank 1 sent 8 bytes with tag 7 on channel 2"),
            std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace genie::net
