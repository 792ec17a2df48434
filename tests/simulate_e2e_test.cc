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

TEST_P(SimulateShipped, CompletesOnEveryRankInBothModels) {
  const Shipped& w = GetParam();
  for (const char* model : {"unaware", "aware"}) {
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

}  // namespace
}  // namespace genie::testing
