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

TEST(SummaryTest, ComputeFaultsSayWhenAndWhatTheyCostEachRank) {
  nlohmann::json events = {
      {{"fault", "every rank: jitter sd 10% normal seed 1 from iteration 2"}, {"entry", 1},
       {"rank", 0}, {"action", "apply"}, {"iteration", 2}, {"at_ns", 3'000'000'000}},
      {{"fault", "every rank: jitter sd 10% normal seed 1 from iteration 2"}, {"entry", 1},
       {"rank", 1}, {"action", "apply"}, {"iteration", 2}, {"at_ns", 2'500'000'000}},
      {{"fault", "rank 1: stall 2.000 s at iteration 9"}, {"entry", 2}, {"rank", 1},
       {"action", "not applied"}, {"iteration", 0}, {"at_ns", 0},
       {"reason", "iteration 9 was never reached (the run ended after iteration 2)"}}};
  std::vector<record::RankSummary> ranks(3);
  ranks[0] = {1, 0, 0, 10, 1'000'000'000, 0, 0, 0, 0};
  ranks[1] = {1, 1, 10, 20, 1'500'000'000, 0, 0, 500'000'000, 0};
  ranks[2] = {0, 1, 10, 20, 1'000'000'000, 0, 0, 0, 250'000'000};
  std::ostringstream out;
  PrintComputeFaults(out, events, ranks, 500'000'000);
  const std::string s = out.str();
  EXPECT_NE(s.find("compute fault at +2.000 s: apply every rank: jitter sd 10% normal seed 1 from "
                   "iteration 2 (iteration 2, 2 ranks)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("compute fault NOT APPLIED: rank 1: stall 2.000 s at iteration 9 — "
                   "iteration 9 was never reached"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("rank 1: in 1 iteration(s) compute +500.000 ms over the trace's 1.000 s "
                   "(1.500x)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("rank 0: in 1 iteration(s) stalled 250.000 ms"), std::string::npos) << s;
  std::ostringstream none;
  PrintComputeFaults(none, nlohmann::json(), ranks, 0);
  EXPECT_TRUE(none.str().empty());
}

}  // namespace
}  // namespace genie::report
