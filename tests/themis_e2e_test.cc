// Themis inter-dimension scheduling end to end (issue 20): `inter-dimension-scheduling: themis`
// in system.json reaches the planner that `genie simulate` and `genie run` share. Simulated:
// on Ring 4 x 200 GB/s by Switch 4 x 25 GB/s, a 1 MiB all-reduce in 4 chunks beats baseline
// and comes within 10 % of the bound where the busiest dimension never idles. Real: a replay
// records in each rank's stream that the chunks crossed the dimensions in themis's order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/rank_records.h"
#include "tests/support/simulate_cli.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

std::string GenAllReduce(const std::string& dir, const std::string& size, int ranks) {
  const std::string prefix = dir + "/ar";
  CliResult r = RunCli(GenieBinary() + " gen collective --type all_reduce --size " + size +
                       " --ranks " + std::to_string(ranks) + " -o " + prefix);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return prefix;
}

// Ring 4 x 200 GB/s (dimension 0) by Switch 4 x 25 GB/s (dimension 1).
constexpr double kRingGbps = 200, kSwitchGbps = 25;
constexpr double kRingLatency = 100, kSwitchLatency = 1000;  // ns: scale-up and scale-out links
constexpr long long kEndpointDelay = 10;

std::string Network(const std::string& dir) {
  std::ostringstream y;
  y << "topology: [ Ring, Switch ]\nnpus_count: [ 4, 4 ]\nbandwidth: [ " << kRingGbps << ", "
    << kSwitchGbps << " ]\nlatency: [ " << kRingLatency << ", " << kSwitchLatency << " ]\n";
  return WriteFile(dir + "/net.yml", y.str());
}

std::string System(const std::string& dir, const std::string& name, const std::string& extra) {
  return WriteFile(dir + "/" + name + ".json",
                   R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
                       "active-chunks-per-dimension": 1, "preferred-dataset-splits": 4,
                       "all-reduce-implementation": ["ring", "ring"])" +
                       extra + "}");
}

// One message on the congestion-unaware model: floor(hops x latency + bytes / bandwidth).
long long Message(double bytes, double gbps, double latency, int hops) {
  return static_cast<long long>(std::floor(hops * latency + bytes / (gbps * 1073741824.0 / 1e9)));
}

TEST(ThemisSimulate, FasterThanBaselineAndNearTheBusiestDimensionBound) {
  const std::string dir = FreshDir("themis-sim");
  const std::string w = GenAllReduce(dir, "1MiB", 16);
  const std::string net = " --network " + Network(dir) + " --network-model unaware";
  const long long baseline = SimulatedCycles(w + net + " --system " + System(dir, "baseline", ""));
  const long long local =
      SimulatedCycles(w + net + " --system " +
                      System(dir, "local", R"(, "collective-optimization": "localBWAware")"));
  const long long themis =
      SimulatedCycles(w + net + " --system " +
                      System(dir, "themis", R"(, "inter-dimension-scheduling": "themis")"));
  ASSERT_GT(baseline, 0);
  ASSERT_GT(themis, 0);

  // Themis's orders here: dimension 0 stays the lighter one for every chunk (a reduce-scatter
  // on the Switch first would cost it four times the bytes), so every chunk runs RS on the
  // Ring (3 messages of 64 KiB), AR on the Switch (6 messages of 16 KiB), AG on the Ring.
  // The bound: the Switch (the busiest dimension) busy all the time, 4 chunks of its phase
  // back to back, each message paying the endpoint delay, and the phase its closing delay.
  const double chunk = 256 * 1024;
  const long long ring_phase =
      3 * (kEndpointDelay + Message(chunk / 4.0, kRingGbps, kRingLatency, 1)) + kEndpointDelay;
  const long long switch_phase =
      6 * (kEndpointDelay + Message(chunk / 16.0, kSwitchGbps, kSwitchLatency, 2)) + kEndpointDelay;
  const long long bound = std::max(4 * switch_phase, 4 * 2 * ring_phase);
  // Pure bandwidth, no latency: what the Switch's links must carry, 4 x 96 KiB at 25 GB/s.
  const double wire_bound = 4 * 96 * 1024 / (kSwitchGbps * 1073741824.0 / 1e9);
  std::printf(
      "1 MiB all-reduce, 4 chunks, Ring 4x200 GB/s by Switch 4x25 GB/s (unaware):\n"
      "  baseline %lld ns, localBWAware %lld ns, themis %lld ns\n"
      "  bound (Switch busy all the time) %lld ns: themis at %.1f %% above it\n"
      "  bandwidth-only bound %.0f ns\n",
      baseline, local, themis, bound, 100.0 * (themis - bound) / bound, wire_bound);
  EXPECT_LT(themis, baseline);
  EXPECT_LE(themis, bound + bound / 10);
  EXPECT_GE(themis, bound) << "the bound is a lower bound";
}

// Expected themis order of each chunk's reduce-scatter for dims {4, 2} at {25, 200} GB/s:
// chunk 0 ties (dimension 0 first); dimension 1 stays the lighter one after that.
const std::vector<std::vector<int>> kThemisRs = {{0, 1}, {1, 0}, {1, 0}, {1, 0}};

TEST(ThemisRun, RankStreamsRecordChunksCrossingDimensionsInThemisOrder) {
  const std::string dir = FreshDir("themis-run");
  const std::string w = GenAllReduce(dir, "64KiB", 8);
  const std::string net =
      WriteFile(dir + "/net.yml",
                "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 25, 200 ]\n"
                "latency: [ 500, 500 ]\n");
  const std::string sys = System(dir, "themis", R"(, "inter-dimension-scheduling": "themis")");
  for (const bool themis : {true, false}) {
    const std::string out = dir + (themis ? "/themis" : "/baseline");
    CliResult r = RunCli(
        GenieBinary() + " run " + w + " --peer-timeout 20s --verify --system " +
        (themis ? sys : System(dir, "local", R"(, "collective-optimization": "localBWAware")")) +
        " --network " + net + " --output " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (int rank = 0; rank < 8; ++rank) {
      const std::vector<CollectiveRecord> records = CollectiveRecords(out, rank);
      for (const CollectiveRecord& rec : records) {
        ASSERT_EQ(rec.phases_by_chunk.size(), 4u) << rec.line;
        // Per chunk: its phases by start time; each starts after the one before it ended.
        for (const auto& [chunk, phases] : rec.phases_by_chunk) {
          ASSERT_EQ(phases.size(), 3u) << rec.line;
          std::vector<int> dims;
          std::vector<std::string> ops;
          for (size_t i = 0; i < phases.size(); ++i) {
            dims.push_back(phases[i]["dim"].get<int>());
            ops.push_back(phases[i]["op"].get<std::string>());
            if (i > 0) {
              EXPECT_GE(phases[i]["start"].get<long long>(), phases[i - 1]["end"].get<long long>())
                  << "rank " << rank << " chunk " << chunk;
            }
          }
          const std::vector<int> rs =
              themis ? kThemisRs[static_cast<size_t>(chunk)] : std::vector<int>{0, 1};
          EXPECT_EQ(dims, (std::vector<int>{rs[0], rs[1], rs[0]}))
              << (themis ? "themis" : "baseline") << " rank " << rank << " chunk " << chunk;
          EXPECT_EQ(ops, (std::vector<std::string>{"reduce_scatter", "all_reduce", "all_gather"}))
              << "rank " << rank << " chunk " << chunk;
        }
      }
      EXPECT_GE(records.size(), 1u) << "rank " << rank;
    }
  }
}

}  // namespace
}  // namespace genie::testing
