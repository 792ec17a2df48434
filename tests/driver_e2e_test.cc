// The drivers end to end: `genie run` and `genie simulate` share one iteration policy, and every
// way of printing a run's per-rank totals (the run itself, `genie results show --astra-sim`)
// prints the same figures from the same records.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

// The "sys[r] finished, T cycles, exposed communication E cycles." lines, in order.
std::vector<std::string> AstraSimLines(const std::string& output) {
  static const std::regex kLine(R"(sys\[\d+\] finished, \d+ cycles, exposed communication -?\d+ cycles\.)");
  std::vector<std::string> lines;
  for (std::sregex_iterator it(output.begin(), output.end(), kLine), end; it != end; ++it) {
    lines.push_back(it->str());
  }
  return lines;
}

TEST(Drivers, RunAndResultsShowPrintTheSameTotalsForAFiveIterationRun) {
  const std::string out = FreshDir("driver-totals");
  CliResult run = RunCli(GenieBinary() + " run " +
                         Data("traces/astra-sim/microbenchmarks/all_reduce/4npus_1MB") +
                         " --iterations 5 --warmup 1 --peer-timeout 20s --output " + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::vector<std::string> printed = AstraSimLines(run.output);
  ASSERT_EQ(printed.size(), 4u) << run.output;

  CliResult show = RunCli(GenieBinary() + " results show --astra-sim " + out + "/results.json");
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_EQ(AstraSimLines(show.output), printed);
}

TEST(Drivers, SimulatedIterationsRepeatTheFirstExactly) {
  const std::string workload = Data("traces/astra-sim/microbenchmarks/all_reduce/8npus_1MB");
  const std::string args = " --system " + Data("astra-sim-configs/Ring_4chunks.json") +
                           " --network " + Data("astra-sim-configs/Ring_8npus.yml");
  CliResult one = RunCli(GenieBinary() + " simulate " + workload + args);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  // ASTRA-sim's worked figure (REFERENCE §2): 64,440 ns on every rank.
  const std::vector<std::string> lines = AstraSimLines(one.output);
  ASSERT_EQ(lines.size(), 8u) << one.output;
  EXPECT_EQ(lines[0], "sys[0] finished, 64440 cycles, exposed communication 64440 cycles.");

  CliResult three = RunCli(GenieBinary() + " simulate " + workload + args + " -n 3 --warmup 1");
  ASSERT_EQ(three.exit_code, 0) << three.output;
  const std::vector<std::string> summed = AstraSimLines(three.output);
  ASSERT_EQ(summed.size(), 8u) << three.output;
  // Three measured iterations of an idle deterministic network: three times the figure.
  EXPECT_EQ(summed[0], "sys[0] finished, 193320 cycles, exposed communication 193320 cycles.");
}

// `genie run --network N` predicts with the flow model unless told otherwise.
TEST(Drivers, RunPredictsWithTheFlowModelByDefault) {
  const std::string workload = Data("traces/astra-sim/microbenchmarks/all_reduce/4npus_1MB");
  const std::string net = FreshDir("driver-predict") + "/sw4.yml";
  {
    std::ofstream(net) << "topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 2 ]\n"
                          "latency: [ 10000 ]\n";
  }
  for (const auto& [flags, model] : {std::pair{"", "flow model"},
                                     std::pair{" --network-model aware", "aware model"}}) {
    CliResult run = RunCli(GenieBinary() + " run " + workload + " --network " + net + flags +
                           " --peer-timeout 20s --output " + FreshDir("driver-predict-out"));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_TRUE(std::regex_search(run.output,
                                  std::regex(std::string("predicted \\(.*sw4\\.yml, ") + model)))
        << run.output;
  }
}

}  // namespace
}  // namespace genie::testing
