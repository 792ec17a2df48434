#include "genie/report/bandwidth.h"

#include <gtest/gtest.h>

namespace genie::report {
namespace {

using CT = CollectiveType;

// Each case: Chakra comm_size, n ranks, time; expected nccl-tests algbw and busbw (GB/s).
struct Case {
  CT type;
  Bytes comm_size;
  int n;
  TimeNs t;
  double algbw;
  double busbw;
};

TEST(BandwidthTest, EveryCollectiveTypeByTheNcclTestsRules) {
  const Case cases[] = {
      // all-reduce: S = comm_size, factor 2(n-1)/n. The 1 MiB / 8 rank / 64,440 ns ASTRA-sim
      // figure: 16.2721... GB/s algbw, x 1.75 busbw.
      {CT::kAllReduce, 1048576, 8, 64440, 1048576.0 / 64440.0, 1048576.0 / 64440.0 * 1.75},
      {CT::kAllReduce, 1000000, 4, 1000, 1000.0, 1500.0},
      {CT::kAllReduce, 1000000, 2, 500, 2000.0, 2000.0},
      // all-gather: comm_size is each rank's input, so S = comm_size * n; factor (n-1)/n.
      {CT::kAllGather, 131072, 8, 10000, 104.8576, 91.7504},
      {CT::kAllGather, 250000, 4, 1000, 1000.0, 750.0},
      // reduce-scatter, all-to-all: comm_size is the whole buffer; factor (n-1)/n.
      {CT::kReduceScatter, 1048576, 8, 10000, 104.8576, 91.7504},
      {CT::kReduceScatterBlock, 1048576, 8, 10000, 104.8576, 91.7504},
      {CT::kAllToAll, 1000000, 4, 1000, 1000.0, 750.0},
      // broadcast, reduce: factor 1.
      {CT::kBroadcast, 1000000, 4, 1000, 1000.0, 1000.0},
      {CT::kReduce, 3000000, 8, 2000, 1500.0, 1500.0},
      // gather (per-rank piece, like all-gather) and scatter (whole buffer): factor (n-1)/n.
      {CT::kGather, 250000, 4, 1000, 1000.0, 750.0},
      {CT::kScatter, 1000000, 4, 1000, 1000.0, 750.0},
      // barrier moves no data.
      {CT::kBarrier, 0, 8, 1000, 0.0, 0.0},
      {CT::kBarrier, 4096, 8, 1000, 0.0, 0.0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.type));
    EXPECT_DOUBLE_EQ(AlgBw(c.type, c.comm_size, c.n, c.t), c.algbw);
    EXPECT_DOUBLE_EQ(BusBw(c.type, c.comm_size, c.n, c.t), c.busbw);
  }
}

TEST(BandwidthTest, NcclBytesAndFactors) {
  EXPECT_DOUBLE_EQ(NcclBytes(CT::kAllGather, 1024, 16), 16384.0);
  EXPECT_DOUBLE_EQ(NcclBytes(CT::kAllReduce, 1024, 16), 1024.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(CT::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(BusBwFactor(CT::kAllToAll, 8), 0.875);
  EXPECT_DOUBLE_EQ(BusBwFactor(CT::kAllReduce, 1), 0.0);  // one rank moves nothing
  EXPECT_DOUBLE_EQ(BusBwFactor(CT::kAllReduce, 0), 0.0);
}

TEST(BandwidthTest, ZeroTimeGivesNoFigureRatherThanInfinity) {
  EXPECT_EQ(AlgBw(CT::kAllReduce, 1048576, 8, 0), 0.0);
  EXPECT_EQ(BusBw(CT::kAllReduce, 1048576, 8, -5), 0.0);
  EXPECT_EQ(P2pBw(100, 0), 0.0);
}

TEST(BandwidthTest, RecordedEvents) {
  record::OpEvent coll;
  coll.kind = OpKind::kCollective;
  coll.coll_type = CT::kAllGather;
  coll.size = 131072;
  coll.group_size = 8;
  coll.start = 5000;
  coll.end = 15000;
  EXPECT_DOUBLE_EQ(AlgBw(coll), 104.8576);
  EXPECT_DOUBLE_EQ(BusBw(coll), 91.7504);

  record::OpEvent send;
  send.kind = OpKind::kSend;
  send.size = 1000000;
  send.peer = 1;
  send.start = 0;
  send.end = 4000;
  EXPECT_DOUBLE_EQ(AlgBw(send), 250.0);
  EXPECT_DOUBLE_EQ(BusBw(send), 250.0);
  send.kind = OpKind::kRecv;
  EXPECT_DOUBLE_EQ(BusBw(send), 250.0);

  record::OpEvent comp;
  comp.kind = OpKind::kCompute;
  comp.size = 100;
  comp.end = 10;
  EXPECT_EQ(AlgBw(comp), 0.0);
  EXPECT_EQ(BusBw(comp), 0.0);
}

TEST(FormatBandwidth, ThreeSignificantDigits) {
  // A 1 Gbit/s fabric: 0.115 and 0.125 GB/s no longer both read "0.12".
  EXPECT_EQ(FormatBandwidth(0.115), "0.115");
  EXPECT_EQ(FormatBandwidth(0.1249), "0.125");
  EXPECT_EQ(FormatBandwidth(0.0470), "0.0470");
  EXPECT_EQ(FormatBandwidth(0.00490), "0.00490");
  EXPECT_EQ(FormatBandwidth(1.2), "1.20");
  EXPECT_EQ(FormatBandwidth(47.13), "47.1");
  EXPECT_EQ(FormatBandwidth(118.4), "118");
  EXPECT_EQ(FormatBandwidth(1234.0), "1234");  // whole numbers from 100 on
  EXPECT_EQ(FormatBandwidth(0), "0");
}

}  // namespace
}  // namespace genie::report
