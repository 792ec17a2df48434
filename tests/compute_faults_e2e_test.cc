// Compute faults (--faults entries with rank:) end to end on loopback, no testbed: genie run
// slows the named rank's compute from the named iteration, the step grows by what it adds on
// the critical path, results.json says when the fault took effect and by how much each rank's
// compute exceeded the trace, and genie simulate (and run --predict) with the same schedule
// predict the same growth. Jitter, ramps and stalls draw the same in a run and a simulation.
// Bad schedules are refused before anything runs, naming the file, the entry and the remedy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

using nlohmann::json;

// 4 ranks of data-parallel ResNet-50: 2.165 s of compute per iteration on each rank, 108
// all-reduces (195 MiB) that every rank's backward pass feeds, so a slow rank slows the step.
const char* kResnet = "traces/generated/text_converter/Resnet50_DataParallel_4npus_2pass";
// 4 ranks, two dependent compute ops each (5 us), no communication: quick runs for the draws.
const char* kTwoComp = "traces/generated/chakra_generator/two_comp_nodes_dependent";

std::string Ring4() { return Data("astra-sim-configs/Ring_4npus.yml"); }

std::string WriteSchedule(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir / name;
  std::ofstream(path) << text;
  return path;
}

json ReadResults(const std::string& folder) {
  std::ifstream in(folder + "/results.json");
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// (rank, iteration) -> the rank's summary of that iteration in results.json.
std::map<std::pair<int, int>, json> RankIterations(const json& results) {
  std::map<std::pair<int, int>, json> out;
  for (const auto& r : results["ranks"]) {
    for (const auto& it : r["iterations"]) {
      out[{it["rank"].get<int>(), it["iteration"].get<int>()}] = it;
    }
  }
  return out;
}

const json& At(const std::map<std::pair<int, int>, json>& m, int rank, int iteration) {
  static const json kNone = json::object();
  auto it = m.find({rank, iteration});
  return it != m.end() ? it->second : kNone;
}

std::vector<int64_t> Steps(const json& results) {
  std::vector<int64_t> out;
  for (const auto& it : results["iterations"]) out.push_back(it["step_time_ns"].get<int64_t>());
  return out;
}

// The measured compute of `rank` in each iteration: the time its COMP ops covered (the union of
// their spans in its stream), what the sleeps took rather than what they were asked. A union,
// not a sum: an op noticed late ends when noticed, and the ops queued behind it that were over
// by then start when it was due (Executor::TryIssue), so their spans overlap.
std::map<int, int64_t> MeasuredCompute(const std::string& folder, int rank) {
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> spans;
  std::ifstream in(folder + "/rank-" + std::to_string(rank) + ".jsonl");
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || j.value("record", "") != "op" || j.value("kind", "") != "compute") {
      continue;
    }
    spans[j["iteration"].get<int>()].emplace_back(j["start"].get<int64_t>(),
                                                  j["end"].get<int64_t>());
  }
  std::map<int, int64_t> out;
  for (auto& [iteration, v] : spans) {
    std::sort(v.begin(), v.end());
    int64_t covered = 0, from = v.front().first, to = v.front().second;
    for (const auto& [start, end] : v) {
      if (start > to) {
        covered += to - from;
        from = start;
      }
      to = std::max(to, end);
    }
    out[iteration] = covered + (to - from);
  }
  return out;
}

TEST(ComputeFaultRun, ASlowRankSlowsTheStepFromItsIterationAsTheSimulationPredicts) {
  TempDir dir("compute-faults");
  const std::string faults =
      WriteSchedule(dir, "slow.yml", "faults:\n  - {iteration: 2, rank: 1, compute: 1.5x}\n");
  const std::string run_out = dir / "run";
  // A warm-up first: the first iteration of a run pays for cold caches and fresh connections
  // (about 70 ms here), which is not the fault's.
  CliResult run =
      RunGenie("run " + Data(kResnet) + " --warmup 1 --iterations 3 --faults " + faults +
               " --network " + Ring4() + " --predict --peer-timeout 30s --output " + run_out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("compute fault at +"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("apply rank 1: compute 1.5x from iteration 2"), std::string::npos);
  const json results = ReadResults(run_out);
  ASSERT_TRUE(results.is_object());

  // What the executor asked: rank 1's compute 1.5x from measured iteration 2 (index 1) on.
  auto ranks = RankIterations(results);
  const int64_t traced = At(ranks, 0, 0)["compute_ns"].get<int64_t>();
  ASSERT_GT(traced, 2'000'000'000);
  EXPECT_FALSE(At(ranks, 1, 0).contains("compute_excess_ns"));
  for (int it : {1, 2}) {
    EXPECT_EQ(At(ranks, 1, it)["compute_excess_ns"].get<int64_t>(), traced / 2) << it;
    EXPECT_EQ(At(ranks, 1, it)["compute_ns"].get<int64_t>(), traced + traced / 2) << it;
    EXPECT_FALSE(At(ranks, 0, it).contains("compute_excess_ns"));
  }
  // What the sleeps took: the faulted rank's compute grew by the factor.
  auto measured = MeasuredCompute(run_out, 1);
  const double grown = static_cast<double>(measured[1]) / static_cast<double>(measured[0]);
  EXPECT_NEAR(grown, 1.5, 0.05) << measured[0] << " " << measured[1];
  // The step grew by what rank 1 added.
  const auto steps = Steps(results);
  ASSERT_EQ(steps.size(), 3u);
  const double measured_growth = static_cast<double>(steps[1] - steps[0]);
  EXPECT_NEAR(measured_growth / (traced / 2.0), 1.0, 0.05) << steps[0] << " " << steps[1];
  // When it took effect: rank 1's start of measured iteration 2, on rank 0's clock.
  const json& events = results["provenance"]["compute_faults"];
  ASSERT_EQ(events.size(), 1u) << events.dump();
  EXPECT_EQ(events[0]["action"], "apply");
  EXPECT_EQ(events[0]["rank"], 1);
  EXPECT_EQ(events[0]["iteration"], 2);
  EXPECT_EQ(events[0]["at_ns"], At(ranks, 1, 1)["start"]);

  // --predict modelled the fault as a what-if: that prediction grew alike. The expectation
  // iterations are judged by is the healthy one (no compute fault), so the faulted iterations
  // are flagged and rank 1 is named for them (docs/attribution.md; before attribution the
  // expectation included the fault and nothing was flagged).
  const json& pred = results["prediction"]["iterations"];
  ASSERT_EQ(pred.size(), 3u);
  const double predicted_growth =
      pred[1]["what_if_step_ns"].get<double>() - pred[0]["what_if_step_ns"].get<double>();
  EXPECT_NEAR(predicted_growth / measured_growth, 1.0, 0.05) << pred.dump();
  EXPECT_NEAR(pred[1]["expected_step_ns"].get<double>() / pred[0]["expected_step_ns"].get<double>(),
              1.0, 0.01);  // the start skew's µs
  EXPECT_EQ(results["prediction"]["flagged_iterations"], json({1, 2})) << pred.dump();
  const json& attributed = results["attribution"]["iterations"];
  ASSERT_EQ(attributed.size(), 2u) << attributed.dump();
  for (const json& a : attributed) {
    ASSERT_EQ(a["causes"].size(), 1u) << a.dump();
    EXPECT_EQ(a["causes"][0]["cause"], "straggler") << a.dump();
    EXPECT_EQ(a["causes"][0]["culprit"], "rank 1") << a.dump();
    EXPECT_GT(a["causes"][0]["share"].get<double>(), 0.9) << a.dump();
  }

  // genie simulate with the same schedule: the same growth within a few percent.
  const std::string sim_out = dir / "sim";
  CliResult sim = RunGenie("simulate " + Data(kResnet) + " --network " + Ring4() +
                           " --iterations 3 --faults " + faults + " -q -o " + sim_out);
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  const json simulated = ReadResults(sim_out);
  const auto sim_steps = Steps(simulated);
  ASSERT_EQ(sim_steps.size(), 3u);
  const double sim_growth = static_cast<double>(sim_steps[1] - sim_steps[0]);
  EXPECT_NEAR(measured_growth / sim_growth, 1.0, 0.05) << sim_steps[0] << " " << sim_steps[1];
  EXPECT_EQ(sim_steps[1], sim_steps[2]);
  const auto sim_ranks = RankIterations(simulated);
  EXPECT_EQ(At(sim_ranks, 1, 1)["compute_excess_ns"], traced / 2);
  EXPECT_EQ(simulated["provenance"]["compute_faults"][0]["action"], "apply");
}

// Jitter, a ramp and a stall: a real run and a simulation of the same schedule give every rank
// the same compute excess in every iteration (the draws are keyed, not sequenced), the stall
// holds its rank, and a fault whose iteration never came is reported as not applied.
TEST(ComputeFaultRun, JitterRampAndStallDrawTheSameInARunAndItsSimulation) {
  TempDir dir("compute-faults-draws");
  const std::string faults = WriteSchedule(dir, "mixed.yml", R"(faults:
  - {rank: all, jitter: {sd: 20%, distribution: lognormal, seed: 7}}
  - {rank: 2, ramp: {from: 1x, to: 3x, over: 2}}
  - {rank: 0, iteration: 2, stall: 300ms}
  - {rank: 3, iteration: 9, compute: 2x}
)");
  const std::string run_out = dir / "run";
  CliResult run = RunGenie("run " + Data(kTwoComp) + " --iterations 3 --faults " + faults +
                           " --output " + run_out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string sim_out = dir / "sim";
  CliResult sim = RunGenie("simulate " + Data(kTwoComp) + " --network " + Ring4() +
                           " --iterations 3 -q --faults " + faults + " -o " + sim_out);
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  auto measured = RankIterations(ReadResults(run_out));
  auto simulated = RankIterations(ReadResults(sim_out));
  ASSERT_EQ(measured.size(), 12u);
  int jittered = 0;
  for (const auto& [key, it] : measured) {
    const json& s = At(simulated, key.first, key.second);
    EXPECT_EQ(it.value("compute_excess_ns", 0), s.value("compute_excess_ns", 0))
        << "rank " << key.first << " iteration " << key.second;
    EXPECT_EQ(it["compute_ns"], s["compute_ns"]);
    EXPECT_EQ(it.value("stall_ns", 0), s.value("stall_ns", 0));
    jittered += it.value("compute_excess_ns", 0) != 0;
  }
  EXPECT_GE(jittered, 10);
  EXPECT_EQ((At(measured, 0, 1)["stall_ns"]), 300'000'000);
  EXPECT_GE(
      At(measured, 0, 1)["finish"].get<int64_t>() - At(measured, 0, 1)["start"].get<int64_t>(),
      300'000'000);
  EXPECT_GE(Steps(ReadResults(run_out))[1], 300'000'000);
  // The ramp's factor 1x, 2x, 3x times the jitter's: iteration 3 the largest on rank 2.
  EXPECT_GT(At(measured, 2, 2)["compute_ns"].get<int64_t>(),
            At(measured, 2, 1)["compute_ns"].get<int64_t>());

  const json events = ReadResults(run_out)["provenance"]["compute_faults"];
  int not_applied = 0, stalls = 0;
  for (const auto& e : events) {
    if (e["action"] == "not applied") {
      ++not_applied;
      EXPECT_EQ(e["rank"], 3);
      EXPECT_NE(e["reason"].get<std::string>().find("iteration 9 was never reached"),
                std::string::npos);
    }
    stalls += e["action"] == "stall";
  }
  EXPECT_EQ(not_applied, 1) << events.dump();
  EXPECT_EQ(stalls, 1) << events.dump();
  CliResult show = RunGenie("results show " + run_out + "/results.json");
  EXPECT_NE(show.output.find("compute fault NOT APPLIED: rank 3: compute 2x from iteration 9"),
            std::string::npos)
      << show.output;
  EXPECT_NE(show.output.find("rank 0: in 3 iteration(s)"), std::string::npos) << show.output;
}

TEST(ComputeFaultRun, BadSchedulesAreRefusedBeforeAnythingRunsNamingFileEntryAndRemedy) {
  TempDir dir("compute-faults-bad");
  struct Case {
    const char* entry;
    const char* says;
  };
  const Case kCases[] = {
      {"{rank: 7, compute: 1.5x}", "the job has no rank 7 (its ranks are 0..3)"},
      {"{rank: 1, compute: 0x}", "a factor must be above 0"},
      {"{rank: 1, jitter: 100%}", "must be above 0 and under 100 %"},
      {"{rank: 1, jitter: {sd: 5%, distribution: gamma}}", "use normal, uniform or lognormal"},
      {"{rank: 1, compute: 2x, when: later}", "unknown key 'when'"},
  };
  int i = 0;
  for (const Case& c : kCases) {
    const std::string path = WriteSchedule(dir, "bad" + std::to_string(i++) + ".yml",
                                           std::string("faults:\n  - ") + c.entry + "\n");
    const std::string out = dir / ("out" + std::to_string(i));
    for (const std::string& cmd :
         {"run " + Data(kTwoComp) + " --output " + out,
          "simulate " + Data(kTwoComp) + " --network " + Ring4() + " -q -o " + out}) {
      CliResult r = RunGenie(cmd + " --faults " + path);
      EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
      EXPECT_NE(r.output.find(path + ": fault 1"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find(c.says), std::string::npos) << r.output;
      EXPECT_FALSE(std::filesystem::exists(out + "/results.json")) << cmd;
    }
  }
  // A stall the peers would not wait for.
  const std::string stall = WriteSchedule(dir, "stall.yml", "faults:\n  - {rank: 1, stall: 40s}\n");
  CliResult r = RunGenie("run " + Data(kTwoComp) + " --output " + (dir / "stall") + " --faults " +
                         stall + " --peer-timeout 30s");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("raise --peer-timeout above it"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace genie::testing
