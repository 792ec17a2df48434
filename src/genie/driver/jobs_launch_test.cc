// The jobs launcher's timing and failure rules on a ManualEnv, each job's supervisor a scripted
// child: start offsets kept, one job's failure contained (or, with stop_all_on_failure, the
// others stopped and no more started), open-ended traffic stopped once the workloads end, a
// signal stopping everything, SIGKILL for a supervisor that outlives its grace; the exit code.
#include "genie/driver/jobs_launch.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "genie/env/manual_env.h"
#include "genie/env/process.h"
#include "tests/support/temp_dir.h"

namespace genie::driver {
namespace {

using env::ExitedWith;
using env::KilledBy;
using env::ManualEnv;
using env::ProcessScript;
using env::ProcessSpec;
using ::genie::testing::TempDir;

// The job a supervisor was started for (its --job argument).
std::string JobOf(const ProcessSpec& spec) {
  for (size_t i = 0; i + 1 < spec.argv.size(); ++i) {
    if (spec.argv[i] == "--job") return spec.argv[i + 1];
  }
  return "";
}

// Supervisors run until stopped, except those given a script.
void Script(ManualEnv* env, std::map<std::string, ProcessScript> by_job) {
  env->SetScripter([by_job](const ProcessSpec& spec) {
    auto it = by_job.find(JobOf(spec));
    return it != by_job.end() ? it->second : ProcessScript{-1, 0};
  });
}

class JobsLaunchTest : public ::testing::Test {
 protected:
  // Runs the jobs file `text` on `env`; the summary it wrote.
  int Launch(ManualEnv* env, const std::string& text) {
    const std::string path = dir_ / "jobs.yml";
    std::ofstream(path) << text;
    JobsLaunchOptions o;
    o.jobs_path = path;
    o.output = dir_ / "out";
    o.grace = kNsPerSec;
    return LaunchJobs(o, env);
  }
  nlohmann::json Summary() {
    std::ifstream in(dir_ / "out/jobs.json");
    return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
  // A job's entry in the summary.
  nlohmann::json Job(const std::string& name) {
    const nlohmann::json summary = Summary();
    for (const auto& j : summary["jobs"]) {
      if (j["name"] == name) return j;
    }
    return {};
  }
  TempDir dir_{"jobs-launch"};
};

TEST_F(JobsLaunchTest, StartsEachJobAtItsOffsetAndStopsOpenEndedTrafficAfterTheWorkloads) {
  ManualEnv env;
  env.SetWallOffset(0);  // wall-clock times in jobs.json read as the manual clock
  Script(&env, {{"a", {3 * kNsPerSec, ExitedWith(0)}}, {"b", {kNsPerSec, ExitedWith(0)}}});
  const int code = Launch(&env, R"(jobs:
  - {name: a, ranks: 2, args: [netcheck]}
  - {name: b, ranks: 2, start: 1500ms, args: [netcheck]}
  - {name: t, type: traffic, pairs: [[local, local]]}
)");
  EXPECT_EQ(code, 0);
  EXPECT_EQ(Job("a")["started_ns"], 0);
  EXPECT_EQ(Job("b")["started_ns"], 1'500'000'000);
  EXPECT_EQ(Job("b")["ended_ns"], 2'500'000'000);
  // t: told to stop when a ended (3 s), counted a success.
  ASSERT_EQ(env.signals_sent().size(), 1u);
  EXPECT_EQ(env.signals_sent()[0].signal, SIGTERM);
  EXPECT_EQ(env.signals_sent()[0].at, 3 * kNsPerSec);
  EXPECT_TRUE(Job("t")["ok"].get<bool>());
  EXPECT_EQ(Job("t")["outcome"], "0 (stopped: workloads done)");
  // Each supervisor is this program's `launch --jobs F --job NAME`, with its own job id.
  ASSERT_EQ(env.spawned().size(), 3u);
  EXPECT_EQ(JobOf(env.spawned()[0]), "a");
  EXPECT_NE(Job("a")["job_id"], Job("b")["job_id"]);
}

TEST_F(JobsLaunchTest, OneJobFailingLeavesTheOthersRunning) {
  ManualEnv env;
  env.SetWallOffset(0);
  Script(&env, {{"a", {kNsPerSec, ExitedWith(3)}},
                {"b", {4 * kNsPerSec, ExitedWith(0)}},
                {"c", {kNsPerSec, ExitedWith(0)}}});
  const int code = Launch(&env, R"(jobs:
  - {name: a, ranks: 2, args: [netcheck]}
  - {name: b, ranks: 2, args: [netcheck]}
  - {name: c, ranks: 2, start: 2s, args: [netcheck]}
)");
  EXPECT_EQ(code, 3);  // a's
  EXPECT_TRUE(env.signals_sent().empty());
  EXPECT_EQ(Job("b")["ended_ns"], 4'000'000'000);
  EXPECT_TRUE(Job("b")["ok"].get<bool>());
  EXPECT_TRUE(Job("c")["ok"].get<bool>());  // started after a failed
  EXPECT_EQ(Job("a")["outcome"], "3 (failed)");
}

TEST_F(JobsLaunchTest, StopAllOnFailureStopsTheOthersAndKillsOneThatIgnoresIt) {
  ManualEnv env;
  Script(&env, {{"a", {kNsPerSec, ExitedWith(3)}}, {"b", {-1, 0, /*ignores_sigterm=*/true}}});
  const int code = Launch(&env, R"(stop_all_on_failure: true
jobs:
  - {name: a, ranks: 2, args: [netcheck]}
  - {name: b, ranks: 2, args: [netcheck]}
  - {name: c, ranks: 2, start: 2s, args: [netcheck]}
)");
  EXPECT_EQ(code, 3);
  const auto sent = env.signals_sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].signal, SIGTERM);
  EXPECT_EQ(sent[0].at, kNsPerSec);
  // SIGKILL after its own grace (1 s) and the supervisor's slack (10 s).
  EXPECT_EQ(sent[1].signal, SIGKILL);
  EXPECT_EQ(sent[1].at, 12 * kNsPerSec);
  EXPECT_EQ(Job("c")["outcome"], "not started");
  EXPECT_EQ(env.spawned().size(), 2u);
}

TEST_F(JobsLaunchTest, ASignalStopsEveryJobAndStartsNoMore) {
  ManualEnv env;
  Script(&env, {});
  env.SignalAt(kNsPerSec, SIGINT);
  const int code = Launch(&env, R"(jobs:
  - {name: a, ranks: 2, args: [netcheck]}
  - {name: b, ranks: 2, start: 5s, args: [netcheck]}
)");
  EXPECT_EQ(code, 128 + SIGINT);
  ASSERT_EQ(env.signals_sent().size(), 1u);
  EXPECT_EQ(env.signals_sent()[0].signal, SIGINT);  // forwarded as it came
  EXPECT_EQ(Job("b")["outcome"], "not started");
  EXPECT_EQ(Summary()["exit_code"], 128 + SIGINT);
}

TEST_F(JobsLaunchTest, BadFileStartsNothing) {
  ManualEnv env;
  EXPECT_EQ(Launch(&env, "jobs: [{name: a, ranks: 2, args: [x], colour: red}]"), 2);
  EXPECT_TRUE(env.spawned().empty());
}

}  // namespace
}  // namespace genie::driver
