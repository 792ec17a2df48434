// genie launch --jobs: several jobs on one network. On loopback (no root): every job its own
// folder, results and job id, a bad file refused before anything starts, one job's rank killed
// while another runs (the other's results complete, the launcher's exit and table name the
// killed job), a signal to the launcher stopping every job with nothing left running. On a
// namespace testbed (root): two 4-rank jobs (a shipped workload, packed; a bench all-reduce,
// interleaved) and background traffic on star:8, each rank in its host's namespace, and a
// placement asking for more hosts than the testbed has refused.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// 4 ranks, one all-reduce per iteration: a few ms an iteration on loopback.
std::string AllReduce() { return Data("traces/generated/chakra_generator/ALL_REDUCE"); }

std::string Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// The pid of a `genie run` rank writing into `folder`, or -1.
int RankOf(const std::string& folder) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = ReadFile(e.path().string() + "/cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(" run ") != std::string::npos && cmd.find("--output " + folder) != std::string::npos) {
      return std::stoi(pid);
    }
  }
  return -1;
}

// The table row of `job` in the launcher's output.
std::string Row(const std::string& output, const std::string& job) {
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(job + " ", 0) == 0) return line;
  }
  return "";
}

TEST(Jobs, EachJobHasItsOwnFolderResultsAndJobId) {
  TempDir dir("jobs-own");
  const std::string file = Write(dir / "two.yml", R"(
output: )" + dir / "out" + R"(
jobs:
  - name: ar
    ranks: 4
    iterations: 2
    run: {workload: )" + AllReduce() + R"(}
  - name: ag
    ranks: 2
    start: 300ms
    bench: {collective: all_gather, minbytes: 64K, maxbytes: 64K, iterations: 2}
  - name: noise
    type: traffic
    pairs: [[local, local]]
    rate: 200mbit
    on: 200ms
    off: 200ms
    duration: 1200ms
  - name: bg
    type: traffic
    pairs: [[local, local]]
    rate: 100mbit
)");
  CliResult r = RunGenie("launch --jobs " + file, Stderr::kApart);
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  const json ar = ReadJson(dir / "out/ar/results.json");
  EXPECT_TRUE(ar["completeness"]["complete"].get<bool>()) << ar.dump();
  EXPECT_EQ(ar["iterations"].size(), 2u);
  EXPECT_TRUE(fs::exists(dir / "out/ag/bench.json"));
  const json traffic = ReadJson(dir / "out/noise/traffic.json");
  ASSERT_EQ(traffic["pairs"].size(), 1u) << traffic.dump();
  EXPECT_GT(traffic["pairs"][0]["received_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(traffic["pairs"][0]["receiver_end"], "sender done");
  EXPECT_EQ(traffic["pairs"][0]["sender_end"], "duration");
  // Open-ended traffic is stopped once the workload jobs have ended.
  EXPECT_EQ(ReadJson(dir / "out/bg/traffic.json")["pairs"][0]["receiver_end"], "stopped");
  // On 200 ms, off 200 ms: each on window about 200 ms long, 400 ms after the one before.
  const json& windows = traffic["pairs"][0]["on_windows"];
  ASSERT_GE(windows.size(), 2u) << traffic.dump();
  for (size_t i = 0; i + 1 < windows.size(); ++i) {  // the last one is cut by the stop
    const double on_ms = (windows[i][1].get<double>() - windows[i][0].get<double>()) / 1e6;
    const double period_ms = (windows[i + 1][0].get<double>() - windows[i][0].get<double>()) / 1e6;
    EXPECT_NEAR(on_ms, 200, 60) << windows.dump();
    EXPECT_NEAR(period_ms, 400, 60) << windows.dump();
  }

  const json summary = ReadJson(dir / "out/jobs.json");
  ASSERT_EQ(summary["jobs"].size(), 4u) << summary.dump();
  std::set<std::string> ids;
  for (const json& j : summary["jobs"]) {
    EXPECT_TRUE(j["ok"].get<bool>()) << j.dump();
    ids.insert(j["job_id"].get<std::string>());
  }
  EXPECT_EQ(ids.size(), 4u);
  // ag started 300 ms after ar (on the launcher's clock; a little more is scheduling).
  const int64_t gap = summary["jobs"][1]["started_ns"].get<int64_t>() -
                      summary["jobs"][0]["started_ns"].get<int64_t>();
  EXPECT_GE(gap, 290'000'000);
  EXPECT_LT(gap, 2'000'000'000);
  // Each rank was told its jobs file and job (what a job's --predict reads).
  EXPECT_NE(ReadFile(dir / "out/ar/launch.log").find("job 'ar': 4 rank(s)"), std::string::npos);
  EXPECT_NE(Row(r.output, "ar").find("out/ar/results.json"), std::string::npos) << r.output;
  EXPECT_NE(Row(r.output, "bg").find("stopped: workloads done"), std::string::npos) << r.output;

  // One job of the file alone, placed as among the others.
  CliResult alone = RunGenie("launch --jobs " + file + " --job ar --output " + dir / "alone");
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_EQ(ReadJson(dir / "alone/ar/results.json")["iterations"].size(), 2u);
  EXPECT_FALSE(fs::exists(dir / "alone/ag"));
}

TEST(Jobs, BadInputExitsTwoNamingFileJobAndKeyAndStartsNothing) {
  TempDir dir("jobs-bad");
  struct Case {
    const char* body;
    const char* says;
  };
  const std::string w = AllReduce();
  const Case cases[] = {
      {"jobs: [{name: a, ranks: 4, run: {workload: W}, colour: red}]",
       "job 'a': unknown key 'colour'"},
      {"jobs: [{name: a, ranks: 0, run: {workload: W}}]", "job 'a': ranks: 0 is outside"},
      {"jobs: [{name: a, ranks: 2, output: x, run: {workload: W}},\n"
       "       {name: b, ranks: 2, output: x, run: {workload: W}}]",
       "jobs 'a' and 'b' would write into the same folder"},
      {"jobs: [{name: a, ranks: 2, port: 29901, run: {workload: W}},\n"
       "       {name: b, ranks: 2, port: 29901, run: {workload: W}}]",
       "both ask for port 29901"},
      {"jobs: [{name: a, ranks: 2, run: {workload: W}}, {name: a, ranks: 2, run: {workload: W}}]",
       "two jobs are named 'a'"},
      {"jobs: [{name: t, type: traffic, pairs: [[local, h3]]}]", "job 't': pairs: [local, h3]"},
      {"slots_per_host: 4\njobs: [{name: a, ranks: 5, args: [netcheck]}]",
       "job 'a': placement: 5 ranks need more hosts than the testbed has"},
      {"jobs: [{name: a, ranks: 8, run: {workload: W}}]",
       "job 'a': ranks: 8, but workload"},
  };
  int n = 0;
  for (const Case& c : cases) {
    std::string body = c.body;
    for (size_t at; (at = body.find(": W}")) != std::string::npos;) body.replace(at + 2, 1, w);
    const std::string out = dir / ("out" + std::to_string(n));
    const std::string file = Write(dir / ("bad" + std::to_string(n++) + ".yml"), body);
    CliResult r = RunGenie("launch --jobs " + file + " --output " + out);
    EXPECT_EQ(r.exit_code, 2) << body << "\n" << r.output;
    EXPECT_NE(r.output.find(file), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << "wanted: " << c.says << "\n" << r.output;
    EXPECT_FALSE(fs::exists(out)) << "something started for:\n" << body;
  }
  CliResult both = RunGenie("launch --jobs x.yml -n 4 -- run");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.output.find("leave out -n"), std::string::npos) << both.output;
}

// One job's rank killed mid-run: its own launch stops it, the other job runs to its end with
// complete results; the launcher's exit code and table say which job was killed.
TEST(Jobs, AJobKilledMidRunLeavesTheOthersComplete) {
  TempDir dir("jobs-kill");
  const std::string out = dir / "out";
  const std::string file = Write(dir / "k.yml", R"(
jobs:
  - name: victim
    ranks: 4
    iterations: 100000
    run: {workload: )" + AllReduce() + R"(}
  - name: survivor
    ranks: 4
    iterations: 150
    run: {workload: )" + AllReduce() + R"(}
)");
  Child launcher = Spawn("exec " + Genie("launch --jobs " + file + " --output " + out), dir / "launch.out");
  int victim = -1;
  ASSERT_TRUE(WaitFor([&] { return (victim = RankOf(out + "/victim")) > 0; }, 30))
      << ReadLog(launcher);
  // Kill it while the survivor is still running.
  ASSERT_FALSE(fs::exists(out + "/survivor/results.json"));
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  auto code = WaitExit(launcher, 60);
  if (!code) Signal(launcher, SIGKILL);
  ASSERT_TRUE(code) << ReadLog(launcher);
  const std::string log = ReadLog(launcher);
  EXPECT_EQ(*code, 128 + SIGKILL) << log;  // the killed job's exit: a rank got SIGKILL
  const json survivor = ReadJson(out + "/survivor/results.json");
  EXPECT_TRUE(survivor["completeness"]["complete"].get<bool>()) << survivor.dump();
  EXPECT_EQ(survivor["iterations"].size(), 150u);
  EXPECT_NE(Row(log, "survivor").find("  0  "), std::string::npos) << log;
  EXPECT_NE(Row(log, "victim").find("137"), std::string::npos) << log;
  const json summary = ReadJson(out + "/jobs.json");
  EXPECT_FALSE(summary["jobs"][0]["ok"].get<bool>());
  EXPECT_TRUE(summary["jobs"][1]["ok"].get<bool>());
  EXPECT_EQ(ProcessesMentioning(out), 0) << "ranks left running";
}

// stop_all_on_failure: the first job to fail stops the others, and its code is the launcher's.
TEST(Jobs, StopAllOnFailureStopsTheOthers) {
  TempDir dir("jobs-stopall");
  const std::string out = dir / "out";
  const std::string file = Write(dir / "s.yml", R"(
stop_all_on_failure: true
jobs:
  - name: long
    ranks: 4
    iterations: 100000
    run: {workload: )" + AllReduce() + R"(}
  - name: broken
    ranks: 2
    start: 1s
    args: [run, --workload, /nonexistent/workload]
)");
  CliResult r = RunGenie("launch --jobs " + file + " --output " + out + " --grace 2s");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // genie run's bad input, the broken job's code
  EXPECT_NE(Row(r.output, "broken").find("2 (failed)"), std::string::npos) << r.output;
  EXPECT_NE(Row(r.output, "long").find("(stopped)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stop_all_on_failure: stopping the other jobs"), std::string::npos);
  EXPECT_EQ(ProcessesMentioning(out), 0);
}

// SIGTERM to the launcher stops every job (and the one not yet started never starts); nothing
// is left running.
TEST(Jobs, ASignalToTheLauncherStopsEveryJob) {
  TempDir dir("jobs-signal");
  const std::string out = dir / "out";
  const std::string file = Write(dir / "s.yml", R"(
jobs:
  - name: long
    ranks: 4
    iterations: 100000
    run: {workload: )" + AllReduce() + R"(}
  - name: noise
    type: traffic
    pairs: [[local, local]]
  - name: later
    ranks: 2
    start: 60s
    args: [netcheck]
)");
  Child launcher = Spawn("exec " + Genie("launch --jobs " + file + " --output " + out), dir / "launch.out");
  ASSERT_TRUE(WaitFor([&] { return RankOf(out + "/long") > 0; }, 30)) << ReadLog(launcher);
  usleep(500'000);
  kill(launcher.pid, SIGTERM);  // the launcher alone, not its process group
  auto code = WaitExit(launcher, 30);
  if (!code) Signal(launcher, SIGKILL);
  ASSERT_TRUE(code) << ReadLog(launcher);
  const std::string log = ReadLog(launcher);
  EXPECT_EQ(*code, 128 + SIGTERM) << log;
  EXPECT_NE(Row(log, "later").find("not started"), std::string::npos) << log;
  EXPECT_NE(Row(log, "long").find("stopped"), std::string::npos) << log;
  EXPECT_TRUE(WaitFor([&] { return ProcessesMentioning(out) == 0; }, 10)) << "left running";
  // The traffic said what it sent before it was stopped.
  const json traffic = ReadJson(out + "/noise/traffic.json");
  EXPECT_GT(traffic["pairs"][0]["sent_bytes"].get<uint64_t>(), 0u) << traffic.dump();
}

// The launcher killed outright (SIGKILL: no cleanup of its own): every job's supervisor is told
// by the kernel and stops its ranks; nothing is left running.
TEST(Jobs, ALauncherKilledLeavesNothingRunning) {
  TempDir dir("jobs-sigkill");
  const std::string out = dir / "out";
  const std::string file = Write(dir / "k.yml", R"(
jobs:
  - name: a
    iterations: 100000
    run: {workload: )" + AllReduce() + R"(}
  - name: noise
    type: traffic
    pairs: [[local, local]]
)");
  Child launcher = Spawn("exec " + Genie("launch --jobs " + file + " --output " + out),
                         dir / "launch.out");
  ASSERT_TRUE(WaitFor([&] { return RankOf(out + "/a") > 0; }, 30)) << ReadLog(launcher);
  ASSERT_TRUE(WaitFor([&] { return ProcessesMentioning("traffic --parallel") >= 2; }, 30));
  usleep(300'000);  // the run job's ranks at work, not starting
  ASSERT_TRUE(RankOf(out + "/a") > 0) << ReadLog(launcher);
  kill(launcher.pid, SIGKILL);
  ASSERT_TRUE(WaitExit(launcher, 10));
  EXPECT_TRUE(WaitFor([&] { return ProcessesMentioning(out) == 0; }, 15))
      << ProcessesMentioning(out) << " process(es) outlived the launcher";
}

// ---- on a namespace testbed (root) ---------------------------------------------------------

class JobsOnTestbed : public ::testing::Test {
 protected:
  void SetUp() override {
    GENIE_SKIP_IF(NamespacesMissing());
    name_ = "jobs" + std::to_string(getpid() % 100000);
    CliResult up = RunCli(Genie("testbed up --name " + name_ + " --topology star:8 --rate 400mbit"));
    ASSERT_EQ(up.exit_code, 0) << up.output;
  }
  void TearDown() override {
    if (name_.empty()) return;
    RunCli(Genie("testbed down " + name_) + " 2>/dev/null");
  }
  std::string name_;
};

TEST_F(JobsOnTestbed, TwoJobsAndTrafficOnStar8) {
  TempDir dir("jobs-testbed");
  const std::string out = dir / "out";
  const std::string file = Write(dir / "tb.yml", "testbed: " + name_ + R"(
jobs:
  - name: train
    ranks: 4
    placement: packed
    iterations: 3
    run: {workload: )" + AllReduce() + R"(}
  - name: ar
    ranks: 4
    placement: interleaved
    bench: {collective: all_reduce, minbytes: 4M, maxbytes: 4M, iterations: 2}
  - name: noise
    type: traffic
    pairs: [[h0, h4], [h1, h5]]
    rate: 100mbit
    duration: 2s
)");
  CliResult r = RunGenie("launch --jobs " + file + " --output " + out, Stderr::kApart);
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  const json summary = ReadJson(out + "/jobs.json");
  ASSERT_EQ(summary["jobs"].size(), 3u);
  EXPECT_EQ(summary["testbed"], name_);
  // Packed: h0-h3 (one slot a host); interleaved: the hosts left.
  EXPECT_EQ(summary["jobs"][0]["rank_hosts"], json({"h0", "h1", "h2", "h3"}));
  EXPECT_EQ(summary["jobs"][1]["rank_hosts"], json({"h4", "h5", "h6", "h7"}));
  const json train = ReadJson(out + "/train/results.json");
  EXPECT_TRUE(train["completeness"]["complete"].get<bool>());
  EXPECT_TRUE(fs::exists(out + "/ar/bench.json"));
  // Each job's rendezvous on its own rank 0's host: 10.100.0.1 (h0) and 10.100.0.5 (h4).
  EXPECT_NE(summary["jobs"][0]["rendezvous"].get<std::string>().find("10.100.0.1:"), std::string::npos);
  EXPECT_NE(summary["jobs"][1]["rendezvous"].get<std::string>().find("10.100.0.5:"), std::string::npos);
  const json traffic = ReadJson(out + "/noise/traffic.json");
  ASSERT_EQ(traffic["pairs"].size(), 2u);
  for (const json& p : traffic["pairs"]) {
    EXPECT_EQ(p["receiver_end"], "sender done") << p.dump();
    // 100 Mbit/s for 2 s: about 25 MB, paced (not the link's 400 Mbit/s).
    const double mb = p["received_bytes"].get<double>() / 1e6;
    EXPECT_GT(mb, 15) << p.dump();
    EXPECT_LT(mb, 30) << p.dump();
  }
  EXPECT_EQ(traffic["pairs"][0]["from"], "h0");
  EXPECT_EQ(traffic["pairs"][0]["to"], "h4");

  // Asking for more hosts than the testbed has: refused, nothing started.
  const std::string big = Write(dir / "big.yml", "testbed: " + name_ + R"(
slots_per_host: 1
jobs:
  - {name: a, ranks: 6, args: [netcheck]}
  - {name: b, ranks: 4, placement: packed, run: {workload: )" + AllReduce() + R"(}}
)");
  CliResult refused = RunGenie("launch --jobs " + big + " --output " + dir / "big");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("job 'b': placement: 4 ranks need more hosts than the testbed has"),
            std::string::npos)
      << refused.output;
  EXPECT_FALSE(fs::exists(dir / "big"));
}

// Two 8-rank all-reduce jobs sharing every host link, both --predict: each job's prediction
// includes its neighbour (an iteration the neighbour mostly covered expects more than alone),
// records how much of each measured iteration the neighbour's steps covered and what of its
// own idle time they filled, adds exactly the simulation's interference per unit of simulated
// overlap times the measured overlap, less the filled time, and lands near the measured step
// (the testbed is not calibrated here: a wide band; unmodelled, the neighbour reads ~2x).
TEST_F(JobsOnTestbed, TwoInterleavedJobsArePredictedWithTheirNeighbour) {
  TempDir dir("jobs-neighbours");
  CliResult gen = RunCli(Genie("gen collective --type all_reduce --size 4MiB -n 8 -o " +
                               dir / "ar" + "/ar"));
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  const std::string out = dir / "out";
  const std::string file = Write(dir / "two.yml", "testbed: " + name_ + R"(
jobs:
  - name: a
    run: {workload: ar/ar, iterations: 6, warmup: 1, predict: true}
  - name: b
    run: {workload: ar/ar, iterations: 6, warmup: 1, predict: true}
)");
  CliResult r = RunGenie("launch --jobs " + file + " --output " + out, Stderr::kApart);
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  for (const std::string job : {"a", "b"}) {
    const json res = ReadJson(out + "/" + job + "/results.json");
    const json& p = res.at("prediction");
    const json& n = p.at("neighbours");
    EXPECT_EQ(n.at("jobs"), json({job == "a" ? "b" : "a"}));
    const json& overlap = n.at("overlap_measured");
    ASSERT_EQ(overlap.size(), 6u) << n.dump();
    int covered = 0;
    for (const json& share : overlap) {
      EXPECT_GE(share.get<double>(), 0.0);
      EXPECT_LE(share.get<double>(), 1.0);
      covered += share.get<double>() > 0.5;
    }
    EXPECT_GE(covered, 4) << "jobs started together overlap in most iterations: " << overlap;
    const json& simulated = n.at("overlap_simulated");
    const json& together = n.at("simulated_together_ns");
    const json& alone = n.at("simulated_alone_ns");
    ASSERT_EQ(simulated.size(), 6u);
    ASSERT_EQ(together.size(), 6u);
    // What a full overlap costs, per iteration: as simulated where it overlapped enough.
    std::vector<double> full(6, -1), usable;
    for (size_t i = 0; i < 6; ++i) {
      const double d = together[i].get<double>() - alone[i].get<double>();
      if (simulated[i].get<double>() >= 0.5) usable.push_back(full[i] = std::max(0.0, d) / simulated[i].get<double>());
    }
    ASSERT_FALSE(usable.empty()) << n.dump();
    std::sort(usable.begin(), usable.end());
    const json& filled = n.at("filled_ns");
    std::vector<double> ratios;
    for (const json& it : p.at("iterations")) {
      const auto i = it.at("iteration").get<size_t>();
      const double share = overlap[i].get<double>();
      const int64_t added =
          it.at("expected_step_ns").get<int64_t>() - it.at("expected_alone_step_ns").get<int64_t>();
      const int64_t fill = i < filled.size() ? filled[i].get<int64_t>() : 0;
      EXPECT_GE(fill, 0);
      const double per = full[i] >= 0 ? full[i] : usable[(usable.size() - 1) / 2];
      EXPECT_NEAR(static_cast<double>(added + fill), per * share, 0.01 * per + 2) << it.dump();
      if (share > 0.5) EXPECT_GT(added, 0) << it.dump();
      ratios.push_back(it.at("measured_step_ns").get<double>() /
                       it.at("expected_step_ns").get<double>());
    }
    std::sort(ratios.begin(), ratios.end());
    const double median = ratios[ratios.size() / 2];
    EXPECT_GT(median, 0.7) << job;
    EXPECT_LT(median, 1.4) << job;
  }
}

}  // namespace
}  // namespace genie::testing
