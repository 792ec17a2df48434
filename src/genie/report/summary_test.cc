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

// A run whose machine lost notable CPU time to its hypervisor says so, naming the rank; a quiet
// one (or one recorded before the figure existed) prints only the traffic line.
TEST(SummaryTest, NotableCpuStealIsNamed) {
  auto rank = [](int r, double steal) {
    nlohmann::json j = {{"rank", r}, {"peers", nlohmann::json::array()}};
    if (steal >= 0) j["cpu_steal"] = {{"steal_fraction", steal}, {"ticks", 1000}};
    return j;
  };
  std::ostringstream quiet, old, stolen;
  PrintTraffic(quiet, nlohmann::json::array({rank(0, 0.01), rank(1, 0.02)}));
  EXPECT_EQ(quiet.str().find("steal"), std::string::npos) << quiet.str();
  PrintTraffic(old, nlohmann::json::array({rank(0, -1)}));
  EXPECT_EQ(old.str().find("steal"), std::string::npos) << old.str();
  PrintTraffic(stolen, nlohmann::json::array({rank(0, 0.01), rank(1, 0.27), rank(2, 0.12)}));
  EXPECT_NE(stolen.str().find("# CPU steal: 27.0 % of the CPU time of rank 1's machine"),
            std::string::npos)
      << stolen.str();
}

TEST(SummaryTest, AFaultThatNeverTookEffectIsShownWithWhy) {
  nlohmann::json testbed = {
      {"name", "t"},
      {"topology", "star:2"},
      {"rate_bps", 400000000},
      {"faults",
       {{{"fault", "h1 rate 40mbit"}, {"action", "apply"}, {"at_ns", 1000}},
        {{"fault", "h1 down"},
         {"action", "not applied"},
         {"at_ns", 5000},
         {"reason", "due 100.000 s after the run's start, but the run ended 0.500 s after it"}}}}};
  std::ostringstream out;
  PrintTestbed(out, testbed, 0);
  EXPECT_NE(out.str().find("fault NOT APPLIED: h1 down — due 100.000 s after the run's start"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("apply h1 rate 40mbit"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace genie::report
