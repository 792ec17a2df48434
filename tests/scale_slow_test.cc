// genie run at scale on one machine (issue 17): 512 ranks of a 1 MiB ring all-reduce and 256
// ranks of an all-to-all, started by genie launch, every collective verified, and each rank
// holding sockets only to the peers its plans use — asserted from results.json (the per-rank
// "traffic" records: connected_peers, connections, startup, peak_rss_bytes).
//
// Slow (label "slow"): hundreds of processes on a machine with few cores. The peer timeout is
// generous because on a busy machine the last rank may start tens of seconds after the first;
// what these tests check is that the job connects, runs and verifies, not how fast.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/temp_dir.h"

namespace {

using genie::testing::CliResult;
using genie::testing::FreshDir;
using genie::testing::GenieBinary;
using genie::testing::RunCli;

// Removes a test's folder however the test ends (hundreds of rank streams).
struct RemoveAtEnd {
  std::string dir;
  ~RemoveAtEnd() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The per-rank traffic records of a run, indexed by rank.
std::vector<nlohmann::json> RankRecords(const std::string& results, int world) {
  std::ifstream in(results);
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  std::vector<nlohmann::json> out(static_cast<size_t>(world));
  if (doc.is_discarded() || !doc.contains("provenance")) return out;
  for (const auto& t : doc["provenance"]["traffic"]) {
    const int rank = t.value("rank", -1);
    if (rank >= 0 && rank < world) out[static_cast<size_t>(rank)] = t;
  }
  return out;
}

// The figures every rank must report: sockets, start-up, peak RSS.
void ExpectScaleFigures(const nlohmann::json& t, int rank) {
  ASSERT_TRUE(t.is_object()) << "rank " << rank << " has no traffic record";
  EXPECT_GT(t.value("peak_rss_bytes", 0ull), 0ull) << rank;
  // Memory per rank stays small: no buffers per world rank (a full mesh used to hold 64 KiB
  // of read buffer per connection).
  EXPECT_LT(t.value("peak_rss_bytes", 0ull), 96ull << 20) << rank;
  ASSERT_TRUE(t.contains("startup")) << rank;
  EXPECT_GT(t["startup"].value("process_to_first_op_ns", 0ll), 0ll) << rank;
  EXPECT_GT(t["startup"].value("launch_to_first_op_ns", 0ll), 0ll) << rank;
}

TEST(ScaleSlowTest, FiveHundredTwelveRanksRingAllReduceHoldOnlyNeighbourSockets) {
  constexpr int kRanks = 512;
  constexpr int kReleaseFanOut = 4;
  const std::string dir = FreshDir("scale-ring-512");
  RemoveAtEnd cleanup{dir};
  const std::string g = GenieBinary();
  CliResult gen = RunCli(g + " gen collective -n 512 --size 1MiB -o " + dir + "/w");
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  CliResult r = RunCli(g + " launch -n 512 -- run " + dir + "/w --verify --peer-timeout 300s " +
                       "--output " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.output.substr(0, 20000);
  EXPECT_EQ(Count(r.output, "verify: 1 collectives checked, all correct"), kRanks);
  const auto records = RankRecords(dir + "/out/results.json", kRanks);
  for (int rank = 0; rank < kRanks; ++rank) {
    const nlohmann::json& t = records[static_cast<size_t>(rank)];
    ExpectScaleFigures(t, rank);
    if (!t.is_object()) continue;
    // The ring's two neighbours, and the iteration barrier's release tree (fan-out 4,
    // IterationDriver::kReleaseFanOut): its parent and up to 4 children.
    const int left = (rank + kRanks - 1) % kRanks, right = (rank + 1) % kRanks;
    std::set<int> want = {left, right};
    if (rank > 0) want.insert((rank - 1) / kReleaseFanOut);
    for (int c = rank * kReleaseFanOut + 1; c <= rank * kReleaseFanOut + kReleaseFanOut; ++c) {
      if (c < kRanks) want.insert(c);
    }
    const auto peers = t.value("connected_peers", std::vector<int>{});
    EXPECT_EQ(std::set<int>(peers.begin(), peers.end()), want) << "rank " << rank;
    EXPECT_EQ(t.value("connections", -1), static_cast<int>(want.size())) << "rank " << rank;
  }
}

TEST(ScaleSlowTest, TwoHundredFiftySixRanksDirectAllToAll) {
  constexpr int kRanks = 256;
  const std::string dir = FreshDir("scale-a2a-256");
  RemoveAtEnd cleanup{dir};
  const std::string g = GenieBinary();
  CliResult gen =
      RunCli(g + " gen collective -n 256 --type all_to_all --size 256KiB -o " + dir + "/w");
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  // Direct: every rank sends to every other, so every pair is connected — 32,640 connections
  // on loopback, which a plain bind() of each connecting socket could not get ports for.
  std::ofstream(dir + "/system.json") << R"({"all-to-all-implementation": ["direct"]})";
  CliResult r = RunCli(g + " launch -n 256 -- run " + dir + "/w --system " + dir +
                       "/system.json --verify --peer-timeout 300s --output " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.output.substr(0, 20000);
  EXPECT_EQ(Count(r.output, "verify: 1 collectives checked, all correct"), kRanks);
  const auto records = RankRecords(dir + "/out/results.json", kRanks);
  for (int rank = 0; rank < kRanks; ++rank) {
    const nlohmann::json& t = records[static_cast<size_t>(rank)];
    ExpectScaleFigures(t, rank);
    if (!t.is_object()) continue;
    EXPECT_EQ(t.value("connections", -1), kRanks - 1) << "rank " << rank;
  }
}

}  // namespace
