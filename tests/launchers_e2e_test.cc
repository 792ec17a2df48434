// genie run started by the launchers alone, as a user of an MPI cluster starts it: no
// --rendezvous, no MASTER_ADDR. The ranks exchange their addresses through the launcher's own
// store: MPICH's mpiexec (Hydra, PMI-1 on PMI_FD), Open MPI's mpirun (PMIx), and a real Slurm
// (slurmctld + slurmd started here on a temporary slurm.conf, stopped after whatever happens;
// srun with its default PMIx plugin and with --mpi=pmi2). Each run's results, timing stripped,
// must equal genie launch's. A launcher that is not installed, or daemons that cannot start,
// skip their test saying so (scripts/install-deps.sh installs them all).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/port.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

namespace fs = std::filesystem;

// The same environment but for anything that would name a rendezvous: the launcher must do.
const char* kNoRendezvous =
    "env -u GENIE_RENDEZVOUS -u MASTER_ADDR -u MASTER_PORT -u GENIE_JOB_ID -u GENIE_RANK ";

std::string Stripped(const std::string& results) {
  CliResult r = RunCli(GenieBinary() + " results strip --stdout " + results);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A 4-rank workload (an all-reduce and an all-to-all) and genie launch's results for it: what
// every launcher must reproduce.
class LauncherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(FreshDir("launchers"));
    const std::string gen = GenieBinary() + " gen collective --ranks 4 --size 2MiB --type ";
    ASSERT_EQ(RunCli(gen + "all_reduce -o " + *dir_ + "/ar").exit_code, 0);
    CliResult r = RunCli("cd " + *dir_ + " && " + GenieBinary() + " launch -n 4 -- run " + *dir_ +
                         "/ar --verify -o " + *dir_ + "/launch");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    reference_ = new std::string(Stripped(*dir_ + "/launch/results.json"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete reference_;
  }

  // Runs `launcher` + "genie run W --verify" in a fresh folder with no other flag (results go
  // to ./genie-results) and checks what every rank said and wrote. Returns the folder.
  static std::string RunUnder(const std::string& name, const std::string& launcher,
                              const std::string& env = "") {
    const std::string where = *dir_ + "/" + name;
    fs::create_directories(where);
    CliResult r = RunCli("cd " + where + " && " + kNoRendezvous + env + " timeout 300 " + launcher +
                         " " + GenieBinary() + " run " + *dir_ + "/ar --verify");
    EXPECT_EQ(r.exit_code, 0) << name << ":\n" << r.output;
    EXPECT_EQ(Count(r.output, "verify: 1 collectives checked, all correct"), 4) << r.output;
    EXPECT_EQ(Stripped(where + "/genie-results/results.json"), *reference_) << name;
    return where + "/genie-results";
  }

  static std::string* dir_;
  static std::string* reference_;
};
std::string* LauncherTest::dir_ = nullptr;
std::string* LauncherTest::reference_ = nullptr;

TEST_F(LauncherTest, MpichMpiexecNeedsNoRendezvous) {
  GENIE_SKIP_IF(ToolMissing("mpiexec.mpich", "mpich"));
  const std::string out = RunUnder("mpiexec", "mpiexec.mpich -n 4");
  const std::string stream = ReadFile(out + "/rank-2.jsonl");
  EXPECT_NE(stream.find("\"launcher\":\"pmi\""), std::string::npos);
  // The job is named by Hydra's store (kvsname), so two mpiexec jobs never share an id.
  EXPECT_NE(stream.find("\"job_id\":\"pmi-kvs_"), std::string::npos) << stream.substr(0, 2000);
}

TEST_F(LauncherTest, AGivenRendezvousStillWinsUnderMpiexec) {
  GENIE_SKIP_IF(ToolMissing("mpiexec.mpich", "mpich"));
  const std::string out =
      RunUnder("mpiexec-tcp", "mpiexec.mpich -n 4",
               "GENIE_RENDEZVOUS=tcp:127.0.0.1:" + std::to_string(FreeTcpPort()) + " ");
  // Not named by the store: the id is derived from the given rendezvous.
  EXPECT_NE(ReadFile(out + "/rank-1.jsonl").find("\"job_id\":\"job-"), std::string::npos);
}

// Hydra does not stop a job when one of its processes exits before the exchange: the others
// must not wait for ever, and must say where they waited.
TEST_F(LauncherTest, UnderMpiexecAProcessThatNeverJoinsStopsTheOthersWithinThePeerTimeout) {
  GENIE_SKIP_IF(ToolMissing("mpiexec.mpich", "mpich"));
  const std::string where = FreshDir("mpiexec-missing");
  const double t0 = NowSeconds();
  CliResult r = RunCli("cd " + where + " && " + kNoRendezvous + "timeout 120 mpiexec.mpich -n 3 " +
                       GenieBinary() + " run " + *dir_ + "/ar --peer-timeout 3s : -n 1 false");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(NowSeconds() - t0, 60.0) << r.output;
  // Whichever rank times out first speaks; Hydra then kills the others, so no rank is named.
  EXPECT_NE(r.output.find(": rendezvous through the launcher's PMI store (kvs kvs_"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("waiting for all 4 ranks"), std::string::npos) << r.output;
}

TEST_F(LauncherTest, OpenMpiMpirunNeedsNoRendezvous) {
  GENIE_SKIP_IF(ToolMissing("mpirun.openmpi", "openmpi-bin"));
#ifndef GENIE_HAVE_PMIX
  GTEST_SKIP() << "genie was built without PMIx (libpmix-dev), which Open MPI's mpirun offers; "
                  "scripts/install-deps.sh installs it";
#endif
  const std::string out =
      RunUnder("openmpi", "mpirun.openmpi --allow-run-as-root --oversubscribe -n 4");
  EXPECT_NE(ReadFile(out + "/rank-3.jsonl").find("\"launcher\":\"openmpi\""), std::string::npos);
}

// A one-node Slurm cluster of this machine: slurmctld and slurmd as root on free ports, state
// and logs in a temporary folder, no authentication (auth/none: nothing leaves the machine).
// Stopped in the destructor — daemons, job steps and their ranks, found by the SLURM_CONF in
// their environment, so nothing else on the machine is touched.
class SlurmCluster {
 public:
  explicit SlurmCluster(const std::string& dir) : dir_(dir), conf_(dir + "/slurm.conf") {}
  ~SlurmCluster() { Stop(); }

  // Empty when the cluster is up with its node idle, else why not (for the skip message).
  std::string Start() {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    const std::string node = std::string(host).substr(0, std::string(host).find('.'));
    fs::create_directories(dir_ + "/state");
    fs::create_directories(dir_ + "/spool");
    std::ofstream(dir_ + "/plugstack.conf") << "";
#ifdef GENIE_HAVE_PMIX
    const bool pmix = RunCli("ls /usr/lib/*/slurm-wlm/mpi_pmix.so").exit_code == 0;
#else
    const bool pmix = false;  // genie would refuse it: pmi2, whose plugin serves PMI-1 too
#endif
    std::ofstream conf(conf_);
    conf << "ClusterName=genietest\n"
         << "SlurmctldHost=" << node << "(127.0.0.1)\n"
         << "SlurmUser=root\nSlurmdUser=root\n"
         << "AuthType=auth/none\nCredType=cred/none\n"
         << "SlurmctldPort=" << FreeTcpPort() << "\nSlurmdPort=" << FreeTcpPort() << "\n"
         << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_ << "/spool\n"
         << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\n"
         << "SlurmdPidFile=" << dir_ << "/slurmd.pid\n"
         << "SlurmctldLogFile=" << dir_ << "/slurmctld.log\n"
         << "SlurmdLogFile=" << dir_ << "/slurmd.log\n"
         << "PlugStackConfig=" << dir_ << "/plugstack.conf\n"
         << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
         << "JobAcctGatherType=jobacct_gather/none\nSwitchType=switch/none\n"
         << "SchedulerType=sched/builtin\nSelectType=select/cons_tres\n"
         << "SelectTypeParameters=CR_Core\nSlurmdParameters=config_overrides\n"
         << "ReturnToService=2\nMpiDefault=" << (pmix ? "pmix" : "pmi2") << "\n"
         << "NodeName=" << node << " NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN\n"
         << "PartitionName=genie Nodes=ALL Default=YES MaxTime=INFINITE State=UP "
         << "OverSubscribe=FORCE\n";
    conf.close();
    started_ = true;
    CliResult ctld = RunCli(Env() + "slurmctld -i -f " + conf_);
    CliResult slurmd = RunCli(Env() + "slurmd -f " + conf_);
    if (ctld.exit_code != 0 || slurmd.exit_code != 0) {
      return "slurmctld/slurmd did not start: " + ctld.output + slurmd.output + Logs();
    }
    for (int i = 0; i < 300; ++i) {
      CliResult s = RunCli(Env() + "sinfo -h -o %T");
      if (s.exit_code == 0 && s.output.find("idle") != std::string::npos) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "the Slurm node did not become idle within 30 s" + Logs();
  }

  // "SLURM_CONF=... " for a command line.
  std::string Env() const { return "SLURM_CONF=" + conf_ + " "; }
  std::string Logs() const {
    return "\n--- slurmctld.log\n" + ReadFile(dir_ + "/slurmctld.log") + "\n--- slurmd.log\n" +
           ReadFile(dir_ + "/slurmd.log");
  }

 private:
  // Every process whose environment names this cluster's slurm.conf (daemons, slurmstepd,
  // ranks), and the daemons by their pid files.
  std::vector<pid_t> Ours() const {
    std::vector<pid_t> pids;
    const std::string mark = "SLURM_CONF=" + conf_;
    for (const auto& e : fs::directory_iterator("/proc")) {
      const std::string name = e.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = std::stoi(name);
      if (pid == getpid()) continue;
      std::string env = ReadFile(e.path().string() + "/environ");
      for (char& c : env) {
        if (c == '\0') c = '\n';
      }
      if (env.find(mark + "\n") != std::string::npos) pids.push_back(pid);
    }
    for (const char* f : {"/slurmctld.pid", "/slurmd.pid"}) {
      const std::string p = ReadFile(dir_ + f);
      if (p.empty() || p.find_first_not_of("0123456789\n") != std::string::npos) continue;
      // Still the daemon that wrote it (not a recycled pid).
      if (ReadFile("/proc/" + std::to_string(std::stoi(p)) + "/cmdline").find("slurm") == 0 ||
          ReadFile("/proc/" + std::to_string(std::stoi(p)) + "/cmdline").find("/slurm") !=
              std::string::npos) {
        pids.push_back(std::stoi(p));
      }
    }
    return pids;
  }

  void Stop() {
    if (!started_) return;
    RunCli(Env() + "scancel --full --quiet --partition=genie 2>/dev/null");
    for (pid_t p : Ours()) kill(p, SIGTERM);
    for (int i = 0; i < 50; ++i) {
      bool alive = false;
      for (pid_t p : Ours()) alive = alive || kill(p, 0) == 0;
      if (!alive) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (pid_t p : Ours()) kill(p, SIGKILL);
  }

  std::string dir_, conf_;
  bool started_ = false;
};

bool HaveSlurm() {
  return ToolMissing("slurmctld", "slurmctld").empty() && ToolMissing("slurmd", "slurmd").empty() &&
         ToolMissing("srun", "slurm-client").empty() &&
         ToolMissing("sinfo", "slurm-client").empty();
}

TEST_F(LauncherTest, SlurmSrunNeedsNoRendezvous) {
  if (!HaveSlurm()) {
    GTEST_SKIP() << "Slurm (Debian packages slurmctld, slurmd, slurm-client) is not installed; "
                    "scripts/install-deps.sh installs them";
  }
  GENIE_SKIP_IF(RootMissing("start slurmd"));
  SlurmCluster slurm(FreshDir("slurm-cluster"));
  const std::string why = slurm.Start();
  if (!why.empty()) GTEST_SKIP() << "cannot start a Slurm cluster on this machine: " << why;
  // srun's default plugin (slurm.conf's MpiDefault: PMIx where Slurm has it).
  std::string out = RunUnder("srun", "srun -n 4", slurm.Env());
  std::string stream = ReadFile(out + "/rank-0.jsonl");
#ifdef GENIE_HAVE_PMIX
  EXPECT_NE(stream.find("\"launcher\":\"slurm\""), std::string::npos) << slurm.Logs();
#endif
  EXPECT_NE(stream.find("\"job_id\":\""), std::string::npos);
  // PMI-2's plugin, which also serves the PMI-1 wire protocol genie speaks.
  out = RunUnder("srun-pmi2", "srun --mpi=pmi2 -n 4", slurm.Env());
  EXPECT_NE(ReadFile(out + "/rank-0.jsonl").find("\"launcher\":\"pmi\""), std::string::npos);
  // No store (--mpi=none): the error says which srun option gives one.
  CliResult none =
      RunCli("cd " + FreshDir("srun-none") + " && " + kNoRendezvous + slurm.Env() +
             "timeout 120 srun --mpi=none -n 2 " + GenieBinary() + " run " + *dir_ + "/ar 2>&1");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.output.find("--mpi=pmi2"), std::string::npos) << none.output;
}

}  // namespace
}  // namespace genie::testing
