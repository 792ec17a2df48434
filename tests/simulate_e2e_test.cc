// genie simulate end to end, on the shipped ASTRA-sim inputs: exact agreement with ASTRA-sim's
// analytical backend (REFERENCE §2 figures), every runnable shipped workload simulates, and the
// result files are well formed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <set>
#include <tuple>
#include <vector>

#include "tests/support/cli.h"

namespace genie::testing {
namespace {

// sys[r] finished, T cycles, exposed communication E cycles.
std::map<int, std::pair<long long, long long>> SysLines(const std::string& out) {
  std::map<int, std::pair<long long, long long>> lines;
  std::regex re(R"(sys\[(\d+)\] finished, (\d+) cycles, exposed communication (\d+) cycles\.)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator();
       ++it) {
    lines[std::stoi((*it)[1])] = {std::stoll((*it)[2]), std::stoll((*it)[3])};
  }
  return lines;
}

std::string Simulate(const std::string& args) { return GenieBinary() + " simulate " + args; }

void ExpectEveryRank(const std::string& args, int ranks, long long cycles) {
  CliResult r = RunCli(Simulate(args));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lines = SysLines(r.output);
  ASSERT_EQ(static_cast<int>(lines.size()), ranks) << r.output;
  for (const auto& [rank, te] : lines) {
    EXPECT_EQ(te.first, cycles) << "rank " << rank;
    EXPECT_EQ(te.second, cycles) << "rank " << rank << ": no compute, so all is exposed";
  }
}

const std::string kAllReduce8 = Data("traces/astra-sim/microbenchmarks/all_reduce/8npus_1MB");

TEST(SimulateAstraSim, Ring4ChunksBothModels) {
  const std::string cfg = " --system " + Data("astra-sim-configs/Ring_4chunks.json") +
                          " --network " + Data("astra-sim-configs/Ring_8npus.yml");
  ExpectEveryRank(kAllReduce8 + cfg + " --network-model unaware", 8, 64440);
  ExpectEveryRank(kAllReduce8 + cfg + " --network-model aware", 8, 64440);
}

TEST(SimulateAstraSim, Ring4ChunksSlowLocalMemory) {
  auto j = nlohmann::json::parse(std::ifstream(Data("astra-sim-configs/Ring_4chunks.json")));
  j["local-mem-bw"] = 50;
  const std::string dir = FreshDir("membw50");
  std::ofstream(dir + "/system.json") << j.dump(2);
  const std::string cfg =
      " --system " + dir + "/system.json --network " + Data("astra-sim-configs/Ring_8npus.yml");
  ExpectEveryRank(kAllReduce8 + cfg, 8, 117780);
  ExpectEveryRank(kAllReduce8 + cfg + " --network-model aware", 8, 117780);
}

TEST(SimulateAstraSim, HgxH100SwitchBothModels) {
  // ASTRA-sim's own option names are accepted too.
  const std::string cfg =
      " --system-configuration " + Data("astra-sim-configs/HGX-H100-validated.json") +
      " --network-configuration " + Data("astra-sim-configs/HGX-H100-validated.yml");
  ExpectEveryRank("--workload-configuration " + kAllReduce8 + cfg, 8, 55222);
  ExpectEveryRank("--workload-configuration " + kAllReduce8 + cfg + " --network-model aware", 8,
                  57426);
}

// A one-dimensional switch network for `ranks` NPUs.
std::string SwitchNetwork(int ranks) {
  const std::string path = FreshDir("net" + std::to_string(ranks)) + "/switch.yml";
  std::ofstream(path) << "topology: [ Switch ]\nnpus_count: [ " << ranks
                      << " ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
  return path;
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
  CliResult gen =
      RunCli(GenieBinary() + " gen collective --type reduce_scatter --size 1MiB --ranks 4 -o " + rs4);
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

// Pieces keep their fractions of a ns: 64-byte slices (1.19 ns each) of four concurrent chunks
// of a direct all-reduce interleave on every link of a Switch of 50 GB/s and 1 ns. Each rank's
// uplink and port carry 2 x 7/8 MiB, 34,179.7 ns at 53.687 B/ns; starting each slice at the
// whole ns would lose 0.19 ns per slice and finish at 31,439 ns, faster than the wire.
TEST(SimulatePhysics, InterleavedSlicesOfConcurrentChunksNeverBeatTheLink) {
  auto j = nlohmann::json::parse(std::ifstream(Data("astra-sim-configs/Ring_4chunks.json")));
  j["active-chunks-per-dimension"] = 4;
  j["all-reduce-implementation"] = {"direct"};
  const std::string dir = FreshDir("slices");
  std::ofstream(dir + "/system.json") << j.dump(2);
  std::ofstream(dir + "/sw8.yml")
      << "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 1.0 ]\n";
  CliResult r = RunCli(Simulate(kAllReduce8 + " --system " + dir + "/system.json --network " +
                                dir + "/sw8.yml --network-model aware --slice 64 --all-ranks"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lines = SysLines(r.output);
  ASSERT_EQ(lines.size(), 8u) << r.output;
  for (const auto& [rank, te] : lines) EXPECT_GE(te.first, 34179) << "rank " << rank;
}

struct Shipped {
  const char* workload;  // relative to the data folder
  int ranks;
  const char* extra;
};

// What gtest prints for GetParam() (in --gtest_list_tests and on failure).
void PrintTo(const Shipped& w, std::ostream* os) {
  *os << w.workload << " (" << w.ranks << " ranks) " << w.extra;
}

// Every shipped workload that `genie inspect` calls runnable (the one-sided SEND/RECV generator
// traces are not: their peer never posts the other half).
const Shipped kShipped[] = {
    {"traces/astra-sim/microbenchmarks/all_gather/4npus_1MB", 4, ""},
    {"traces/astra-sim/microbenchmarks/all_gather/16npus_1MB", 16, ""},
    {"traces/astra-sim/microbenchmarks/reduce_scatter/8npus_1MB", 8, ""},
    {"traces/astra-sim/microbenchmarks/all_to_all/8npus_1MB", 8, ""},
    {"traces/astra-sim/microbenchmarks/all_to_all/16npus_1MB", 16, ""},
    {"traces/astra-sim/microbenchmarks/all_reduce/16npus_1MB", 16, ""},
    {"traces/astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce", 8, ""},
    {"traces/astra-sim/onecomm_allreduce", 64, ""},
    {"traces/astra-sim/resnet_dp", 64, "--default-comm-size 1MiB"},
    {"traces/chakra-tests/feeder_tests_trace", 1, ""},
    {"traces/generated/chakra_generator/ALL_REDUCE", 4, ""},
    {"traces/generated/chakra_generator/ALL_GATHER", 4, ""},
    {"traces/generated/chakra_generator/ALL_TO_ALL", 4, ""},
    {"traces/generated/chakra_generator/REDUCE_SCATTER", 4, ""},
    {"traces/generated/chakra_generator/BROADCAST", 4, ""},
    {"traces/generated/chakra_generator/BARRIER", 4, ""},
    {"traces/generated/chakra_generator/one_comp_node", 4, ""},
    {"traces/generated/chakra_generator/two_comp_nodes_dependent", 4, ""},
    {"traces/generated/chakra_generator/two_comp_nodes_independent", 4, ""},
    {"traces/generated/chakra_generator/one_metadata_node_all_types", 4, ""},
    {"traces/generated/text_converter/Resnet50_DataParallel_4npus_2pass", 4, ""},
    {"traces/generated/text_converter/Resnet50_DataParallel_16npus_1pass", 16, ""},
    {"traces/generated/text_converter/DLRM_HybridParallel_8npus_1pass", 8, ""},
    {"traces/generated/text_converter/MLP_ModelParallel_8npus_1pass", 8, ""},
    {"traces/generated/text_converter/MLP_HybridParallel_Data_Model_8npus_1pass", 8, ""},
    {"traces/generated/text_converter/MLP_HybridParallel_Model_Data_8npus_1pass", 8, ""},
    {"traces/generated/text_converter/microAllReduce_4npus_1pass", 4, ""},
    {"traces/generated/text_converter/microAllToAll_4npus_1pass", 4, ""},
    {"traces/generated/stg/gpt_dp2_tp2_pp2", 8, ""},
    {"traces/generated/stg/moe_dp2_ep4", 8, ""},
    {"traces/generated/stg/llama_fsdp_dp4_tp2", 8, ""},
    {"traces/generated/stg/llama_dp2_tp2_sp2", 8, ""},
    {"traces/generated/pytorch/dlrm_8npus", 8, ""},
};

class SimulateShipped : public ::testing::TestWithParam<Shipped> {};

TEST_P(SimulateShipped, CompletesOnEveryRankInEveryModel) {
  const Shipped& w = GetParam();
  for (const char* model : {"unaware", "aware", "flow"}) {
    CliResult r =
        RunCli(Simulate(Data(w.workload) + " --network " + SwitchNetwork(std::max(2, w.ranks)) +
                        " --network-model " + model + " " + w.extra));
    ASSERT_EQ(r.exit_code, 0) << w.workload << " (" << model << "):\n" << r.output;
    auto lines = SysLines(r.output);
    ASSERT_EQ(static_cast<int>(lines.size()), w.ranks) << r.output;
    for (const auto& [rank, te] : lines) {
      EXPECT_GE(te.first, 0) << "rank " << rank;
      EXPECT_LE(te.second, te.first) << "rank " << rank;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shipped, SimulateShipped, ::testing::ValuesIn(kShipped),
                         [](const auto& param_info) {
                           std::string n = param_info.param.workload;
                           n = n.substr(n.find_last_of('/', n.size() - 1) + 1);
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n + "_" + std::to_string(param_info.index);
                         });

TEST(SimulateErrors, ResnetWithoutCommSizeNamesRankAndNode) {
  CliResult r =
      RunCli(Simulate(Data("traces/astra-sim/resnet_dp") + " --network " + SwitchNetwork(64)));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("comm_size"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--default-comm-size"), std::string::npos) << r.output;
}

TEST(SimulateErrors, MismatchedNetworkSizeIsExplained) {
  CliResult r =
      RunCli(Simulate(kAllReduce8 + " --network " + Data("astra-sim-configs/Ring_4npus.yml")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("npus_count"), std::string::npos) << r.output;
}

TEST(SimulateErrors, SendWithoutDestinationNamesRankAndNode) {
  CliResult r = RunCli(Simulate(Data("traces/generated/chakra_generator/one_comm_send_node") +
                                " --network " + SwitchNetwork(4)));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("rank 0, node 56"), std::string::npos) << r.output;
}

TEST(SimulateErrors, UnmatchedReceiveIsADeadlockReportNamingThePeer) {
  // A 2-rank workload whose rank 0 waits for a message rank 1 never sends.
  const std::string dir = FreshDir("deadlock");
  ASSERT_EQ(RunCli(GenieBinary() + " gen collective --type all_reduce --size 64KiB --ranks 2 -o " +
                   dir + "/w")
                .exit_code,
            0);
  ASSERT_EQ(
      RunCli(GenieBinary() + " gen compute-chain --count 1 --ranks 2 -o " + dir + "/c").exit_code,
      0);
  std::filesystem::copy_file(dir + "/c.1.et", dir + "/w.1.et",
                             std::filesystem::copy_options::overwrite_existing);
  CliResult r = RunCli(Simulate(dir + "/w --network " + SwitchNetwork(2)));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("deadlock"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 0 node"), std::string::npos) << r.output;
}

// results.json and the Chrome trace are written from the op stream with bounded sorts
// (report/streamed_outputs.h): peak RSS must not follow the number of ops. 32 ranks of
// gpt_dp2_tp2_pp2, 1 and 16 iterations (about 3 and 48 MB of output): the in-memory writers
// grew by about 4 bytes of RSS per output byte (190 MB here); the streamed ones stay within
// their 32 MiB sort budget.
TEST(SimulateOutputs, PeakMemoryDoesNotGrowWithTheOpsWritten) {
  if (!std::filesystem::exists("/usr/bin/time")) {
    GTEST_SKIP() << "needs /usr/bin/time (Debian package time) to measure peak RSS";
  }
  const std::string dir = FreshDir("stream-rss");
  CliResult gen =
      RunCli(GenieBinary() + " gen replicate " + Data("traces/generated/stg/gpt_dp2_tp2_pp2") +
             " --copies 4 -o " + dir + "/w/workload");
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  auto peak_kb = [&](int iterations) -> long long {
    const std::string out = dir + "/out" + std::to_string(iterations);
    CliResult r = RunCli("/usr/bin/time -f 'peak-rss-kb %M' " +
                         Simulate(dir + "/w --network " + SwitchNetwork(32) + " --iterations " +
                                  std::to_string(iterations) + " -q --output " + out +
                                  " --trace-out " + out + "/trace.json"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.output, m, std::regex(R"(peak-rss-kb (\d+))"))) << r.output;
    EXPECT_TRUE(std::filesystem::exists(out + "/simulate.jsonl"));
    return m.empty() ? 0 : std::stoll(m[1]);
  };
  const long long one = peak_kb(1), sixteen = peak_kb(16);
  EXPECT_LT(sixteen, one + 48 * 1024) << "1 iteration: " << one << " KiB, 16: " << sixteen;
}

TEST(SimulateOutputs, ChromeTraceAndResultsAreWellFormed) {
  const std::string dir = FreshDir("stg-trace");
  CliResult r = RunCli(Simulate(Data("traces/generated/stg/llama_fsdp_dp4_tp2") + " --network " +
                                SwitchNetwork(8) + " --output " + dir + " --trace-out " + dir +
                                "/trace.json -q"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto trace = nlohmann::json::parse(std::ifstream(dir + "/trace.json"));
  const auto& events = trace.is_array() ? trace : trace.at("traceEvents");
  ASSERT_GT(events.size(), 8u * 440u);
  std::set<int> pids;
  for (const auto& e : events) {
    ASSERT_TRUE(e.contains("ph") && e.contains("ts") && e.contains("pid") && e.contains("tid") &&
                e.contains("name"))
        << e.dump();
    if (e["ph"] == "X") {
      ASSERT_TRUE(e.contains("dur")) << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0);
      pids.insert(e["pid"].get<int>());
    }
  }
  EXPECT_EQ(pids.size(), 8u);  // one process per rank

  auto results = nlohmann::json::parse(std::ifstream(dir + "/results.json"));
  ASSERT_TRUE(results.contains("ranks"));
  EXPECT_EQ(results["ranks"].size(), 8u);
  ASSERT_TRUE(results.contains("collectives"));
  size_t collectives = results["collectives"].size();
  EXPECT_EQ(collectives, 8u * 108u);  // 64 all-gather + 40 reduce-scatter + 4 all-reduce a rank
  for (const auto& c : results["collectives"]) {
    EXPECT_TRUE(c.contains("algbw_gbps") || c.contains("algbw")) << c.dump();
  }
}

// ---- Robustness: extreme inputs are refused by name, never an abort or a silent result ----

// `genie gen collective` into a fresh folder; returns the workload prefix.
std::string GenCollective(const std::string& dir, const std::string& name, const char* type,
                          const std::string& size, int ranks) {
  const std::string prefix = dir + "/" + name;
  CliResult r = RunCli(GenieBinary() + " gen collective --type " + type + " --size " + size +
                       " --ranks " + std::to_string(ranks) + " -o " + prefix);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return prefix;
}

std::string RingNetwork(const std::string& dir, int npus, const std::string& bandwidth,
                        const std::string& latency) {
  return WriteFile(dir + "/net.yml", "topology: [ Ring ]\nnpus_count: [ " + std::to_string(npus) +
                                         " ]\nbandwidth: [ " + bandwidth + " ]\nlatency: [ " +
                                         latency + " ]\n");
}

bool Has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// network.yml values that overflowed simulated time mid-run (an internal check fired, exit
// 134): refused up front, exit 2, naming the file and the key.
TEST(SimulateRobust, ExtremeNetworkValuesAreRefusedNamingFileAndKey) {
  const std::string dir = FreshDir("extreme-net");
  const std::string w = GenCollective(dir, "ar", "all_reduce", "1MiB", 4);
  const std::tuple<const char*, const char*, const char*> cases[] = {
      {"bandwidth", "1e-300", "500"}, {"latency", "50", "1e30"}, {"bandwidth", ".nan", "500"}};
  for (const auto& [key, bw, lat] : cases) {
    const std::string net = RingNetwork(dir, 4, bw, lat);
    for (const char* model : {"unaware", "aware"}) {
      CliResult r = RunCli(Simulate(w + " --network " + net + " --network-model " + model));
      EXPECT_EQ(r.exit_code, 2) << key << " " << model << ":\n" << r.output;
      EXPECT_TRUE(Has(r.output, net + ": key \"" + key + "\"")) << r.output;
    }
  }
}

// Values within the bounds can still overflow together: a 64 TiB all-reduce on a 1 kB/s link
// (serialization), or with a 1 kB/s local memory (reductions). The error names the message or
// rank, the network.yml keys, and the collective node with its size; exit 2, no abort.
TEST(SimulateRobust, TimeOverflowNamesTheInputAndTheCollective) {
  const std::string dir = FreshDir("overflow");
  const std::string w = GenCollective(dir, "huge", "all_reduce", "64TiB", 2);
  const std::string slow = RingNetwork(dir, 2, "1e-6", "500");
  for (const char* model : {"unaware", "aware"}) {
    CliResult r = RunCli(Simulate(w + " --network " + slow + " --network-model " + model));
    EXPECT_EQ(r.exit_code, 2) << model << ":\n" << r.output;
    EXPECT_TRUE(Has(r.output, "simulated time overflows")) << r.output;
    EXPECT_TRUE(Has(r.output, "-byte message from npu")) << r.output;
    EXPECT_TRUE(Has(r.output, slow + "'s keys \"bandwidth\" and \"latency\"")) << r.output;
    EXPECT_TRUE(Has(r.output, "node")) << r.output;
    EXPECT_TRUE(Has(r.output, "all_reduce 64 TiB")) << r.output;
  }
  const std::string fast = WriteFile(dir + "/fast.yml",
                                     "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 1e9 ]\n"
                                     "latency: [ 500 ]\n");
  const std::string sys = WriteFile(dir + "/system.json", R"({"local-mem-bw": 1e-6})");
  // No wire message exceeds 64 GiB (common/wire_limits.h), so one reduction at the slowest
  // accepted memory bandwidth stays in range (~6.5 years); a hundred iterations of it do not.
  CliResult r = RunCli(Simulate(w + " --network " + fast + " --system " + sys + " -n 100"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Has(r.output, "simulated time overflows: rank")) << r.output;
  EXPECT_TRUE(Has(r.output, "all_reduce 64 TiB")) << r.output;
}

// A real run computes its prediction with the same simulator at the end; an overflowing
// network.yml used to abort it there, after the whole run. It is refused before the run.
TEST(SimulateRobust, RunRefusesAnOverflowingNetworkBeforeRunning) {
  const std::string dir = FreshDir("run-overflow");
  const std::string w = GenCollective(dir, "ar", "all_reduce", "64KiB", 2);
  const std::string net = RingNetwork(dir, 2, "50", "1e30");
  CliResult r = RunCli(GenieBinary() + " run " + w + " --network " + net +
                       " --peer-timeout 5s --output " + dir + "/out");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Has(r.output, net + ": key \"latency\"")) << r.output;
}

// --slice N cuts every message into pieces of at most N bytes (collective/planner.cc), sent
// pipelined. Slicing may hide latency but never beats the link: a ring all-reduce on 4 ranks
// puts 6 x size/4 on every link, at 50 GB/s = 53.687 B/ns. A 1 MiB one (floor 29,297 ns) once
// took 3,070 ns with --slice 16 (16-byte messages serialized in 0 ns, all at once). 16-byte
// slices are checked on 256 KiB, whose floor (7,325 ns) is still 2.4x that figure: on 1 MiB
// they took 3 s per model.
TEST(SimulateSlice, SlicedAndUnslicedRespectTheLinkBandwidth) {
  const std::string dir = FreshDir("slice");
  const std::string net = " --network " + Data("astra-sim-configs/Ring_4npus.yml");
  struct Case {
    const char* size;
    long long astra_sim;  // unsliced: 6 x floor(500 + size/4 / 53.687) + 7 x 10
    long long bound;      // ceil(6 x size/4 / 53.687)
    std::vector<const char*> slices;
  };
  const Case cases[] = {{"1MiB", 32362, 29297, {"4KiB", "64KiB"}}, {"256KiB", 10390, 7325, {"16"}}};
  for (const Case& c : cases) {
    const std::string w = GenCollective(dir, std::string("ar") + c.size, "all_reduce", c.size, 4);
    ExpectEveryRank(w + net, 4, c.astra_sim);
    for (const char* slice : c.slices) {
      // The flow model with the link's full rate and no per-message cost, like for like.
      for (const char* model : {"unaware", "aware", "flow --goodput 1 --message-overhead 0"}) {
        CliResult r = RunCli(Simulate(w + net + " --slice " + slice + " --network-model " + model));
        ASSERT_EQ(r.exit_code, 0) << r.output;
        auto lines = SysLines(r.output);
        ASSERT_EQ(lines.size(), 4u) << r.output;
        for (const auto& [rank, te] : lines) {
          EXPECT_GE(te.first, c.bound)
              << c.size << " --slice " << slice << " " << model << ", rank " << rank;
          EXPECT_LE(te.first, 2 * c.astra_sim) << c.size << " --slice " << slice << " " << model;
        }
      }
    }
  }
}

// docs/simulation.md: without --memory, ASTRA-sim's NO_MEMORY_EXPANSION applies and a remote
// memory access is an error. It used to cost 0 ns with exit 0.
TEST(SimulateRobust, MemoryAccessWithoutMemoryModelIsAnErrorNamingTheNode) {
  const std::string w = Data("traces/generated/chakra_generator/one_remote_mem_load_node");
  CliResult r = RunCli(Simulate(w + " --network " + SwitchNetwork(4)));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Has(r.output, "rank 0, node")) << r.output;
  EXPECT_TRUE(Has(r.output, "NO_MEMORY_EXPANSION")) << r.output;
  EXPECT_TRUE(Has(r.output, "no --memory given")) << r.output;
  // With a memory model it runs and charges latency + size / bw.
  const std::string mem = WriteFile(FreshDir("mem") + "/memory.json",
                                    R"({"memory-type": "PER_NPU_MEMORY_EXPANSION",
                                        "remote-mem-latency": 700, "remote-mem-bw": 50})");
  CliResult ok = RunCli(Simulate(w + " --network " + SwitchNetwork(4) + " --memory " + mem));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  auto lines = SysLines(ok.output);
  ASSERT_EQ(lines.size(), 4u) << ok.output;
  for (const auto& [rank, te] : lines) EXPECT_GE(te.first, 700) << "rank " << rank;
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

// model-shared-bus: 1 is ASTRA-sim's LogGP memory bus, which genie does not implement: refused
// with what to do; keys genie reads but does not model are named in warnings.
TEST(SimulateRobust, SharedBusIsRefusedAndUnmodelledKeysAreWarned) {
  const std::string dir = FreshDir("sharedbus");
  const std::string w = GenCollective(dir, "ar", "all_reduce", "64KiB", 2);
  const std::string bus =
      WriteFile(dir + "/bus.json", R"({"model-shared-bus": 1, "L": 10, "o": 5, "g": 5, "G": 0.1})");
  CliResult r = RunCli(Simulate(w + " --network " + SwitchNetwork(2) + " --system " + bus));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Has(r.output, bus + ": key \"model-shared-bus\": 1")) << r.output;
  EXPECT_TRUE(Has(r.output, "set it to 0")) << r.output;
  const std::string odd = WriteFile(dir + "/odd.json",
                                    R"({"boost-mode": 1, "inter-dimension-scheduling":
                                        "offlineGreedy", "replay-only": 1})");
  CliResult ok = RunCli(Simulate(w + " --network " + SwitchNetwork(2) + " --system " + odd));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  for (const char* key : {"boost-mode", "inter-dimension-scheduling", "replay-only"}) {
    EXPECT_TRUE(Has(ok.output, odd + ": key \"" + std::string(key) + "\"")) << key << "\n"
                                                                            << ok.output;
  }
}

// Ranks that disagree on a collective's size: a real run fails (RunErrors.*); the simulation
// used to warn and exit 0. Now an error naming the nodes, both ranks and both sizes, exit 2.
TEST(SimulateRobust, DisagreeingCollectiveSizesAreAnErrorNamingBothRanks) {
  const std::string dir = FreshDir("sim-disagree");
  const std::string w = GenCollective(dir, "w", "all_reduce", "1MiB", 2);
  const std::string x = GenCollective(dir, "x", "all_reduce", "64KiB", 2);
  std::filesystem::copy_file(x + ".1.et", w + ".1.et",
                             std::filesystem::copy_options::overwrite_existing);
  for (const char* model : {"unaware", "aware"}) {
    CliResult r =
        RunCli(Simulate(w + " --network " + SwitchNetwork(2) + " --network-model " + model));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(
        std::regex_search(r.output, std::regex("rank [01] sent \\d+ bytes with tag 0x[0-9a-f]+ "
                                               "but rank [01] posted a receive of \\d+ bytes")))
        << r.output;
    EXPECT_TRUE(Has(r.output, "rank 0 node")) << r.output;
    EXPECT_TRUE(Has(r.output, "rank 1 node")) << r.output;
    EXPECT_TRUE(Has(r.output, "all_reduce 1 MiB")) << r.output;
    EXPECT_TRUE(Has(r.output, "all_reduce 64 KiB")) << r.output;
  }
}

// preferred-dataset-splits: 1e8 grew a run past 3 GB. Absurd counts are refused up front.
TEST(SimulateRobust, AbsurdDatasetSplitsAreRefusedNamingFileAndKey) {
  const std::string dir = FreshDir("splits");
  const std::string w = GenCollective(dir, "ar", "all_reduce", "64KiB", 2);
  for (const char* splits : {"100000", "1e8"}) {
    const std::string sys = WriteFile(
        dir + "/system.json", std::string(R"({"preferred-dataset-splits": )") + splits + "}");
    CliResult r = RunCli(Simulate(w + " --network " + SwitchNetwork(2) + " --system " + sys));
    ASSERT_EQ(r.exit_code, 2) << r.output;  // stop before 1e8 where it is accepted
    EXPECT_TRUE(Has(r.output, sys + ": key \"preferred-dataset-splits\"")) << r.output;
  }
}

// ---- The flow model against the real network (REFERENCE §5) ----

// The 8-host star the measurements were taken on: one bridge, every link shaped to 1 Gbit/s
// (0.1164 GB/s with GB = 2^30 B), described with 30 us per link.
std::string MeasuredStar(const std::string& dir, const std::string& extra = "") {
  return WriteFile(dir + "/star8.yml",
                   "topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 0.1164 ]\n"
                   "latency: [ 30000 ]\n" + extra);
}

// Every rank's step time (all ranks end together in these workloads: the maximum).
long long StepNs(const std::string& args) {
  CliResult r = RunCli(Simulate(args));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  long long step = 0;
  for (const auto& [rank, te] : SysLines(r.output)) step = std::max(step, te.first);
  return step;
}

// A 64 MiB ring all-reduce on the star took 1.009 s measured. Store and forward (aware: the
// transfer paid on both links, 1.880 s) and no sharing (unaware: 0.940 s) are not what a
// switch does; the flow model pays one serialisation at the goodput TCP gets, and the latency
// once: within 5 % of the measurement.
TEST(SimulateFlow, AllReduce64MiBOnTheStarMatchesTheMeasuredStep) {
  const std::string dir = FreshDir("flow64");
  const std::string w = GenCollective(dir, "ar", "all_reduce", "64MiB", 8);
  const std::string net = " --network " + MeasuredStar(dir);
  const double measured = 1.009e9;
  const long long flow = StepNs(w + net + " --network-model flow");
  EXPECT_GE(flow, 0.95 * measured) << "predicted " << flow << " ns";
  EXPECT_LE(flow, 1.05 * measured) << "predicted " << flow << " ns";
  // The ASTRA-sim models stay what they were (REFERENCE §5).
  EXPECT_EQ(StepNs(w + net + " --network-model aware") / 1'000'000, 1880);
  EXPECT_EQ(StepNs(w + net + " --network-model unaware") / 1'000'000, 940);
}

// Training steps where concurrent messages share links (genie run's issue rules: every ready
// communication op starts): measured 1.223 s (gpt_dp2_tp2_pp2) and 2.815 s
// (llama_fsdp_dp4_tp2) on the same star. The flow model is within 5 %.
TEST(SimulateFlow, StgStepsOnTheStarMatchTheMeasuredSteps) {
  const std::string dir = FreshDir("flowstg");
  const std::string net = " --network " + MeasuredStar(dir) + " --comm-streams concurrent";
  for (const auto& [workload, measured] :
       {std::pair{"gpt_dp2_tp2_pp2", 1.223e9}, std::pair{"llama_fsdp_dp4_tp2", 2.815e9}}) {
    const std::string w = Data(std::string("traces/generated/stg/") + workload);
    const long long step = StepNs(w + net + " --network-model flow");
    EXPECT_GE(step, 0.95 * measured) << workload << ": predicted " << step << " ns";
    EXPECT_LE(step, 1.05 * measured) << workload << ": predicted " << step << " ns";
  }
}

// goodput and message_overhead come from the network.yml, flags override them, and a bad
// value is refused naming the file and the key.
TEST(SimulateFlow, ParametersFromTheNetworkFileAndFlags) {
  const std::string dir = FreshDir("flowparams");
  const std::string w = GenCollective(dir, "ar", "all_reduce", "8MiB", 8);
  // 14 ring steps of 1 MiB at 0.1164 GB/s x goodput, each with 60 us of path latency and the
  // message overhead once (the endpoint and reduction delays add ~11 ns a step).
  const double mib_ns = 1048576 / (0.1164 * (1 << 30) / 1e9);
  const double ideal = 14 * (mib_ns + 60'000);
  const double half_rate = 14 * (2 * mib_ns + 61'000);
  const double slack = 14 * 20;
  const std::string plain = " --network " + MeasuredStar(dir) + " --network-model flow";
  EXPECT_NEAR(StepNs(w + plain + " --goodput 1 --message-overhead 0"), ideal, slack);
  EXPECT_NEAR(StepNs(w + plain + " --goodput 0.5 --message-overhead 1000"), half_rate, slack);
  const std::string half = FreshDir("flowhalf");
  const std::string from_file =
      " --network " + MeasuredStar(half, "goodput: 0.5\nmessage_overhead: 1000\n") +
      " --network-model flow";
  EXPECT_NEAR(StepNs(w + from_file), half_rate, slack);
  EXPECT_NEAR(StepNs(w + from_file + " --goodput 1 --message-overhead 0"), ideal, slack);

  const std::string bad = FreshDir("flowbad");
  CliResult r = RunCli(Simulate(w + " --network " + MeasuredStar(bad, "goodput: 1.5\n") +
                                " --network-model flow"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Has(r.output, "star8.yml")) << r.output;
  EXPECT_TRUE(Has(r.output, "goodput")) << r.output;
}

}  // namespace
}  // namespace genie::testing
