// Chaos: what a hostile but fair user (or a bad day on a cluster) does to a running job — kill,
// stop, interrupt and starve ranks, remove or fill the output folder, start two jobs on one port
// or one folder. Real processes, real sockets. Each test asserts: no crash (no exit by a signal
// genie did not get), no hang (every wait is bounded), the right rank named, no mixing of jobs,
// and what was written so far still readable and marked incomplete. `ctest -L chaos`.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/port.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Gen(const std::string& dir, int ranks, const std::string& size) {
  const std::string prefix = dir + "/w" + std::to_string(ranks) + "_" + size;
  CliResult r = RunCli(GenieBinary() + " gen collective --type all_reduce --size " + size +
                       " --ranks " + std::to_string(ranks) + " -o " + prefix);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return prefix;
}

std::string RankCommand(int rank, int world, int port, const std::string& args) {
  return "env RANK=" + std::to_string(rank) + " WORLD_SIZE=" + std::to_string(world) +
         " LOCAL_RANK=" + std::to_string(rank) + " LOCAL_WORLD_SIZE=" + std::to_string(world) +
         " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " " + GenieBinary() +
         " run " + args;
}

// True once every rank in `out` has recorded an op (connected, synchronised, running).
bool AllRanksRunning(const std::string& out, int ranks, double timeout_s) {
  const double deadline = NowSeconds() + timeout_s;
  while (NowSeconds() < deadline) {
    bool all = true;
    for (int r = 0; r < ranks && all; ++r) {
      all = ReadFile(out + "/rank-" + std::to_string(r) + ".jsonl").find("\"record\":\"op\"") !=
            std::string::npos;
    }
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Independent ranks of one job (no launcher between the test and them).
struct Job {
  std::string dir;
  std::string out;
  std::vector<Child> ranks;

  Job(const std::string& dir_in, const std::string& workload, int world, int port,
      const std::string& flags, const std::string& out_in)
      : dir(dir_in), out(out_in) {
    for (int r = 0; r < world; ++r) {
      ranks.push_back(Spawn(RankCommand(r, world, port, workload + " " + flags + " -o " + out),
                            dir + "/" + fs::path(out).filename().string() + "-rank" +
                                std::to_string(r) + ".log"));
    }
  }
  ~Job() {
    for (auto& c : ranks) {
      Signal(c, SIGCONT);
      Signal(c, SIGKILL);
      WaitExit(c, 5);
    }
  }
  bool WaitRunning(double timeout_s) const {
    return AllRanksRunning(out, static_cast<int>(ranks.size()), timeout_s);
  }
};

// The exit code, failing the test (and killing it) when it does not come within `timeout_s`.
int ExitWithin(const Child& c, double timeout_s) {
  auto code = WaitExit(c, timeout_s);
  if (!code) {
    Signal(c, SIGKILL);
    ADD_FAILURE() << "still running after " << timeout_s << " s:\n" << ReadLog(c);
    return -1;
  }
  return *code;
}

// genie exits with its own codes (0, 1, 2, 75, or 128+SIGINT/SIGTERM when interrupted); an
// exit by SIGSEGV/SIGABRT/SIGBUS/SIGFPE is a crash.
void ExpectNoCrash(int code, const std::string& log) {
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) {
    EXPECT_NE(code, 128 + sig) << "crashed with signal " << sig << ":\n" << log;
  }
  EXPECT_EQ(log.find("terminate called"), std::string::npos) << log;
  EXPECT_EQ(log.find("AddressSanitizer"), std::string::npos) << log;
}

TEST(Chaos, AKilledRankIsNamedAndResultsShowSaysTheRunIsIncomplete) {
  const std::string dir = FreshDir("chaos-kill");
  Job job(dir, Gen(dir, 4, "8MiB"), 4, FreeTcpPort(), "--iterations 100000 --peer-timeout 3s",
          dir + "/out");
  ASSERT_TRUE(job.WaitRunning(30)) << ReadLog(job.ranks[0]);
  Signal(job.ranks[2], SIGKILL);
  for (int r : {0, 1, 3}) {
    const int code = ExitWithin(job.ranks[static_cast<size_t>(r)], 10);
    ExpectNoCrash(code, ReadLog(job.ranks[static_cast<size_t>(r)]));
    EXPECT_NE(code, 0);
    EXPECT_NE(ReadLog(job.ranks[static_cast<size_t>(r)]).find("rank 2"), std::string::npos)
        << ReadLog(job.ranks[static_cast<size_t>(r)]);
  }
  CliResult show = RunCli(GenieBinary() + " results show " + job.out);
  ExpectNoCrash(show.exit_code, show.output);
  EXPECT_NE(show.output.find("INCOMPLETE"), std::string::npos) << show.output;
}

TEST(Chaos, ARankStarvedForLessThanTheTimeoutOnlyDelaysTheRun) {
  const std::string dir = FreshDir("chaos-starve");
  Job job(dir, Gen(dir, 4, "4MiB"), 4, FreeTcpPort(), "--iterations 40 --peer-timeout 6s",
          dir + "/out");
  ASSERT_TRUE(job.WaitRunning(30)) << ReadLog(job.ranks[0]);
  Signal(job.ranks[1], SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  Signal(job.ranks[1], SIGCONT);
  for (size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(ExitWithin(job.ranks[r], 120), 0) << ReadLog(job.ranks[r]);
  }
  CliResult show = RunCli(GenieBinary() + " results show " + job.out + "/results.json");
  EXPECT_EQ(show.exit_code, 0) << show.output;
  EXPECT_EQ(show.output.find("INCOMPLETE"), std::string::npos) << show.output;
}

// A user's shell may have SIGINT ignored (nohup, some CI runners); Ctrl-C on genie launch must
// still stop every rank, and what they wrote must be readable and say it is incomplete.
TEST(Chaos, AnInterruptStopsEveryRankEvenWhenSigintWasInheritedAsIgnored) {
  const std::string dir = FreshDir("chaos-int");
  const std::string w = Gen(dir, 4, "8MiB");
  Child launch = Spawn("trap '' INT; " + GenieBinary() + " launch -n 4 -- run " + w +
                           " --iterations 100000 --peer-timeout 5s -o " + dir + "/out",
                       dir + "/launch.log");
  ASSERT_TRUE(AllRanksRunning(dir + "/out", 4, 30)) << ReadLog(launch);
  Signal(launch, SIGINT);  // the whole process group, as a terminal's Ctrl-C does
  const int code = ExitWithin(launch, 15);
  ExpectNoCrash(code, ReadLog(launch));
  EXPECT_NE(code, 0) << ReadLog(launch);
  EXPECT_EQ(ProcessesMentioning(dir + "/out"), 0) << "ranks left running";
  CliResult show = RunCli(GenieBinary() + " results show " + dir + "/out");
  ExpectNoCrash(show.exit_code, show.output);
  EXPECT_NE(show.output.find("INCOMPLETE"), std::string::npos) << show.output;
}

// A launcher killed by SIGKILL (an OOM kill, a batch system's hard stop) runs no cleanup: its
// ranks must still stop, and what they wrote stay readable and say it is incomplete.
TEST(Chaos, RanksDieWithALauncherKilledBySigkill) {
  const std::string dir = FreshDir("chaos-kill-launcher");
  const std::string w = Gen(dir, 4, "8MiB");
  // `exec`: the child's pid is the launcher's, so only the launcher is killed below.
  Child launch = Spawn("exec " + GenieBinary() + " launch -n 4 -- run " + w +
                           " --iterations 100000 --peer-timeout 5s -o " + dir + "/out",
                       dir + "/launch.log");
  ASSERT_TRUE(AllRanksRunning(dir + "/out", 4, 30)) << ReadLog(launch);
  ASSERT_EQ(kill(launch.pid, SIGKILL), 0);
  ASSERT_TRUE(WaitExit(launch, 5).has_value());
  WaitFor([&] { return ProcessesMentioning(dir + "/out") == 0; }, 10);
  EXPECT_EQ(ProcessesMentioning(dir + "/out"), 0) << "ranks outlived their launcher";
  CliResult show = RunCli(GenieBinary() + " results show " + dir + "/out");
  ExpectNoCrash(show.exit_code, show.output);
  EXPECT_NE(show.output.find("INCOMPLETE"), std::string::npos) << show.output;
}

TEST(Chaos, RemovingTheOutputFolderMidRunNeverCrashes) {
  const std::string dir = FreshDir("chaos-rmdir");
  Job job(dir, Gen(dir, 2, "4MiB"), 2, FreeTcpPort(), "--iterations 60 --peer-timeout 10s",
          dir + "/out");
  ASSERT_TRUE(job.WaitRunning(30)) << ReadLog(job.ranks[0]);
  fs::remove_all(dir + "/out");
  for (size_t r = 0; r < 2; ++r) {
    const int code = ExitWithin(job.ranks[r], 120);
    ExpectNoCrash(code, ReadLog(job.ranks[r]));
  }
  // No 0-byte or half-written results.json is left behind.
  if (fs::exists(dir + "/out/results.json")) {
    CliResult show = RunCli(GenieBinary() + " results show " + dir + "/out/results.json");
    EXPECT_EQ(show.exit_code, 0) << show.output;
  }
}

TEST(Chaos, AFullDiskIsReportedAndNothingHalfWrittenIsLeft) {
  GENIE_SKIP_IF(RootMissing("mount a small tmpfs"));
  const std::string dir = FreshDir("chaos-full");
  const std::string w = Gen(dir, 2, "1MiB");
  const std::string out = dir + "/small";
  fs::create_directories(out);
  if (mount("tmpfs", out.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here: " << strerror(errno);
  }
  CliResult run = RunCli(GenieBinary() + " launch -n 2 -- run " + w +
                         " --iterations 400 --peer-timeout 10s -o " + out);
  ExpectNoCrash(run.exit_code, run.output);
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find(out), std::string::npos) << "the error should name the folder:\n"
                                                      << run.output;
  if (fs::exists(out + "/results.json")) {
    EXPECT_GT(fs::file_size(out + "/results.json"), 0u);
  }
  umount(out.c_str());
}

// A second job started on the port of a running job must never join it: it either fails
// clearly (the first job's rendezvous still holds the port) or, once that rendezvous is over
// and the port free again, runs as a job of its own — and the first job runs on undisturbed.
TEST(Chaos, TwoJobsOnOnePortNeverMix) {
  const std::string dir = FreshDir("chaos-port");
  const std::string w = Gen(dir, 2, "4MiB");
  const int port = FreeTcpPort();
  Job a(dir, w, 2, port, "--iterations 100000 --peer-timeout 10s", dir + "/a");
  ASSERT_TRUE(a.WaitRunning(30)) << ReadLog(a.ranks[0]);
  Job b(dir, w, 2, port, "--iterations 30 --peer-timeout 5s", dir + "/b");
  int b_ok = 0;
  for (size_t r = 0; r < 2; ++r) {
    const int code = ExitWithin(b.ranks[r], 120);
    ExpectNoCrash(code, ReadLog(b.ranks[r]));
    b_ok += code == 0;
  }
  if (b_ok > 0) {
    EXPECT_EQ(b_ok, 2) << "half of job b finished:\n" << ReadLog(b.ranks[0]) << ReadLog(b.ranks[1]);
    CliResult show = RunCli(GenieBinary() + " results show " + dir + "/b/results.json");
    EXPECT_EQ(show.exit_code, 0) << show.output;
    EXPECT_EQ(show.output.find("INCOMPLETE"), std::string::npos) << show.output;
    EXPECT_NE(show.output.find("2 ranks, 30 measured iterations"), std::string::npos)
        << show.output;
  }
  // Job a runs on, undisturbed: both its ranks are still measuring.
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_FALSE(WaitExit(a.ranks[r], 0.5).has_value()) << ReadLog(a.ranks[r]);
  }
}

TEST(Chaos, TwoJobsWritingToOneFolderNeverMix) {
  const std::string dir = FreshDir("chaos-folder");
  const std::string w1 = Gen(dir, 2, "1MiB");
  const std::string w2 = Gen(dir, 2, "2MiB");
  Child a = Spawn(GenieBinary() + " launch -n 2 -- run " + w1 +
                      " --iterations 20 --peer-timeout 10s -o " + dir + "/out",
                  dir + "/a.log");
  Child b = Spawn(GenieBinary() + " launch -n 2 -- run " + w2 +
                      " --iterations 20 --peer-timeout 10s -o " + dir + "/out",
                  dir + "/b.log");
  const int ca = ExitWithin(a, 120), cb = ExitWithin(b, 120);
  ExpectNoCrash(ca, ReadLog(a));
  ExpectNoCrash(cb, ReadLog(b));
  EXPECT_TRUE(ca == 0 || cb == 0) << ReadLog(a) << ReadLog(b);
  // Whatever results.json holds comes from one run: one workload throughout.
  CliResult show = RunCli(GenieBinary() + " results show " + dir + "/out/results.json");
  EXPECT_EQ(show.exit_code, 0) << show.output;
  EXPECT_EQ(show.output.find("INCOMPLETE"), std::string::npos) << show.output;
  const std::string results = ReadFile(dir + "/out/results.json");
  const bool one = results.find("w2_1MiB") != std::string::npos;
  const bool two = results.find("w2_2MiB") != std::string::npos;
  EXPECT_NE(one, two) << "results.json mixes the two jobs";
}

}  // namespace
}  // namespace genie::testing
