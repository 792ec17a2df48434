// genie over the libfabric transport end to end, on loopback with the tcp;ofi_rxm provider:
// `genie launch -n N -- run ... --verify --transport fabric`, two-sided and with --fabric-rma,
// over every collective type and algorithm for N in {2, 3, 4, 8}, a shipped STG workload,
// the custom MSCCL ring and a `genie bench` sweep; a killed rank is named by every other rank
// within --peer-timeout; a provider or domain that is not there is refused at start, naming it.
// Sizes are cheap: these check correctness, bench/fabric_vs_tcp.sh measures speed.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/collective_sequence.h"
#include "tests/support/file.h"
#include "tests/support/paths.h"
#include "tests/support/port.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

// The two ways payloads travel over the fabric.
const char* const kModes[] = {"", "--fabric-rma"};

std::string ModeName(const std::string& mode) { return mode.empty() ? "tagged" : "rma"; }

std::string Launch(int ranks, const std::string& run_args, const std::string& mode) {
  return GenieBinary() + " launch -n " + std::to_string(ranks) + " -- run " + run_args +
         " --transport fabric --fabric-provider 'tcp;ofi_rxm' " + mode + " --peer-timeout 20s";
}

int CountMatches(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

// One launch per (algorithm, ranks, mode): its workload runs, one after another, one collective
// of every type the algorithm implements, and the system.json names that algorithm for each
// type. Rank start-up (libfabric's fi_getinfo, ~0.5 s a process) is most of a launch, so this
// checks every (collective, algorithm, ranks, mode) in 32 launches instead of 96. A wrong
// result is named by the run ("verify failed on rank R, node N (<collective> ...), <algorithm>")
// and the records say which algorithm carried each collective.
struct VerifyCase {
  AlgorithmTypes algorithm;
  int ranks;
  std::string mode;
};

void PrintTo(const VerifyCase& c, std::ostream* os) {
  *os << TypeNames(c.algorithm.types) << " by " << c.algorithm.algorithm << " on " << c.ranks
      << " ranks over fabric " << ModeName(c.mode);
}

std::vector<VerifyCase> VerifyCases() {
  std::vector<VerifyCase> cases;
  for (const char* mode : kModes) {
    for (int n : {2, 3, 4, 8}) {
      for (const AlgorithmTypes& a : EveryAlgorithmsTypes()) cases.push_back({a, n, mode});
    }
  }
  return cases;
}

class FabricVerify : public ::testing::TestWithParam<VerifyCase> {};

// Real data over the fabric: every rank's final buffer checked element by element. 96 KiB in
// two splits over 2 channels: messages above the inline size, so payloads take the tagged or
// RMA path, and some below it.
TEST_P(FabricVerify, EveryRankHoldsTheRightResult) {
  const VerifyCase& c = GetParam();
  const auto& [algorithm, types] = c.algorithm;
  const std::string dir = FreshDir("fabric-verify");
  ASSERT_NO_FATAL_FAILURE(WriteCollectiveSequence(dir + "/w", c.ranks, types, 96 * 1024));
  std::ofstream(dir + "/system.json") << SystemNaming(algorithm, types);
  CliResult r = RunCli(Launch(
      c.ranks,
      dir + "/w --system " + dir + "/system.json --verify --channels 2 --output " + dir + "/out",
      c.mode));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CountMatches(r.output, "verify: " + std::to_string(types.size()) +
                                       " collectives checked, all correct"),
            c.ranks)
      << r.output;
  EXPECT_EQ(r.output.find("verify failed"), std::string::npos) << r.output;
  ExpectEachRankRan(dir + "/out", c.ranks, algorithm, types);
  // The run says what carried it, and results.json records it.
  auto results = nlohmann::json::parse(std::ifstream(dir + "/out/results.json"), nullptr, false);
  ASSERT_FALSE(results.is_discarded());
  EXPECT_NE(results.dump().find("\"fabric\""), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(AlgorithmsAndCollectives, FabricVerify, ::testing::ValuesIn(VerifyCases()),
                         [](const auto& param_info) {
                           const VerifyCase& c = param_info.param;
                           return c.algorithm.algorithm + "_" + std::to_string(c.ranks) + "_" +
                                  ModeName(c.mode);
                         });

class FabricWorkloads : public ::testing::TestWithParam<std::string> {};

// A shipped STG training step (pipeline, tensor and data parallel groups, 8 ranks).
TEST_P(FabricWorkloads, ShippedStgWorkloadVerifies) {
  const std::string out = FreshDir("fabric-stg");
  CliResult r = RunCli(Launch(
      8, Data("traces/generated/stg/gpt_dp2_tp2_pp2") + " --verify --output " + out, GetParam()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("verify failed"), std::string::npos) << r.output;
  EXPECT_EQ(CountMatches(r.output, R"(verify: 46 collectives checked, all correct)"), 8)
      << r.output;
}

// The custom MSCCL-IR ring shipped with ASTRA-sim, named in a system.json as ASTRA-sim does.
TEST_P(FabricWorkloads, CustomMscclRingVerifies) {
  const std::string dir = FreshDir("fabric-msccl");
  ASSERT_EQ(RunCli(GenieBinary() + " gen collective --type all_reduce --size 1MiB --ranks 8 -o " +
                   dir + "/w")
                .exit_code,
            0);
  nlohmann::json custom = {
      {"all-reduce-implementation-custom",
       {Data("traces/astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce.xml")}}};
  std::ofstream(dir + "/custom.json") << custom.dump();
  CliResult r = RunCli(
      Launch(8, dir + "/w --system " + dir + "/custom.json --verify --output " + dir + "/out",
             GetParam()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(CountMatches(r.output, R"(collectives checked, all correct)"), 8) << r.output;
}

// genie bench (nccl-tests-style, data checked with -c 1) runs over the fabric too. (4 ranks:
// with 3, `genie bench -c 1` reports wrong values over TCP as well, a bench issue of its own.)
TEST_P(FabricWorkloads, BenchSweepChecksItsData) {
  CliResult r = RunCli(GenieBinary() +
                       " launch -n 4 -- bench all_reduce -b 16KiB -e 1MiB -f 8 -n 2 -w 1 -c 1 "
                       "--transport fabric --peer-timeout 20s " +
                       GetParam());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Out of bounds values : 0 OK"), std::string::npos) << r.output;
}

// Every other rank names a killed rank well within --peer-timeout (3 s here): through the
// transport's watch connections, not by waiting out the timeout.
TEST_P(FabricWorkloads, AKilledRankIsNamedByEveryOtherRank) {
  const std::string dir = FreshDir("fabric-kill");
  const std::string w = dir + "/w";
  ASSERT_EQ(
      RunCli(GenieBinary() + " gen collective --type all_reduce --size 8MiB --ranks 4 -o " + w)
          .exit_code,
      0);
  const int port = FreeTcpPort();
  std::vector<Child> ranks;
  for (int r = 0; r < 4; ++r) {
    const std::string env =
        "env RANK=" + std::to_string(r) + " WORLD_SIZE=4 LOCAL_RANK=" + std::to_string(r) +
        " LOCAL_WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " ";
    ranks.push_back(Spawn(env + GenieBinary() + " run " + w +
                              " --iterations 100000 --peer-timeout 3s --transport fabric " +
                              GetParam() + " -o " + dir + "/out",
                          dir + "/rank" + std::to_string(r) + ".log"));
  }
  // Running: every rank has recorded an op.
  const double deadline = NowSeconds() + 30;
  bool running = false;
  while (!running && NowSeconds() < deadline) {
    running = true;
    for (int r = 0; r < 4 && running; ++r) {
      running =
          ReadFile(dir + "/out/rank-" + std::to_string(r) + ".jsonl").find("\"record\":\"op\"") !=
          std::string::npos;
    }
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(running) << ReadLog(ranks[0]);
  const double killed_at = NowSeconds();
  Signal(ranks[2], SIGKILL);
  for (int r : {0, 1, 3}) {
    const Child& c = ranks[static_cast<size_t>(r)];
    auto code = WaitExit(c, 10);
    if (!code) Signal(c, SIGKILL);
    ASSERT_TRUE(code.has_value()) << "rank " << r << " still running:\n" << ReadLog(c);
    EXPECT_NE(*code, 0);
    EXPECT_LT(*code, 128) << "rank " << r << " crashed:\n" << ReadLog(c);
    EXPECT_NE(ReadLog(c).find("rank 2"), std::string::npos) << ReadLog(c);
  }
  EXPECT_LT(NowSeconds() - killed_at, 3.0 + 2.0) << "the others took longer than --peer-timeout";
  for (auto& c : ranks) {
    Signal(c, SIGKILL);
    WaitExit(c, 5);
  }
}

INSTANTIATE_TEST_SUITE_P(BothModes, FabricWorkloads,
                         ::testing::Values(std::string(kModes[0]), std::string(kModes[1])),
                         [](const auto& param_info) { return ModeName(param_info.param); });

// A provider or domain that is not there is refused at start, naming it and what to check.
// (A provider lacking a capability is named the same way, e.g. "it lacks FI_RMA, needed for
// --fabric-rma"; every provider on this host has all genie needs.)
TEST(FabricErrors, AMissingProviderOrDomainIsNamed) {
  const std::string dir = FreshDir("fabric-caps");
  ASSERT_EQ(RunCli(GenieBinary() + " gen collective --type all_reduce --size 64KiB --ranks 2 -o " +
                   dir + "/w")
                .exit_code,
            0);
  CliResult r = RunCli(GenieBinary() + " launch -n 2 -- run " + dir +
                       "/w --transport fabric --fabric-provider no_such_provider --peer-timeout "
                       "5s -o " +
                       dir + "/out");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("no_such_provider"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fi_info"), std::string::npos) << r.output;
  // A domain (NIC) the provider does not have: named, with what to check.
  CliResult nic = RunCli(GenieBinary() + " launch -n 2 -- run " + dir +
                         "/w --transport fabric --fabric-domain no_such_nic --peer-timeout 5s -o " +
                         dir + "/out2");
  EXPECT_NE(nic.exit_code, 0);
  EXPECT_NE(nic.output.find("no_such_nic"), std::string::npos) << nic.output;
  EXPECT_NE(nic.output.find("--fabric-domain"), std::string::npos) << nic.output;
}

}  // namespace
}  // namespace genie::testing
