// genie run as it runs on a cluster: started by the launchers the field uses (MPICH's mpiexec,
// genie launch, a torchrun-style environment), with NICs chosen per local rank and the
// intra-host dimension modelled, and through failures: a killed rank, a stopped rank,
// strangers on the listening ports. Real processes, real sockets. (Two hosts in network
// namespaces and a link that goes down: two_hosts_e2e_test.cc.)
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "genie/net/frame.h"
#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/paths.h"
#include "tests/support/port.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A small workload with compute and communication (all-reduce and all-to-all) on 8 ranks, 1 s
// a run. (ResNet-50 on 4 ranks, 195 MiB of all-reduce and 2.2 s of compute an iteration, made
// the launcher test take 37 s.)
const char* kEightRanks = "traces/generated/text_converter/DLRM_HybridParallel_8npus_1pass";

std::string Stripped(const std::string& results) {
  CliResult r = RunCli(GenieBinary() + " results strip --stdout " + results);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

// sh: start every command in the background, exit non-zero if any of them did.
std::string AllOf(const std::vector<std::string>& commands) {
  std::string sh = "pids=''; ";
  for (const auto& c : commands) sh += "(" + c + ") & pids=\"$pids $!\"; ";
  sh += "rc=0; for p in $pids; do wait $p || rc=1; done; exit $rc";
  return sh;
}

std::string TorchrunRank(int rank, int world, int port, const std::string& args) {
  return "env RANK=" + std::to_string(rank) + " WORLD_SIZE=" + std::to_string(world) +
         " LOCAL_RANK=" + std::to_string(rank) + " LOCAL_WORLD_SIZE=" + std::to_string(world) +
         " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " " + GenieBinary() +
         " run " + args;
}

TEST(Launchers, MpiexecGenieLaunchTorchrunSlurmAndOpenMpiEnvironmentsGiveIdenticalResults) {
  const std::string dir = FreshDir("launchers");
  const std::string w = Data(kEightRanks) + " --iterations 2 --verify --peer-timeout 20s";

  CliResult launch = RunCli(GenieBinary() + " launch -n 8 -- run " + w + " -o " + dir + "/launch");
  ASSERT_EQ(launch.exit_code, 0) << launch.output;

  const int port = FreeTcpPort();
  std::vector<std::string> ranks;
  for (int r = 0; r < 8; ++r)
    ranks.push_back(TorchrunRank(r, 8, port, w + " -o " + dir + "/torchrun"));
  CliResult torchrun = RunCli(AllOf(ranks));
  ASSERT_EQ(torchrun.exit_code, 0) << torchrun.output;

  const std::string a = Stripped(dir + "/launch/results.json");
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, Stripped(dir + "/torchrun/results.json"));
  EXPECT_NE(ReadFile(dir + "/torchrun/rank-3.jsonl").find("\"launcher\":\"torchrun\""),
            std::string::npos);

  // What srun and Open MPI's mpirun set, by hand, with a given rendezvous (the launchers
  // themselves, with none: launchers_e2e_test.cc).
  const std::string store = " --rendezvous tcp:127.0.0.1:";
  std::vector<std::string> slurm, ompi;
  const int slurm_port = FreeTcpPort(), ompi_port = FreeTcpPort();
  for (int r = 0; r < 8; ++r) {
    const std::string n = std::to_string(r);
    slurm.push_back("env SLURM_PROCID=" + n + " SLURM_NTASKS=8 SLURM_LOCALID=" + n +
                    " SLURM_JOB_ID=77 SLURM_STEP_ID=0 " + GenieBinary() + " run " + w + store +
                    std::to_string(slurm_port) + " -o " + dir + "/slurm");
    ompi.push_back("env OMPI_COMM_WORLD_RANK=" + n + " OMPI_COMM_WORLD_SIZE=8 " +
                   "OMPI_COMM_WORLD_LOCAL_RANK=" + n + " OMPI_COMM_WORLD_LOCAL_SIZE=8 " +
                   GenieBinary() + " run " + w + store + std::to_string(ompi_port) + " -o " + dir +
                   "/openmpi");
  }
  CliResult srun = RunCli(AllOf(slurm));
  ASSERT_EQ(srun.exit_code, 0) << srun.output;
  EXPECT_EQ(a, Stripped(dir + "/slurm/results.json"));
  EXPECT_NE(ReadFile(dir + "/slurm/rank-1.jsonl").find("\"job_id\":\"77.0\""), std::string::npos);
  CliResult mpirun = RunCli(AllOf(ompi));
  ASSERT_EQ(mpirun.exit_code, 0) << mpirun.output;
  EXPECT_EQ(a, Stripped(dir + "/openmpi/results.json"));

  GENIE_SKIP_IF(ToolMissing("mpiexec.mpich", "mpich"));
  CliResult mpi = RunCli("mpiexec.mpich -n 8 " + GenieBinary() + " run " + w +
                         " --rendezvous tcp:127.0.0.1:" + std::to_string(FreeTcpPort()) + " -o " +
                         dir + "/mpiexec");
  ASSERT_EQ(mpi.exit_code, 0) << mpi.output;
  EXPECT_NE(ReadFile(dir + "/mpiexec/rank-2.jsonl").find("\"launcher\":\"pmi\""),
            std::string::npos);
  EXPECT_EQ(a, Stripped(dir + "/mpiexec/results.json"));
}

// ---- hosts, NICs, the modelled intra-host dimension ---------------------------------------

TEST(Hosts, ABindListIsMappedByLocalRankLikeNcclSocketIfname) {
  const std::string dir = FreshDir("bind-list");
  ASSERT_EQ(RunCli(GenieBinary() + " gen collective --type all_reduce --size 1MiB --ranks 3 -o " +
                   dir + "/w")
                .exit_code,
            0);
  CliResult r = RunCli(GenieBinary() + " launch -n 3 -- run " + dir + "/w --bind lo,127.0.0.2 -o " +
                       dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(ReadFile(dir + "/out/rank-0.jsonl").find("\"bind\":\"127.0.0.1\""), std::string::npos);
  EXPECT_NE(ReadFile(dir + "/out/rank-1.jsonl").find("\"bind\":\"127.0.0.2\""), std::string::npos);
  EXPECT_NE(ReadFile(dir + "/out/rank-2.jsonl").find("\"bind\":\"127.0.0.1\""), std::string::npos);
  CliResult bad = RunCli(GenieBinary() + " launch -n 3 -- run " + dir + "/w --bind nosuchnic0 -o " +
                         dir + "/bad");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("nosuchnic0"), std::string::npos) << bad.output;
}

TEST(Hosts, TheIntraHostModelSetsTheTimeOfTransfersInsideAHost) {
  // 8 ranks as two hosts of 4 on one machine; inside a host a slow 0.1 GB/s switch.
  const std::string dir = FreshDir("intra-time");
  std::ofstream(dir + "/slow.yml")
      << "topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 0.1 ]\nlatency: [ 0.0 ]\n";
  ASSERT_EQ(RunCli(GenieBinary() + " gen collective --type all_reduce --size 8MiB --ranks 8 -o " +
                   dir + "/w")
                .exit_code,
            0);
  CliResult r = RunCli(GenieBinary() + " run " + dir + "/w --intra-host " + dir +
                       "/slow.yml --iterations 2 -o " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json results = json::parse(ReadFile(dir + "/out/results.json"));
  // Ring: 14 steps of a 1 MiB chunk, each crossing a modelled link on 6 of the 8 ranks:
  // no step can finish before its chunk's modelled time floor(2^20 / (0.1 * 2^30 / 1e9)) ns.
  const int64_t chunk_ns = static_cast<int64_t>((1 << 20) / (0.1 * (1 << 30) / 1e9));
  EXPECT_GE(results["summary"]["step_time_ns"]["min"].get<int64_t>(), 14 * chunk_ns);
  // With --verify the modelled messages carry their payload: every rank's result is checked.
  CliResult verify = RunCli(GenieBinary() + " run " + dir + "/w --intra-host " + dir +
                            "/slow.yml --verify -o " + dir + "/verify");
  ASSERT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_NE(verify.output.find("rank 5: verify: 1 collectives checked, all correct"),
            std::string::npos)
      << verify.output;
  CliResult bad = RunCli(GenieBinary() + " run " + dir + "/w --intra-host " +
                         Data("astra-sim-configs/Ring_16npus.yml") + " -o " + dir + "/bad");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("multiple"), std::string::npos) << bad.output;
}

// ---- failures -----------------------------------------------------------------------------

// Independent ranks (no launcher to clean up after them, nor to hide which process is which
// rank) on an all-reduce loop; killed, stopped or not, when the test ends.
struct LongRun {
  std::string dir;
  int world;
  std::vector<Child> ranks;

  // `run_args`: genie run's flags after the workload (iterations, timeouts).
  LongRun(const std::string& name, const std::string& run_args, int world_size = 4,
          const std::string& size = "8MiB")
      : world(world_size) {
    dir = FreshDir(name);
    EXPECT_EQ(RunCli(GenieBinary() + " gen collective --type all_reduce --size " + size +
                     " --ranks " + std::to_string(world) + " -o " + dir + "/w")
                  .exit_code,
              0);
    const int port = FreeTcpPort();
    for (int r = 0; r < world; ++r) {
      ranks.push_back(
          Spawn(TorchrunRank(r, world, port, dir + "/w " + run_args + " -o " + dir + "/out"),
                dir + "/rank" + std::to_string(r) + ".log"));
    }
  }
  ~LongRun() {
    for (auto& c : ranks) {
      Signal(c, SIGCONT);
      Signal(c, SIGKILL);
      WaitExit(c, 5);
    }
  }
  // True once every rank has finished an operation (connected, synchronised, running).
  bool WaitRunning(double timeout_s) {
    const double deadline = NowSeconds() + timeout_s;
    while (NowSeconds() < deadline) {
      bool all = true;
      for (int r = 0; r < world; ++r) {
        all =
            all &&
            ReadFile(dir + "/out/rank-" + std::to_string(r) + ".jsonl").find("\"record\":\"op\"") !=
                std::string::npos;
      }
      if (all) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
};

void ExpectOthersExitNamingRank(LongRun& run, int lost, double within_s) {
  const double t0 = NowSeconds();
  for (int r = 0; r < run.world; ++r) {
    if (r == lost) continue;
    auto code = WaitExit(run.ranks[r], within_s - (NowSeconds() - t0));
    ASSERT_TRUE(code.has_value()) << "rank " << r << " still running " << within_s
                                  << " s after rank " << lost << " was lost:\n"
                                  << ReadLog(run.ranks[r]);
    EXPECT_NE(*code, 0) << ReadLog(run.ranks[r]);
    EXPECT_NE(ReadLog(run.ranks[r]).find("rank " + std::to_string(lost)), std::string::npos)
        << "rank " << r << " does not name rank " << lost << ":\n"
        << ReadLog(run.ranks[r]);
    EXPECT_NE(ReadLog(run.ranks[r]).find("this rank was waiting on:"), std::string::npos)
        << ReadLog(run.ranks[r]);
  }
  // What every surviving rank recorded before the failure is still readable.
  CliResult show = RunCli(GenieBinary() + " results show " + run.dir + "/out/rank-0.jsonl");
  EXPECT_EQ(show.exit_code, 0) << show.output;
}

// How soon the others give up (about --peer-timeout) is measured by bench/failure_detection.sh;
// here 5x the timeout only tells "ends" from "hangs" on a machine busy with other tests.
TEST(Failures, AKilledRankMakesEveryOtherRankExitNamingIt) {
  LongRun run("kill", "--iterations 100000 --peer-timeout 3s");
  ASSERT_TRUE(run.WaitRunning(30)) << ReadLog(run.ranks[0]);
  Signal(run.ranks[2], SIGKILL);
  ExpectOthersExitNamingRank(run, 2, 15.0);
}

TEST(Failures, AStoppedRankIsDetectedByItsSilence) {
  LongRun run("stop", "--iterations 100000 --peer-timeout 3s");
  ASSERT_TRUE(run.WaitRunning(30)) << ReadLog(run.ranks[0]);
  Signal(run.ranks[1], SIGSTOP);
  ExpectOthersExitNamingRank(run, 1, 15.0);
}

// Connects to `address` ("ip:port"), writes `bytes`, lingers a moment, hangs up.
void Stranger(const std::string& address, const std::string& bytes) {
  const auto colon = address.rfind(':');
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &a.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0) << address;
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  close(fd);
}

// A well-formed hello of another job, as a genie rank of that job would send it.
std::string HelloOfAnotherJob() {
  const std::string job = "another-job";
  net::FrameHeader h;
  h.type = net::FrameType::kHello;
  h.job = net::JobHash(job);
  h.src = 1;
  h.dst = 0;
  h.length = job.size();
  h.offset = 2;  // world size
  unsigned char hdr[net::kFrameHeaderBytes];
  net::EncodeFrame(h, hdr);
  return std::string(reinterpret_cast<char*>(hdr), sizeof(hdr)) + job;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Strangers come while the run is under way: rank 1 mid-run, its peer (rank 0) stopped so that
// the run cannot end before both were turned away, however busy the machine. (It used to be a
// run long enough to outlast them: 2,000 iterations, ~25 s.)
TEST(Failures, StrangersWithGarbageOrAnotherJobAreRejectedAndTheRunCompletes) {
  LongRun run("strangers", "--iterations 100 --job-id real --peer-timeout 20s", 2, "4MiB");
  // Once rank 1 is connected its stream's clock record says where it listens.
  std::string address;
  for (int i = 0; i < 1500 && address.empty(); ++i) {
    std::ifstream in(run.dir + "/out/rank-1.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.value("record", "") == "clock") address = j.value("listen", "");
    }
    if (address.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(address.empty()) << ReadLog(run.ranks[1]);
  Signal(run.ranks[0], SIGSTOP);
  ASSERT_FALSE(WaitExit(run.ranks[0], 0).has_value())
      << "the run ended before it could be held for the strangers:\n"
      << ReadLog(run.ranks[0]);
  ASSERT_FALSE(WaitExit(run.ranks[1], 0).has_value()) << ReadLog(run.ranks[1]);
  Stranger(address, std::string("GET / HTTP/1.0\r\n\r\n") + std::string(100, 'x'));
  Stranger(address, HelloOfAnotherJob());
  const std::string rejected = "rank 1: rejected connection from";
  for (int i = 0; i < 3000 && Count(ReadLog(run.ranks[1]), rejected) < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(Count(ReadLog(run.ranks[1]), rejected), 2) << ReadLog(run.ranks[1]);
  Signal(run.ranks[0], SIGCONT);
  // The bound only tells "completes" from "hangs" while other tests load the machine.
  for (int r = 0; r < 2; ++r) {
    auto code = WaitExit(run.ranks[r], 300);
    ASSERT_TRUE(code.has_value()) << "rank " << r << " still running:\n" << ReadLog(run.ranks[r]);
    EXPECT_EQ(*code, 0) << "rank " << r << ":\n" << ReadLog(run.ranks[r]);
  }
  const std::string log = ReadLog(run.ranks[1]);
  EXPECT_EQ(Count(log, rejected), 2) << log;
  EXPECT_NE(log.find("not a genie peer"), std::string::npos) << log;
  EXPECT_NE(log.find("a rank of another job"), std::string::npos) << log;
  auto results = json::parse(ReadFile(run.dir + "/out/results.json"), nullptr, false);
  ASSERT_TRUE(results.is_object()) << ReadLog(run.ranks[0]);
  EXPECT_EQ(results["iterations"].size(), 100u);
}

}  // namespace
}  // namespace genie::testing
