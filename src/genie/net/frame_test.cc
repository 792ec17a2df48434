#include "genie/net/frame.h"

#include "genie/common/wire_limits.h"
#include "genie/net/transport.h"

#include <gtest/gtest.h>

namespace genie::net {
namespace {

FrameHeader Sample() {
  FrameHeader h;
  h.type = FrameType::kData;
  h.flags = kFlagHasData;
  h.job = JobHash("job-42");
  h.src = 3;
  h.dst = 1;
  h.channel = 2;
  h.imm = 0xdeadbeef;
  h.tag = 0x0102030405060708ULL;
  h.seq = 17;
  h.length = 1 << 20;
  h.offset = 99;
  return h;
}

FrameExpectation Expect() {
  FrameExpectation e;
  e.job = JobHash("job-42");
  e.src = 3;
  e.dst = 1;
  e.world_size = 4;
  e.channel = 2;
  e.channels = 4;
  e.seq = 17;
  e.max_length = 1 << 30;
  return e;
}

TEST(FrameTest, RoundTripsEveryFieldLittleEndian) {
  unsigned char buf[kFrameHeaderBytes];
  EncodeFrame(Sample(), buf);
  EXPECT_EQ(buf[0], 'G');
  EXPECT_EQ(buf[1], 'N');
  EXPECT_EQ(buf[2], 'I');
  EXPECT_EQ(buf[3], 'E');
  EXPECT_EQ(buf[32], 0x08);  // tag, low byte first
  auto h = ParseFrame(buf, Expect());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->src, 3u);
  EXPECT_EQ(h->dst, 1u);
  EXPECT_EQ(h->channel, 2u);
  EXPECT_EQ(h->imm, 0xdeadbeefu);
  EXPECT_EQ(h->tag, 0x0102030405060708ULL);
  EXPECT_EQ(h->seq, 17u);
  EXPECT_EQ(h->length, 1u << 20);
  EXPECT_EQ(h->offset, 99u);
  EXPECT_EQ(h->flags, kFlagHasData);
}

// The planner and inspect keep every message within kMaxWireMessageBytes because that is what
// a receiver accepts in one frame; the two must not drift apart.
TEST(FrameTest, TheTransportsFrameLimitIsTheWireLimit) {
  EXPECT_EQ(TransportOptions{}.max_message_bytes, kMaxWireMessageBytes);
}

TEST(FrameTest, JobHashIsFnv1a) {
  EXPECT_EQ(JobHash(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(JobHash("a"), 0xaf63dc4c8601ec8cULL);
}

// Each corruption must be rejected with a message naming the field.
TEST(FrameTest, RejectsEachWrongField) {
  struct Case {
    const char* name;
    void (*mutate)(FrameHeader&, FrameExpectation&);
    const char* expect_in_message;
  };
  const Case cases[] = {
      {"magic", [](FrameHeader& h, FrameExpectation&) { h.magic = 0x12345678; }, "bad magic"},
      {"version", [](FrameHeader& h, FrameExpectation&) { h.version = 9; }, "version 9"},
      {"type", [](FrameHeader& h, FrameExpectation&) { h.type = static_cast<FrameType>(77); },
       "unknown frame type 77"},
      {"job", [](FrameHeader& h, FrameExpectation&) { h.job = JobHash("other"); }, "job id"},
      {"dst", [](FrameHeader& h, FrameExpectation&) { h.dst = 2; }, "for rank 2"},
      {"src range", [](FrameHeader& h, FrameExpectation& e) { h.src = 9; e.src = -1; },
       "source rank 9 outside"},
      {"src", [](FrameHeader& h, FrameExpectation&) { h.src = 0; }, "claims source rank 0"},
      {"channel range", [](FrameHeader& h, FrameExpectation&) { h.channel = 4; },
       "channel 4 but the job uses 4"},
      {"channel", [](FrameHeader& h, FrameExpectation&) { h.channel = 1; }, "channel 1 on"},
      {"seq", [](FrameHeader& h, FrameExpectation&) { h.seq = 18; }, "sequence 18"},
      {"length", [](FrameHeader&, FrameExpectation& e) { e.max_length = 10; }, "exceeds"},
      {"bye with payload", [](FrameHeader& h, FrameExpectation&) { h.type = FrameType::kBye; },
       "exceeds the limit of 0"},
      {"heartbeat with payload",
       [](FrameHeader& h, FrameExpectation&) { h.type = FrameType::kHeartbeat; },
       "exceeds the limit of 0"},
      {"hello world size",
       [](FrameHeader& h, FrameExpectation&) {
         h.type = FrameType::kHello;
         h.length = 6;
         h.offset = 8;
       },
       "world has 8 ranks"},
  };
  for (const Case& c : cases) {
    FrameHeader h = Sample();
    FrameExpectation e = Expect();
    c.mutate(h, e);
    unsigned char buf[kFrameHeaderBytes];
    EncodeFrame(h, buf);
    auto r = ParseFrame(buf, e);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_NE(r.status().message().find(c.expect_in_message), std::string::npos)
        << c.name << ": " << r.status().message();
  }
}

TEST(FrameTest, EmptyHeartbeatIsValidAndAHeartbeatWithPayloadIsNot) {
  FrameHeader h = Sample();
  h.type = FrameType::kHeartbeat;
  h.flags = 0;
  h.length = 0;
  unsigned char buf[kFrameHeaderBytes];
  EncodeFrame(h, buf);
  auto r = ParseFrame(buf, Expect());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->type, FrameType::kHeartbeat);
  h.length = 1;
  EncodeFrame(h, buf);
  EXPECT_FALSE(ParseFrame(buf, Expect()).ok());
}

TEST(FrameTest, AbortCarriesABoundedReasonAndTheTypeAfterItIsUnknown) {
  FrameHeader h = Sample();
  h.type = FrameType::kAbort;
  h.length = kMaxAbortBytes;
  unsigned char buf[kFrameHeaderBytes];
  EncodeFrame(h, buf);
  EXPECT_TRUE(ParseFrame(buf, Expect()).ok());
  h.length = kMaxAbortBytes + 1;
  EncodeFrame(h, buf);
  EXPECT_FALSE(ParseFrame(buf, Expect()).ok());
  buf[6] = static_cast<unsigned char>(FrameType::kAbort) + 1;
  EXPECT_NE(ParseFrame(buf, Expect()).status().message().find("unknown frame type"), std::string::npos);
}

TEST(FrameTest, AllZeroBytesAreRejected) {
  unsigned char buf[kFrameHeaderBytes] = {};
  EXPECT_FALSE(ParseFrame(buf, Expect()).ok());
}

}  // namespace
}  // namespace genie::net
