// genie simulate end to end: every runnable shipped workload simulates in every model, the
// result files are well formed and bounded, and bad input (sizes, networks, traces that
// disagree) is refused by name. Agreement with ASTRA-sim: simulate_astra_sim_e2e_test.cc;
// the physics of links and the flow model: simulate_physics_e2e_test.cc.
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
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

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
      RunCli(Simulate(AllReduce8() + " --network " + Data("astra-sim-configs/Ring_4npus.yml")));
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
  GENIE_SKIP_IF(ToolMissing("/usr/bin/time", "time"));
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
std::string RingNetwork(const std::string& dir, int npus, const std::string& bandwidth,
                        const std::string& latency) {
  return WriteFile(dir + "/net.yml", "topology: [ Ring ]\nnpus_count: [ " + std::to_string(npus) +
                                         " ]\nbandwidth: [ " + bandwidth + " ]\nlatency: [ " +
                                         latency + " ]\n");
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

// docs/configs.md (memory.json): without --memory, ASTRA-sim's NO_MEMORY_EXPANSION applies and
// a remote memory access is an error. It used to cost 0 ns with exit 0.
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

// genie simulate re-executes itself once with malloc on transparent huge pages where the
// kernel leaves them to madvise (tools/genie/huge_page_heap.h): the same results, the heap on
// huge pages, and neither when GENIE_HUGE_PAGES=0 or GLIBC_TUNABLES already names the tunable.
TEST(SimulateHeap, OnHugePagesWhereTheKernelLeavesThemToMalloc) {
  const std::string mode = ReadFile("/sys/kernel/mm/transparent_hugepage/enabled");
  if (mode.find("[madvise]") == std::string::npos) {
    GTEST_SKIP() << "the kernel's THP mode is not madvise (" << mode
                 << "): genie simulate leaves the heap as it is";
  }
  const std::string dir = FreshDir("huge-pages");
  const std::string w = GenCollective(dir, "ar", "all_reduce", "1MiB", 64);
  const std::string args = " simulate " + w + " --network " + SwitchNetwork(64) + " -q";
  const std::string line = "simulator heap on transparent huge pages";
  CliResult on = RunCli("env -u GLIBC_TUNABLES " + GenieBinary() + " -v" + args);
  ASSERT_EQ(on.exit_code, 0) << on.output;
  EXPECT_TRUE(Has(on.output, line)) << on.output;
  CliResult off =
      RunCli("env -u GLIBC_TUNABLES GENIE_HUGE_PAGES=0 " + GenieBinary() + " -v" + args);
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_FALSE(Has(off.output, line)) << off.output;
  CliResult user = RunCli("GLIBC_TUNABLES=glibc.malloc.hugetlb=0 " + GenieBinary() + " -v" + args);
  ASSERT_EQ(user.exit_code, 0) << user.output;
  EXPECT_FALSE(Has(user.output, line)) << user.output;
  const long long cycles = SimulatedCycles(w + " --network " + SwitchNetwork(64));
  ASSERT_GT(cycles, 0);
  for (const CliResult* r : {&on, &off, &user}) {
    EXPECT_TRUE(Has(r->output, std::to_string(cycles) + " ns of simulated time")) << r->output;
  }
}

}  // namespace
}  // namespace genie::testing
