// All-to-all on 2-D and 3-D topologies end to end (issue 20): `genie simulate` runs one
// all-to-all of the whole chunk per dimension, dimension 0 first, each with its own
// all-to-all-implementation, as ASTRA-sim's Sys::generate_collective builds it (Ring: n(n-1)/2
// messages of chunk / n in a chain; direct (AllToAll): n-1 messages of chunk / n at once).
// Exact figures on the congestion-unaware model, derived by hand; on the aware model the 2-D
// figure is the sum of the two 1-D all-to-alls of the whole chunk. `genie run --verify` on
// loopback checks that every rank ends with every other rank's block (the planner forwards
// blocks through local copies between phases) and records the phases in dimension order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/rank_records.h"
#include "tests/support/simulate_cli.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

std::string GenAllToAll(const std::string& dir, const std::string& size, int ranks) {
  const std::string prefix = dir + "/a2a";
  CliResult r = RunCli(GenieBinary() + " gen collective --type all_to_all --size " + size +
                       " --ranks " + std::to_string(ranks) + " -o " + prefix);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return prefix;
}

std::string Network(const std::string& path, const std::string& topology, const std::string& npus,
                    const std::string& bandwidth, const std::string& latency) {
  return WriteFile(path, "topology: [ " + topology + " ]\nnpus_count: [ " + npus +
                             " ]\nbandwidth: [ " + bandwidth + " ]\nlatency: [ " + latency +
                             " ]\n");
}

std::string System(const std::string& path, const std::string& implementation, int chunks) {
  return WriteFile(path, R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
                           "active-chunks-per-dimension": 1, "preferred-dataset-splits": )" +
                             std::to_string(chunks) + R"(, "all-to-all-implementation": [)" +
                             implementation + "]}");
}

constexpr long long kEndpointDelay = 10;

// One message on the congestion-unaware model: floor(hops x latency + bytes / bandwidth).
long long Message(double bytes, double gbps, double latency, int hops) {
  return static_cast<long long>(std::floor(hops * latency + bytes / (gbps * 1073741824.0 / 1e9)));
}

// A phase: `messages` in a chain (ring) or 1 (direct: all at once), each paying the endpoint
// delay, and the phase its closing one.
long long Phase(int chained, long long message) {
  return chained * (kEndpointDelay + message) + kEndpointDelay;
}

TEST(AllToAllMultiDimSimulate, TwoDimensionsUnawareExact) {
  const std::string dir = FreshDir("a2a-2d-sim");
  const double size = 64 * 1024;
  const std::string w = GenAllToAll(dir, "64KiB", 8);
  const std::string net = " --network-model unaware --network " +
                          Network(dir + "/net.yml", "Ring, Switch", "4, 2", "100, 50", "500, 1000");
  // Dimension 0: ring over 4, 6 chained messages of S/4 to the neighbour (1 hop); dimension 1:
  // direct over 2, one message of S/2 through the switch (2 hops).
  const long long p0 = Phase(6, Message(size / 4, 100, 500, 1));
  const long long p1 = Phase(1, Message(size / 2, 50, 1000, 2));
  const long long one =
      SimulatedCycles(w + net + " --system " + System(dir + "/s1.json", R"("ring", "direct")", 1));
  std::printf("2-D all-to-all, 64 KiB, Ring 4 x Switch 2, 1 chunk: %lld ns (= %lld + %lld)\n", one,
              p0, p1);
  EXPECT_EQ(one, p0 + p1);
  // 4 chunks of S/4, one active per dimension: the slower dimension sets the pace.
  const long long q0 = Phase(6, Message(size / 16, 100, 500, 1));
  const long long q1 = Phase(1, Message(size / 8, 50, 1000, 2));
  const long long four =
      SimulatedCycles(w + net + " --system " + System(dir + "/s4.json", R"("ring", "direct")", 4));
  std::printf("  4 chunks: %lld ns (phases %lld and %lld)\n", four, q0, q1);
  EXPECT_EQ(four, q0 >= q1 ? 4 * q0 + q1 : q0 + 4 * q1);
  // Ring on the switch dimension too: n(n-1)/2 = 1 message for n = 2, the same figure.
  EXPECT_EQ(
      SimulatedCycles(w + net + " --system " + System(dir + "/s1r.json", R"("ring", "ring")", 1)),
      p0 + p1);
}

TEST(AllToAllMultiDimSimulate, ThreeDimensionsUnawareExact) {
  const std::string dir = FreshDir("a2a-3d-sim");
  const double size = 48 * 1024;
  const std::string w = GenAllToAll(dir, "48KiB", 12);
  const std::string net = " --network-model unaware --network " +
                          Network(dir + "/net.yml", "Ring, FullyConnected, Switch", "2, 3, 2",
                                  "200, 100, 25", "100, 300, 2000");
  // Ring over 2 (1 message of S/2), direct over 3 (2 messages of S/3 at once, 1 hop each),
  // direct over 2 through the switch (S/2, 2 hops).
  const long long expect = Phase(1, Message(size / 2, 200, 100, 1)) +
                           Phase(1, Message(size / 3, 100, 300, 1)) +
                           Phase(1, Message(size / 2, 25, 2000, 2));
  const long long got = SimulatedCycles(
      w + net + " --system " + System(dir + "/s.json", R"("ring", "direct", "direct")", 1));
  std::printf("3-D all-to-all, 48 KiB, Ring 2 x FullyConnected 3 x Switch 2: %lld ns\n", got);
  EXPECT_EQ(got, expect);
}

TEST(AllToAllMultiDimSimulate, AwareIsTheSumOfTheDimensionsAllToAlls) {
  const std::string dir = FreshDir("a2a-aware");
  const std::string model =
      " --network-model aware --system " + System(dir + "/s.json", R"("ring", "direct")", 1);
  const long long two =
      SimulatedCycles(GenAllToAll(dir, "64KiB", 8) + model + " --network " +
                      Network(dir + "/net.yml", "Ring, Switch", "4, 2", "100, 50", "500, 1000"));
  // Each dimension alone: a 1-D all-to-all of the whole 64 KiB on its own network.
  const std::string d0 = FreshDir("a2a-aware-d0"), d1 = FreshDir("a2a-aware-d1");
  const long long ring =
      SimulatedCycles(GenAllToAll(d0, "64KiB", 4) + " --network-model aware --system " +
                      System(d0 + "/s.json", R"("ring")", 1) + " --network " +
                      Network(d0 + "/net.yml", "Ring", "4", "100", "500"));
  const long long sw =
      SimulatedCycles(GenAllToAll(d1, "64KiB", 2) + " --network-model aware --system " +
                      System(d1 + "/s.json", R"("direct")", 1) + " --network " +
                      Network(d1 + "/net.yml", "Switch", "2", "50", "1000"));
  std::printf("aware: 2-D %lld ns, Ring 4 alone %lld ns + Switch 2 alone %lld ns\n", two, ring, sw);
  EXPECT_GT(ring, 0);
  EXPECT_GT(sw, 0);
  EXPECT_EQ(two, ring + sw);
}

// Each rank's collective op record: the phases of every chunk, in the order they ran.
void ExpectPhasesInDimensionOrder(const std::string& out, int ranks, int chunks,
                                  const std::vector<int>& dims) {
  for (int rank = 0; rank < ranks; ++rank) {
    const std::vector<CollectiveRecord> records = CollectiveRecords(out, rank);
    for (const CollectiveRecord& rec : records) {
      ASSERT_EQ(static_cast<int>(rec.phases_by_chunk.size()), chunks) << rec.line;
      for (const auto& [chunk, phases] : rec.phases_by_chunk) {
        std::vector<int> got;
        for (const auto& p : phases) {
          got.push_back(p["dim"].get<int>());
          EXPECT_EQ(p["op"].get<std::string>(), "all_to_all") << rec.line;
        }
        EXPECT_EQ(got, dims) << "rank " << rank << " chunk " << chunk;
      }
    }
    EXPECT_GE(records.size(), 1u) << "rank " << rank;
  }
}

TEST(AllToAllMultiDimRun, TwoDimensionsVerifiedOnLoopback) {
  const std::string dir = FreshDir("a2a-2d-run");
  const std::string w = GenAllToAll(dir, "96KiB", 8);
  const std::string out = dir + "/out";
  CliResult r = RunCli(GenieBinary() + " run " + w + " --peer-timeout 30s --verify --system " +
                       System(dir + "/s.json", R"("ring", "direct")", 2) + " --network " +
                       Network(dir + "/net.yml", "Ring, Switch", "4, 2", "100, 50", "500, 500") +
                       " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectPhasesInDimensionOrder(out, 8, 2, {0, 1});
}

TEST(AllToAllMultiDimRun, ThreeDimensionsVerifiedOnLoopback) {
  const std::string dir = FreshDir("a2a-3d-run");
  // 12 ranks (3 x 2 x 2) and 25,001 float elements: chunks and blocks of unequal sizes.
  const std::string w = GenAllToAll(dir, "100004", 12);
  const std::string out = dir + "/out";
  CliResult r =
      RunCli(GenieBinary() + " run " + w + " --peer-timeout 30s --verify --system " +
             System(dir + "/s.json", R"("direct", "ring", "direct1")", 3) + " --network " +
             Network(dir + "/net.yml", "FullyConnected, Ring, Switch", "3, 2, 2", "100, 100, 50",
                     "500, 500, 500") +
             " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectPhasesInDimensionOrder(out, 12, 3, {0, 1, 2});
}

// The runner's admission order on a real network: a baseline all-reduce on 3-D in 4 chunks
// under LIFO used to deadlock (two ranks of dimension 1 each admitting a different chunk).
TEST(MultiDimRun, BaselineAllReduceInFourChunksUnderLifoCompletes) {
  const std::string dir = FreshDir("ar-3d-run");
  CliResult g = RunCli(GenieBinary() + " gen collective --type all_reduce --size 100004 --ranks " +
                       "12 -o " + dir + "/ar");
  ASSERT_EQ(g.exit_code, 0) << g.output;
  const std::string sys = WriteFile(
      dir + "/s.json", R"({"scheduling-policy": "LIFO", "active-chunks-per-dimension": 1,
                          "preferred-dataset-splits": 4,
                          "all-reduce-implementation": ["direct", "ring", "direct1"]})");
  const std::string out = dir + "/out";
  CliResult r = RunCli(GenieBinary() + " run " + dir + "/ar --peer-timeout 30s --verify --system " +
                       sys + " --network " +
                       Network(dir + "/net.yml", "FullyConnected, Ring, Switch", "3, 2, 2",
                               "100, 100, 50", "500, 500, 500") +
                       " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace genie::testing
