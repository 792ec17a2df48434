// examples/nic-degradation (Figure 1 of the paper) end to end at 8 hosts, as root: a star
// testbed at 400 Mbit/s repeats a ring all-reduce; a third of the way through one host's NIC
// drops to a tenth of its rate. Every iteration after the fault is flagged and none before it
// (the one in flight may go either way), the degraded host is named — another one when the
// fault moves there, with its side when only its transmit or only its receive side is slowed —
// and a healthy repeat flags and names nothing. Shortened to 4 MiB, 6 iterations with a fault (a
// faulted one lasts ~1.5 s, ten healthy ones; the example's 30 would take minutes) and 9 for the
// healthy repeat (the iterations that must not be flagged are cheap).
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/paths.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

using nlohmann::json;

// The example puts the fault at the start of iteration ITERATIONS / 3 + 1 counted from 1: with 6,
// 0-based iteration 2 (so 0 and 1 are healthy, 1 possibly in flight), leaving 4 faulted.
constexpr int kFaultedIterations = 6;
constexpr int kFirstFaulted = kFaultedIterations / 3;
constexpr int kHealthyIterations = 9;

class NicDegradation : public ::testing::Test {
 protected:
  void SetUp() override {
    GENIE_SKIP_IF(NamespacesMissing());
    GENIE_SKIP_IF(Sanitized("measured vs predicted times"));
    name_ = "nd" + std::to_string(getpid());
    dir_ = FreshDir("nicdeg-" + name_);
  }
  void TearDown() override {
    if (name_.empty()) return;
    EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output,
              "0\n");
  }
  // Runs the example; returns its output, results.json and the flagged iterations of figure.csv.
  // Threshold 1.0 (2x), not the default 0.25: the fault makes a step ~10x slower, while 8 ranks
  // on 2 cores once took a healthy 150 ms step to 209 ms (1.33x, no retransmit: scheduling)
  // and once, in a CI run right after a series of testbed tests, the first measured step to
  // 249 ms (1.58x; the iterations after it 0.97x). The test is about telling the two apart.
  CliResult Example(const std::string& out, const std::string& env, int iterations) {
    const std::string build = GenieBinary().substr(0, GenieBinary().rfind("/tools/genie/genie"));
    return RunCli("cd " + dir_ + " && " + env + " ITERATIONS=" + std::to_string(iterations) +
                  " SIZE=4MiB FLAG_THRESHOLD=1.0 NAME=" + name_ + " OUT=" + out + " " +
                  Source("examples/nic-degradation/run.sh") + " " + build + " 8");
  }
  json Results(const std::string& out) {
    return json::parse(ReadFile(dir_ + "/" + out + "/results/results.json"));
  }
  // figure.csv: iteration,measured,predicted,fault,flagged -> the flagged iterations.
  std::vector<int> Flagged(const std::string& out) {
    std::istringstream csv(ReadFile(dir_ + "/" + out + "/figure.csv"));
    std::vector<int> flagged;
    std::string line;
    std::getline(csv, line);
    while (std::getline(csv, line)) {
      if (line.substr(line.rfind(',') + 1) == "1") flagged.push_back(std::stoi(line));
    }
    return flagged;
  }
  static std::string Findings(const json& results) {
    std::string out;
    for (const auto& f : results["localization"]["findings"]) {
      out += (out.empty() ? "" : " ") + f["kind"].get<std::string>() + ":" +
             f.value("host", std::string("-"));
    }
    return out.empty() ? "healthy" : out;
  }

  std::string name_, dir_;
};

TEST_F(NicDegradation, FlagsTheIterationsAfterTheFaultAndNamesTheHostAndSide) {
  struct Case {
    std::string env, finding;
  };
  for (const Case& c : {Case{"", "slow_link:h7"}, Case{"SLOW=h2 DIRECTION=out", "slow_transmit:h2"},
                        Case{"SLOW=h5 DIRECTION=in", "slow_receive:h5"}}) {
    const std::string out = "out-" + c.finding.substr(c.finding.find(':') + 1);
    CliResult r = Example(out, c.env, kFaultedIterations);
    ASSERT_EQ(r.exit_code, 0) << c.env << "\n" << r.output;
    std::vector<int> flagged = Flagged(out);
    if (!flagged.empty() && flagged.front() == kFirstFaulted - 1) {
      flagged.erase(flagged.begin());  // in flight
    }
    std::vector<int> after;
    for (int i = kFirstFaulted; i < kFaultedIterations; ++i) after.push_back(i);
    EXPECT_EQ(flagged, after) << c.env << "\n" << r.output;
    EXPECT_EQ(Findings(Results(out)), c.finding) << c.env << "\n" << r.output;
  }
}

TEST_F(NicDegradation, AHealthyRepeatFlagsAndNamesNothing) {
  CliResult r = Example("healthy", "FAULT=0", kHealthyIterations);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Flagged("healthy").empty()) << r.output;
  EXPECT_EQ(Findings(Results("healthy")), "healthy") << r.output;
}

}  // namespace
}  // namespace genie::testing
