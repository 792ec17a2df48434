#include "genie/report/summary.h"

#include <gtest/gtest.h>

#include <sstream>

namespace genie::report {
namespace {

using record::OpEvent;

OpEvent Op(OpKind kind, CollectiveType type, int rank, TimeNs end) {
  OpEvent e;
  e.rank = rank;
  e.iteration = 0;
  e.kind = kind;
  e.coll_type = type;
  e.size = 1'000'000;
  e.group_size = 2;
  e.start = 0;
  e.end = end;
  return e;
}

// The footer's average is over the types whose time is a transfer's: a real send is done once
// the socket buffer holds it, so it is printed but left out; without sends the line is as
// nccl-tests prints it.
TEST(SummaryTest, AvgBusBandwidthLeavesOutSends) {
  const std::vector<record::RankSummary> ranks = {{0, 0, 0, 1'000'000, 0, 0, 0}};
  const OpEvent all_reduce = Op(OpKind::kCollective, CollectiveType::kAllReduce, 0, 1'000'000);
  const OpEvent send = Op(OpKind::kSend, CollectiveType::kAllReduce, 0, 1'000);
  const OpEvent recv = Op(OpKind::kRecv, CollectiveType::kAllReduce, 1, 1'000'000);
  std::ostringstream with_p2p, without;
  PrintSummary(with_p2p, {all_reduce, send, recv}, ranks);
  PrintSummary(without, {all_reduce}, ranks);
  auto footer = [](const std::string& text) { return text.substr(text.find("# Avg bus")); };
  // all_reduce of 2 ranks: busbw = algbw = 1 GB/s; recv: 1 GB/s; send: 1000 GB/s.
  EXPECT_NE(with_p2p.str().find("send"), std::string::npos) << with_p2p.str();
  EXPECT_EQ(footer(with_p2p.str()),
            "# Avg bus bandwidth    : 1.00 GB/s (mean over the types above but send: its recv "
            "times the transfer)\n");
  EXPECT_EQ(footer(without.str()),
            "# Avg bus bandwidth    : 1.00 GB/s (mean over the types above)\n");
}

}  // namespace
}  // namespace genie::report
