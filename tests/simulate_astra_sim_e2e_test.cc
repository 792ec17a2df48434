// genie simulate against ASTRA-sim's analytical backend, number for number: the shipped
// ASTRA-sim inputs (REFERENCE §2 figures), halving-doubling and double-binary-tree on a Switch
// (both network models), and the remote-memory queues.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/paths.h"
#include "tests/support/simulate_cli.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

TEST(SimulateAstraSim, Ring4ChunksBothModels) {
  const std::string cfg = " --system " + Data("astra-sim-configs/Ring_4chunks.json") +
                          " --network " + Data("astra-sim-configs/Ring_8npus.yml");
  ExpectEveryRank(AllReduce8() + cfg + " --network-model unaware", 8, 64440);
  ExpectEveryRank(AllReduce8() + cfg + " --network-model aware", 8, 64440);
}

TEST(SimulateAstraSim, Ring4ChunksSlowLocalMemory) {
  auto j = nlohmann::json::parse(std::ifstream(Data("astra-sim-configs/Ring_4chunks.json")));
  j["local-mem-bw"] = 50;
  const std::string dir = FreshDir("membw50");
  std::ofstream(dir + "/system.json") << j.dump(2);
  const std::string cfg =
      " --system " + dir + "/system.json --network " + Data("astra-sim-configs/Ring_8npus.yml");
  ExpectEveryRank(AllReduce8() + cfg, 8, 117780);
  ExpectEveryRank(AllReduce8() + cfg + " --network-model aware", 8, 117780);
}

TEST(SimulateAstraSim, HgxH100SwitchBothModels) {
  // ASTRA-sim's own option names are accepted too.
  const std::string cfg =
      " --system-configuration " + Data("astra-sim-configs/HGX-H100-validated.json") +
      " --network-configuration " + Data("astra-sim-configs/HGX-H100-validated.yml");
  ExpectEveryRank("--workload-configuration " + AllReduce8() + cfg, 8, 55222);
  ExpectEveryRank("--workload-configuration " + AllReduce8() + cfg + " --network-model aware", 8,
                  57426);
}

// Halving-doubling on a Switch, as ASTRA-sim runs it (HalvingDoubling.cc, PacketBundle.cc):
// log2(N) exchanges of S/2, S/4, ... with the partner at distance 1, 2, 4, ... (all-reduce:
// then back up), endpoint-delay e before each message and after the chunk, and a reduction
// 3 x floor(bytes / local-mem-bw) charged on every halving message but the first, on that
// message's own size; the last halving receive is not charged. Ring_4chunks.json: 4 chunks
// one after the other, e = 10 ns, local-mem-bw 1600. Switch: one message costs
// floor(2 x 500 + b / 53.687) unaware, 2 x floor(500 + b / 53.687) aware (two hops).
// Per chunk (S = 256 KiB, s_k = S / 2^(k+1)):
//   all-reduce:      (2 log2 N + 1) e + 2 sum_k T(s_k) + sum_{k>0} R(s_k)
//   reduce-scatter:  (log2 N + 1) e + sum_k T(s_k) + sum_{k>0} R(s_k)
// e.g. 8 ranks unaware: 4 x (70 + 2 x (3441 + 2220 + 1610) + 120 + 60) = 59,168 ns.
std::string HalvingDoublingSystem() {
  auto j = nlohmann::json::parse(std::ifstream(Data("astra-sim-configs/Ring_4chunks.json")));
  j["all-reduce-implementation"] = {"halvingDoubling"};
  j["reduce-scatter-implementation"] = {"halvingDoubling"};
  const std::string path = FreshDir("hd") + "/system.json";
  std::ofstream(path) << j.dump(2);
  return path;
}

TEST(SimulateAstraSim, HalvingDoublingAllReduceOnSwitchBothModels) {
  const std::string sys = HalvingDoublingSystem();
  const struct {
    int ranks;
    long long unaware, aware;
  } cases[] = {{4, 45968, 75256}, {8, 59168, 93336}, {16, 69808, 106416}};
  for (const auto& c : cases) {
    const std::string args = Data("traces/astra-sim/microbenchmarks/all_reduce/" +
                                  std::to_string(c.ranks) + "npus_1MB") +
                             " --system " + sys + " --network " + SwitchNetwork(c.ranks);
    ExpectEveryRank(args + " --network-model unaware", c.ranks, c.unaware);
    ExpectEveryRank(args + " --network-model aware", c.ranks, c.aware);
  }
}

TEST(SimulateAstraSim, HalvingDoublingReduceScatterOnSwitchBothModels) {
  const std::string sys = HalvingDoublingSystem();
  const std::string rs4 = FreshDir("rs4") + "/rs";
  CliResult gen = RunCli(GenieBinary() +
                         " gen collective --type reduce_scatter --size 1MiB --ranks 4 -o " + rs4);
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const struct {
    int ranks;
    std::string workload;
    long long unaware, aware;
  } cases[] = {
      {4, rs4, 23244, 37888},
      {8, Data("traces/astra-sim/microbenchmarks/reduce_scatter/8npus_1MB"), 29964, 47048},
      {16, Data("traces/astra-sim/microbenchmarks/reduce_scatter/16npus_1MB"), 35344, 53648}};
  for (const auto& c : cases) {
    const std::string args =
        c.workload + " --system " + sys + " --network " + SwitchNetwork(c.ranks);
    ExpectEveryRank(args + " --network-model unaware", c.ranks, c.unaware);
    ExpectEveryRank(args + " --network-model aware", c.ranks, c.aware);
  }
}

// Double binary tree as ASTRA-sim runs it (DoubleBinaryTreeTopology.cc, BinaryTree.cc,
// DoubleBinaryTreeAllReduce.cc, PacketBundle.cc, MemBus.cc with model-shared-bus 0). Two trees
// numbered in order: "max" = members 0..N-2 as a full tree (root N/2-1) under root N-1;
// "min" = root 0 over members 1..N-1 (full-tree root N/2). A rank's streams take max, min, max,
// min (Ring_4chunks.json: 4 chunks, 1 active, LIFO order 0,3,2,1 — still alternating). Each
// chunk (S = 256 KiB) goes whole up its tree and down. With e = 10 (endpoint-delay), R =
// 3 x floor(S / 1600) = 489 (reduction), T = one message on the Switch (unaware
// floor(2 x 500 + S / 53.687) = 5,882; aware 2 x floor(500 + 4,882.8) = 10,764 alone, and the
// uplink and the switch port serialize two messages 4,882 ns apart):
//   leaf:   sends at its start + e; finishes when the parent's message arrives, + e.
//   inner:  sends up at (later child's arrival, or its own start if later) + e + R; when the
//           parent's message arrives, + e + R, sends left then right and finishes at once.
//   root:   child's arrival (or its start) + e + R: sends down, finishes at once.
// A rank starts its next chunk when it finished the previous one. 4 ranks, unaware:
//   chunk 0 (max: 3 <- 1 <- {0, 2}): leaves send at 10, arrive 5,892; 1 sends up at 6,391,
//     3 gets it at 12,273, sends at 12,772 (3 done); 1 gets it 18,654, sends 19,153 (1 done);
//     0 and 2 get it at 25,035, done 25,045.
//   chunk 3 (min: 0 <- 2 <- {1, 3}): 3 sends at 12,782 (arrives 18,664), 1 at 19,163
//     (arrives 25,045); 2 starts at 25,045 with both there, sends up 25,544; 0 gets it 31,426,
//     done 31,925; 2 gets it back 37,807, done 38,306; 1 and 3 done 44,198.
//   chunks 2 (max) and 1 (min) the same way from those starts: 0 done 70,231, 2 76,612,
//     1 and 3 82,504 — rank 0, the last tree's root, first; the leaves last.
// 8 and 16 ranks follow from the same rules (a level more per doubling). Aware: the same, with
// each message store-and-forwarded over the uplink and the switch port (ASTRA-sim's Link: a
// message starts at a whole ns, reaches the switch floor(500 + 4,882.8125) = 5,382 ns later and
// frees the link after 4,882). An inner node's two children's messages meet at its port and
// its two messages down share its uplink: the second starts at the whole ns the first frees
// the link, 4,882 ns after it, and arrives 4,882 ns later. And a rank that finished a chunk
// by sending down may find its uplink still busy with those sends when its next chunk sends.
// 4 ranks, aware:
//   chunk 0 (max): 0 and 2 send at 10 and meet at 1's port: 1 has 0's at 10,774 and 2's at
//     15,656; 1 sends up at 16,155, 3 has it at 26,919 and sends back at 27,418 (3 done); 1
//     has it at 38,182 and at 38,681 sends to 0 (arrives 49,445, 0 done 49,455) and to 2,
//     whose message starts when the uplink frees at 43,563 (arrives 54,327, 2 done 54,337).
//   chunk 3 (min): 3's send at 27,428 waits for its uplink (its message to 1, until 32,300)
//     and reaches 2 at 43,064; 1's at 38,691 waits behind both its messages down (until
//     48,445) and reaches 2 at 59,209; 2 sends up at 59,708, 0 has it at 70,472 and sends
//     back at 70,971 (0 done); 2 has it at 81,735 and sends down at 82,234.
//   chunks 2 (max) and 1 (min) the same way from there.
// Every rank: 158,077 / 180,114 / 169,340 / 184,996. (A queued message starts at the whole ns;
// starting it at the fraction the one before ended, 0.8125 ns per 256 KiB, as genie does for
// the pieces of --slice, gives 7 to 17 ns more: docs/simulation.md "Fractions of a ns".)
// 8 and 16 ranks: from an independent event-level model of ASTRA-sim's state machine and Link.
std::string DoubleBinaryTreeSystem() {
  auto j = nlohmann::json::parse(std::ifstream(Data("astra-sim-configs/Ring_4chunks.json")));
  j["all-reduce-implementation"] = {"doubleBinaryTree"};
  const std::string path = FreshDir("dbt") + "/system.json";
  std::ofstream(path) << j.dump(2);
  return path;
}

void ExpectPerRank(const std::string& args, const std::vector<long long>& cycles) {
  CliResult r = RunCli(Simulate(args + " --all-ranks"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lines = SysLines(r.output);
  ASSERT_EQ(lines.size(), cycles.size()) << r.output;
  for (const auto& [rank, te] : lines) {
    EXPECT_EQ(te.first, cycles[static_cast<size_t>(rank)]) << "rank " << rank << "\n" << args;
    EXPECT_EQ(te.second, te.first) << "rank " << rank << ": no compute, so all is exposed";
  }
}

TEST(SimulateAstraSim, DoubleBinaryTreeAllReduceOnSwitchBothModels) {
  const std::string sys = DoubleBinaryTreeSystem();
  const struct {
    int ranks;
    std::vector<long long> unaware, aware;
  } cases[] = {
      {4, {70231, 82504, 76612, 82504}, {158077, 180114, 169340, 184996}},
      {8,
       {114898, 133552, 127660, 133552, 121279, 133552, 127660, 133552},
       {256446, 289746, 278972, 294628, 267709, 294628, 283854, 299510}},
      {16,
       {159565, 184600, 178708, 184600, 172327, 184600, 178708, 184600, 165946, 184600, 178708,
        184600, 172327, 184600, 178708, 184600},
       {354815, 399378, 388604, 404260, 377341, 404260, 393486, 409142, 366078, 404260, 393486,
        409142, 382223, 409142, 398368, 414024}},
  };
  for (const auto& c : cases) {
    const std::string args = Data("traces/astra-sim/microbenchmarks/all_reduce/" +
                                  std::to_string(c.ranks) + "npus_1MB") +
                             " --system " + sys + " --network " + SwitchNetwork(c.ranks);
    ExpectPerRank(args + " --network-model unaware", c.unaware);
    ExpectPerRank(args + " --network-model aware", c.aware);
  }
}

// ASTRA-sim's remote-memory queues (runtime/remote_memory.h) on the shipped traces: every one
// of the 4 ranks loads (or stores) 1,024 B at t = 0. 700 ns + floor(1024 / 50) = 720 ns each.
// PER_NPU: all at once; PER_NODE of 2 NPUs: the second rank of a node waits for the first;
// MEMORY_POOL: one after the other in rank (issue) order.
TEST(SimulateMemory, ShippedRemoteMemTracesQueueAsAstraSimDoes) {
  const std::string dir = FreshDir("memq");
  struct Case {
    std::string json;
    std::vector<long long> finish;
  };
  const std::vector<Case> cases = {
      {R"({"memory-type": "PER_NPU_MEMORY_EXPANSION", "remote-mem-latency": 700,
           "remote-mem-bw": 50})",
       {720, 720, 720, 720}},
      {R"({"memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-latency": 700,
           "remote-mem-bw": 50, "num-nodes": 2, "num-npus-per-node": 2})",
       {720, 1440, 720, 1440}},
      {R"({"memory-type": "MEMORY_POOL", "remote-mem-latency": 700, "remote-mem-bw": 50})",
       {720, 1440, 2160, 2880}},
  };
  for (const char* trace : {"one_remote_mem_load_node", "one_remote_mem_store_node"}) {
    const std::string w = Data(std::string("traces/generated/chakra_generator/") + trace);
    for (size_t i = 0; i < cases.size(); ++i) {
      const std::string mem = WriteFile(dir + "/m" + std::to_string(i) + ".json", cases[i].json);
      for (const char* model : {"unaware", "aware"}) {
        CliResult r = RunCli(Simulate(w + " --network " + SwitchNetwork(4) + " --memory " + mem +
                                      " --network-model " + model));
        ASSERT_EQ(r.exit_code, 0) << r.output;
        auto lines = SysLines(r.output);
        ASSERT_EQ(lines.size(), 4u) << r.output;
        for (const auto& [rank, te] : lines) {
          EXPECT_EQ(te.first, cases[i].finish[rank])
              << trace << " " << cases[i].json << " rank " << rank;
          EXPECT_EQ(te.second, te.first) << "no compute: all exposed";
        }
        if (i == 2) {  // the pool: ranks 1-3 waited 720 + 1,440 + 2,160 ns (said with -v)
          CliResult v = RunCli(GenieBinary() + " -v simulate " + w + " --network " +
                               SwitchNetwork(4) + " --memory " + mem);
          EXPECT_TRUE(
              Has(v.output, "remote memory: 3 accesses waited in MEMORY_POOL's queues, 4320 ns"))
              << v.output;
        }
      }
    }
  }
  // Two NPUs per node but one node for four ranks: refused, naming the file and key.
  const std::string small = WriteFile(dir + "/small.json",
                                      R"({"memory-type": "PER_NODE_MEMORY_EXPANSION",
                                          "remote-mem-bw": 50, "num-nodes": 1,
                                          "num-npus-per-node": 2})");
  CliResult r = RunCli(Simulate(Data("traces/generated/chakra_generator/one_remote_mem_load_node") +
                                " --network " + SwitchNetwork(4) + " --memory " + small));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Has(r.output, small + ": key \"num-nodes\"")) << r.output;
  EXPECT_TRUE(Has(r.output, "give num-nodes >= 2")) << r.output;
}

// Several accesses per rank (`genie gen remote-memory`: 3 independent MEM nodes of 1 KiB on
// each of 4 ranks, 720 ns each). A rank keeps one memory op in flight; when its access ends,
// its next one queues behind those already waiting, so a pool serves r0 r1 r2 r3 r0 r1 ...:
// access j ends at 720 (j + 1), rank r's last (j = 8 + r) at 720 (9 + r). Per node of 2 NPUs:
// r0 r1 r0 r1 r0 r1 on each node. PER_NPU: 3 x 720.
TEST(SimulateMemory, GeneratedConcurrentAccessesQueueAsAstraSimDoes) {
  const std::string dir = FreshDir("memgen");
  for (const char* store : {"", " --store"}) {
    CliResult g = RunCli(GenieBinary() + " gen remote-memory --count 3 --size 1KiB --ranks 4" +
                         store + " -o " + dir + "/m");
    ASSERT_EQ(g.exit_code, 0) << g.output;
    const std::vector<std::pair<std::string, std::vector<long long>>> cases = {
        {R"("PER_NPU_MEMORY_EXPANSION")", {2160, 2160, 2160, 2160}},
        {R"("PER_NODE_MEMORY_EXPANSION", "num-nodes": 2, "num-npus-per-node": 2)",
         {3600, 4320, 3600, 4320}},
        {R"("MEMORY_POOL")", {6480, 7200, 7920, 8640}},
    };
    for (const auto& [type, finish] : cases) {
      const std::string mem =
          WriteFile(dir + "/mem.json", R"({"remote-mem-latency": 700, "remote-mem-bw": 50,
                                           "memory-type": )" +
                                           type + "}");
      CliResult r = RunCli(Simulate(dir + "/m --network " + SwitchNetwork(4) + " --memory " + mem));
      ASSERT_EQ(r.exit_code, 0) << r.output;
      auto lines = SysLines(r.output);
      ASSERT_EQ(lines.size(), 4u) << r.output;
      for (const auto& [rank, te] : lines) {
        EXPECT_EQ(te.first, finish[rank]) << type << store << " rank " << rank;
      }
    }
  }
}

}  // namespace
}  // namespace genie::testing
