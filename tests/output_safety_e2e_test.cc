// Issue 47 end to end, as a hostile but fair user would try it: no output of any command ever
// replaces one of its inputs, a results file or stream of the run, or lands in a folder another
// job or simulation holds (record/output_guard.h); in-place rewrites go through a checked
// temporary file; every file a workload or model names is what it claims before anything runs;
// sizes that cannot be held are refused up front; errors name the real cause.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/paths.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A 2-rank all-reduce workload W (W.0.et, W.1.et) in `dir`.
std::string Workload(const std::string& dir) {
  CliResult r = RunCli(Genie("gen collective --type all_reduce --size 64KiB --ranks 2 -o " + dir +
                         "/w"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return dir + "/w";
}

// A copy of examples/loopback.yml: cases try to overwrite the network file, and a genie that
// failed to refuse must damage a copy, not the checkout.
std::string Net() {
  static const std::string copy = [] {
    const std::string dir = FreshDir("safety-net");
    fs::copy_file(Source("examples/loopback.yml"), dir + "/loopback.yml");
    return dir + "/loopback.yml";
  }();
  return copy;
}

TEST(OutputSafety, NoWriterReplacesAnInputOrTheRunsOwnResults) {
  const std::string dir = FreshDir("safety-inputs");
  const std::string w = Workload(dir);
  const std::string d = dir + "/d";
  CliResult ok = RunCli(Genie("run " + w + " --output " + d + " --peer-timeout 20s"));
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  const std::string results = ReadFile(d + "/results.json");
  const std::string stream1 = ReadFile(d + "/rank-1.jsonl");
  const std::string trace0 = ReadFile(w + ".0.et");
  const std::string net0 = ReadFile(Net());
  ASSERT_FALSE(results.empty());
  fs::create_symlink(d + "/results.json", dir + "/link.json");

  struct Case {
    std::string args;
    std::string says;
  };
  const Case cases[] = {
      {"report " + d + "/results.json -o " + d + "/results.json", "one of the inputs"},
      {"report " + d + "/results.json -o " + dir + "/link.json", "one of the inputs"},
      {"report " + d + "/results.json -o " + d + "/../d/results.json", "one of the inputs"},
      {"run " + w + " --output " + d + " --report " + d + "/results.json",
       "results file or rank stream of the run"},
      {"run " + w + " --output " + d + " --trace-out " + d + "/results.json",
       "results file or rank stream of the run"},
      {"run " + w + " --output " + d + " --trace-out " + d + "/rank-1.jsonl",
       "results file or rank stream of the run"},
      {"run " + w + " --output " + dir + "/e --trace-out " + w + ".1.et", "one of the inputs"},
      {"run " + w + " --output " + dir + "/e --trace-out " + d + "/results.json",
       "genie results file or rank stream"},
      {"simulate " + w + " --network " + Net() + " --output " + dir + "/s --trace-out " + dir +
           "/s/results.json",
       "results file or rank stream of the run"},
      {"simulate " + w + " --network " + Net() + " --trace-out " + w + ".0.et",
       "one of the inputs"},
      {"simulate " + w + " --network " + Net() + " --trace-out " + Net(), "one of the inputs"},
      {"simulate " + w + " --network " + Net() + " --trace-out " + d + "/rank-1.jsonl",
       "genie results file or rank stream"},
      {"results merge " + d + "/rank-0.jsonl " + d, "one of the inputs"},
      {"results merge " + dir + "/m.json " + d + " --trace-out " + d + "/rank-1.jsonl",
       "one of the inputs"},
  };
  for (const Case& c : cases) {
    const bool timeout_flag = c.args.rfind("run ", 0) == 0;
    CliResult r = RunCli(Genie(c.args + (timeout_flag ? " --peer-timeout 20s" : "")));
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find("refusing to write"), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_EQ(ReadFile(d + "/results.json"), results) << c.args;
    EXPECT_EQ(ReadFile(d + "/rank-1.jsonl"), stream1) << c.args;
    EXPECT_EQ(ReadFile(w + ".0.et"), trace0) << c.args;
    EXPECT_EQ(ReadFile(Net()), net0) << c.args;
  }
  EXPECT_FALSE(fs::exists(dir + "/e/results.json"));
  EXPECT_FALSE(fs::exists(dir + "/s/results.json"));
  // The run's own files in its own folder are its to replace: a second run there still works.
  CliResult again = RunCli(Genie("run " + w + " --output " + d + " --trace-out " + d +
                             "/trace.json --peer-timeout 20s"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
}

// A job holding its output folder (stopped, so that it keeps holding it) keeps simulate, report
// and merge out of it, as it keeps out another `genie run`.
TEST(OutputSafety, SimulateAndEveryWriterHonourTheFolderLockRunHolds) {
  const std::string dir = FreshDir("safety-lock");
  const std::string w = Workload(dir);
  const std::string d = dir + "/held";
  // Iterations enough that it is still running when stopped below, whatever the machine's pace;
  // it is interrupted once the checks are done.
  Child job = Spawn(Genie("run " + w + " --output " + d + " --iterations 1000000 --peer-timeout 60s"),
                    dir + "/job.log");
  struct Reap {
    Child& c;
    ~Reap() {
      Signal(c, SIGCONT);
      Signal(c, SIGKILL);
      WaitExit(c, 5);
    }
  } reap{job};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (ReadFile(d + "/rank-0.jsonl").find("\"clock\"") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_NE(ReadFile(d + "/rank-0.jsonl").find("\"clock\""), std::string::npos) << ReadLog(job);
  Signal(job, SIGSTOP);
  const std::string stream0 = ReadFile(d + "/rank-0.jsonl");
  WriteFile(dir + "/other.json", "{}");

  CliResult sim = RunCli(Genie("simulate " + w + " --network " + Net() + " --output " + d));
  EXPECT_EQ(sim.exit_code, 2) << sim.output;
  EXPECT_NE(sim.output.find("is in use by another genie job or simulation"), std::string::npos)
      << sim.output;
  EXPECT_FALSE(fs::exists(d + "/results.json"));
  EXPECT_FALSE(fs::exists(d + "/simulate.jsonl"));
  CliResult trace = RunCli(Genie("simulate " + w + " --network " + Net() + " --trace-out " + d +
                             "/t.json"));
  EXPECT_EQ(trace.exit_code, 2) << trace.output;
  EXPECT_NE(trace.output.find("in use by another genie job or simulation"), std::string::npos)
      << trace.output;
  CliResult merge = RunCli(Genie("results merge " + d + "/m.json " + d + "/rank-0.jsonl"));
  EXPECT_EQ(merge.exit_code, 2) << merge.output;
  EXPECT_FALSE(fs::exists(d + "/t.json"));
  EXPECT_FALSE(fs::exists(d + "/m.json"));
  EXPECT_EQ(ReadFile(d + "/rank-0.jsonl"), stream0);

  Signal(job, SIGCONT);
  Signal(job, SIGINT);
  const auto code = WaitExit(job, 60);
  ASSERT_TRUE(code.has_value()) << ReadLog(job);
  EXPECT_EQ(*code, 128 + SIGINT) << ReadLog(job);
  // Free again once the job is over.
  CliResult after = RunCli(Genie("simulate " + w + " --network " + Net() + " --output " + d));
  EXPECT_EQ(after.exit_code, 0) << after.output;
}

TEST(OutputSafety, StripInPlaceOfADamagedFileLeavesItAndFails) {
  const std::string dir = FreshDir("safety-strip");
  const std::string truncated = R"({"format": "genie-results", "ranks": [{"rank": 0, "start": 1)";
  const std::string f = WriteFile(dir + "/r.json", truncated);
  CliResult in_place = RunCli(Genie("results strip --in-place " + f));
  EXPECT_NE(in_place.exit_code, 0) << in_place.output;
  EXPECT_NE(in_place.output.find(f), std::string::npos) << in_place.output;
  EXPECT_EQ(ReadFile(f), truncated);
  CliResult out = RunCli(Genie("results strip --stdout " + f), Stderr::kApart);
  EXPECT_NE(out.exit_code, 0);
  EXPECT_EQ(out.output, "");
  EXPECT_NE(out.errors.find("truncated or damaged"), std::string::npos) << out.errors;
  CliResult copy = RunCli(Genie("results strip " + f));
  EXPECT_NE(copy.exit_code, 0);
  EXPECT_FALSE(fs::exists(dir + "/r.stripped.json"));
}

TEST(OutputSafety, ARankFileThatIsNoFileIsRefusedBeforeAnythingRuns) {
  for (const std::string kind : {"folder", "fifo", "dangling"}) {
    const std::string dir = FreshDir("safety-rankfile-" + kind);
    CliResult gen = RunCli(Genie("gen collective --type all_reduce --size 64KiB --ranks 3 -o " + dir +
                             "/w"));
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    const std::string last = dir + "/w.2.et";
    fs::remove(last);
    if (kind == "folder") fs::create_directory(last);
    if (kind == "fifo") {
      ASSERT_EQ(::mkfifo(last.c_str(), 0644), 0);
    }
    if (kind == "dangling") fs::create_symlink(dir + "/gone.et", last);
    for (const std::string& cmd : {"run " + dir + "/w --output " + dir + "/o --peer-timeout 10s",
                                  "inspect " + dir + "/w",
                                  "simulate " + dir + " --network " + Net()}) {
      CliResult r = RunCli(Genie(cmd));
      EXPECT_NE(r.exit_code, 0) << kind << ": " << cmd << "\n" << r.output;
      EXPECT_NE(r.output.find(last + ": the rank's trace file is"), std::string::npos)
          << kind << ": " << cmd << "\n" << r.output;
    }
    EXPECT_FALSE(fs::exists(dir + "/o/results.json"));
  }
}

TEST(OutputSafety, RunRefusesMemoryAccessesWithoutAMemoryModelAsSimulateDoes) {
  const std::string w = Data("traces/generated/chakra_generator/one_remote_mem_load_node");
  const std::string dir = FreshDir("safety-mem");
  CliResult run = RunCli(Genie("run " + w + " --output " + dir + "/o --peer-timeout 20s"));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("NO_MEMORY_EXPANSION"), std::string::npos) << run.output;
  CliResult sim = RunCli(Genie("simulate " + w + " --network " + Net()));
  EXPECT_EQ(sim.exit_code, 2) << sim.output;
  EXPECT_NE(sim.output.find("NO_MEMORY_EXPANSION"), std::string::npos) << sim.output;
}

TEST(OutputSafety, SynthChecksItsModelFileAndEverySize) {
  const std::string dir = FreshDir("safety-synth");
  fs::create_directory(dir + "/model.yml");
  CliResult folder = RunCli(Genie("synth --model-file " + dir + "/model.yml -o " + dir + "/a"));
  EXPECT_EQ(folder.exit_code, 2) << folder.output;
  EXPECT_NE(folder.output.find(dir + "/model.yml: the model file is a folder"), std::string::npos)
      << folder.output;
  CliResult vocab = RunCli(Genie("synth --model stg-gpt --vocab 9000000000000000000 -o " + dir + "/b"));
  EXPECT_EQ(vocab.exit_code, 2) << vocab.output;
  EXPECT_NE(vocab.output.find("reduce --vocab"), std::string::npos) << vocab.output;
  EXPECT_FALSE(fs::exists(dir + "/b/workload.0.et"));
  CliResult layers = RunCli(Genie("synth --model stg-gpt --layers 4294967297 -o " + dir + "/c"));
  EXPECT_EQ(layers.exit_code, 2) << layers.output;
  EXPECT_NE(layers.output.find("--layers 4294967297 is out of range"), std::string::npos)
      << layers.output;
}

TEST(OutputSafety, TestbedUpRefusesTheQueueFaultRefuses) {
  CliResult up = RunCli(Genie("testbed up --name safetyq --topology star:2 --queue 1 --dry-run"));
  EXPECT_EQ(up.exit_code, 2) << up.output;
  EXPECT_NE(up.output.find("queue: 1 B cannot hold two full-size packets"), std::string::npos)
      << up.output;
}

TEST(OutputSafety, ReportLinksOnlyRelativePaths) {
  const std::string dir = FreshDir("safety-link");
  const std::string w = Workload(dir);
  const std::string run_dir = dir + "/javascript:alert(1)";
  CliResult sim = RunCli(Genie("simulate " + w + " --network " + Net() + " --output '" + run_dir +
                           "' --trace-out '" + run_dir + "/trace.json'"));
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  for (const std::string& args :
       {"report '" + run_dir + "/results.json' --trace 'javascript:alert(1)' -o " + dir + "/a.html",
        std::string("report 'javascript:alert(1)/results.json' -o b.html")}) {
    CliResult r = RunCli("cd " + dir + " && " + Genie(args));
    ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.output;
  }
  for (const std::string& page : {dir + "/a.html", dir + "/b.html"}) {
    const std::string text = ReadFile(page);
    ASSERT_NE(text.find("\"trace_href\":\""), std::string::npos) << page;
    EXPECT_EQ(text.find("\"trace_href\":\"javascript:"), std::string::npos) << page;
    EXPECT_NE(text.find("javascript%3Aalert%281%29"), std::string::npos) << page;
  }
}

TEST(OutputSafety, BenchRefusesADataCheckItCannotHoldUpFront) {
  const auto start = std::chrono::steady_clock::now();
  CliResult r = RunCli(Genie("bench --ranks 2 -b 1T -e 1T -n 1 -w 0"));
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the data check (-c) of the largest size needs"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("is available"), std::string::npos) << r.output;
  EXPECT_LT(secs, 30) << r.output;
}

TEST(OutputSafety, DoctorRefusesRanksSharingAHostOrMarksEveryFigureLoopback) {
  const std::string dir = FreshDir("safety-doctor");
  CliResult r = RunCli(Genie("launch -n 2 -- doctor --bytes 1MiB --pings 3 --json " + dir + "/d.json"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("ranks share a host"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("one rank per host"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("healthy"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/d.json"));
  CliResult allowed = RunCli(Genie("launch -n 2 -- doctor --allow-shared-host --bytes 1MiB --pings 3 "
                               "--json " + dir + "/d.json"));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.output;
  EXPECT_NE(allowed.output.find("LOOPBACK SCAN"), std::string::npos) << allowed.output;
  EXPECT_EQ(allowed.output.find("# healthy"), std::string::npos) << allowed.output;
  json j = json::parse(ReadFile(dir + "/d.json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << allowed.output;
  EXPECT_EQ(j["loopback"], true);
  EXPECT_EQ(j["healthy"], false);
}

// A read-only file system is named as such, for the folder that could not be made.
TEST(OutputSafety, AReadOnlyOutputIsReportedAsSuch) {
  if (geteuid() != 0 || RunCli("unshare -m true").exit_code != 0) {
    GTEST_SKIP() << "needs root and mount namespaces";
  }
  const std::string dir = FreshDir("safety-rofs");
  const std::string w = Workload(dir);
  fs::create_directory(dir + "/ro");
  for (const std::string& cmd :
       {Genie("simulate " + w + " --network " + Net() + " --output " + dir + "/ro/sub"),
        Genie("run " + w + " --output " + dir + "/ro/sub --peer-timeout 10s")}) {
    CliResult r = RunCli("unshare -m sh -c 'mount -t tmpfs -o ro none " + dir + "/ro && " + cmd +
                         "'");
    EXPECT_EQ(r.exit_code, 1) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find("read-only file system: " + dir + "/ro/sub"), std::string::npos)
        << cmd << "\n" << r.output;
    EXPECT_EQ(r.output.find("No such file or directory"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace genie::testing
