#include "tests/support/simulate_cli.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "tests/support/cli.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {

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

long long SimulatedCycles(const std::string& args) {
  CliResult r = RunCli(Simulate(args));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::regex re(R"(sys\[(\d+)\] finished, (\d+) cycles)");
  long long cycles = -2;
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), re);
       it != std::sregex_iterator(); ++it) {
    const long long c = std::stoll((*it)[2]);
    if (cycles == -2) cycles = c;
    if (c != cycles) return -1;
  }
  return cycles;
}

std::string AllReduce8() { return Data("traces/astra-sim/microbenchmarks/all_reduce/8npus_1MB"); }

std::string SwitchNetwork(int ranks) {
  const std::string path = FreshDir("net" + std::to_string(ranks)) + "/switch.yml";
  std::ofstream(path) << "topology: [ Switch ]\nnpus_count: [ " << ranks
                      << " ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
  return path;
}

std::string GenCollective(const std::string& dir, const std::string& name, const char* type,
                          const std::string& size, int ranks) {
  const std::string prefix = dir + "/" + name;
  CliResult r = RunCli(GenieBinary() + " gen collective --type " + type + " --size " + size +
                       " --ranks " + std::to_string(ranks) + " -o " + prefix);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return prefix;
}

bool Has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace genie::testing
