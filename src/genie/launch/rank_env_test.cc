#include "genie/launch/rank_env.h"

#include <map>
#include <vector>

#include <gtest/gtest.h>

namespace genie::launch {
namespace {

Result<RankEnv> From(const std::map<std::string, std::string>& vars) {
  return DiscoverRankEnv([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(RankEnvTest, GenieLauncherVariables) {
  auto e = From({{"GENIE_RANK", "2"}, {"GENIE_WORLD_SIZE", "4"}, {"GENIE_LOCAL_RANK", "2"},
                 {"GENIE_RENDEZVOUS", "dir:/tmp/x"}, {"GENIE_JOB_ID", "j7"}});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->rank, 2);
  EXPECT_EQ(e->world_size, 4);
  EXPECT_EQ(e->local_rank, 2);
  EXPECT_EQ(e->rendezvous, "dir:/tmp/x");
  EXPECT_EQ(e->job_id, "j7");
  EXPECT_EQ(e->source, "genie");
}

TEST(RankEnvTest, TorchrunStyleUsesMasterAddrAndPort) {
  auto e = From({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"},
                 {"MASTER_ADDR", "10.1.2.3"}, {"MASTER_PORT", "29500"}});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->rank, 5);
  EXPECT_EQ(e->world_size, 8);
  EXPECT_EQ(e->local_rank, 1);
  EXPECT_EQ(e->local_world_size, 4);
  EXPECT_EQ(e->rendezvous, "tcp:10.1.2.3:29500");
  EXPECT_EQ(e->source, "torchrun");
  // Derived job id: the same on every rank because it depends only on the rendezvous.
  auto other = From({{"RANK", "0"}, {"WORLD_SIZE", "8"}, {"MASTER_ADDR", "10.1.2.3"},
                     {"MASTER_PORT", "29500"}});
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(e->job_id, other->job_id);
  EXPECT_EQ(e->job_id.rfind("job-", 0), 0u);
}

TEST(RankEnvTest, OpenMpiPmiAndSlurm) {
  auto ompi = From({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                    {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"GENIE_RENDEZVOUS", "dir:/d"}});
  ASSERT_TRUE(ompi.ok());
  EXPECT_EQ(ompi->source, "openmpi");
  EXPECT_EQ(ompi->rank, 3);
  EXPECT_EQ(ompi->local_rank, 1);
  auto pmi = From({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"},
                   {"GENIE_RENDEZVOUS", "dir:/d"}});
  ASSERT_TRUE(pmi.ok());
  EXPECT_EQ(pmi->source, "pmi");
  EXPECT_EQ(pmi->world_size, 2);
  auto slurm = From({{"SLURM_PROCID", "6"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "2"},
                     {"SLURM_NTASKS_PER_NODE", "8(x2)"}, {"SLURM_JOB_ID", "1234"},
                     {"SLURM_STEP_ID", "0"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}});
  ASSERT_TRUE(slurm.ok()) << slurm.status().ToString();
  EXPECT_EQ(slurm->source, "slurm");
  EXPECT_EQ(slurm->rank, 6);
  EXPECT_EQ(slurm->local_world_size, 8);
  EXPECT_EQ(slurm->job_id, "1234.0");
}

TEST(RankEnvTest, NoLauncherMeansOneRank) {
  auto e = From({});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->rank, 0);
  EXPECT_EQ(e->world_size, 1);
  EXPECT_EQ(e->source, "none");
}

TEST(RankEnvTest, ErrorsNameTheVariable) {
  auto bad = From({{"GENIE_RANK", "x"}, {"GENIE_WORLD_SIZE", "2"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("GENIE_RANK='x'"), std::string::npos);
  auto high = From({{"RANK", "4"}, {"WORLD_SIZE", "4"}, {"GENIE_RENDEZVOUS", "dir:/d"}});
  ASSERT_FALSE(high.ok());
  EXPECT_NE(high.status().message().find("RANK=4 is not below WORLD_SIZE=4"), std::string::npos);
  auto no_size = From({{"PMI_RANK", "0"}});
  ASSERT_FALSE(no_size.ok());
  EXPECT_NE(no_size.status().message().find("PMI_SIZE"), std::string::npos);
  auto no_rdzv = From({{"RANK", "0"}, {"WORLD_SIZE", "2"}});
  ASSERT_FALSE(no_rdzv.ok());
  EXPECT_NE(no_rdzv.status().message().find("MASTER_ADDR"), std::string::npos);
}

// Each of these started ranks that then failed late with a confusing message (or listened on a
// random port no peer could know): refused up front, naming the variable.
TEST(RankEnvTest, NonsenseNumbersAndPortsAreRefused) {
  const std::map<std::string, std::string> ok = {
      {"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}};
  ASSERT_TRUE(From(ok).ok());
  struct Case {
    const char* var;
    const char* value;  // nullptr: unset
    const char* named;
  };
  for (const Case& c : std::vector<Case>{{"MASTER_PORT", "0", "MASTER_PORT='0'"},
                                         {"MASTER_PORT", "65536", "MASTER_PORT='65536'"},
                                         {"MASTER_PORT", "-1", "MASTER_PORT='-1'"},
                                         {"MASTER_PORT", "29500x", "MASTER_PORT='29500x'"},
                                         {"MASTER_PORT", "", "MASTER_PORT=''"},
                                         {"MASTER_ADDR", "", "MASTER_ADDR=''"},
                                         {"MASTER_ADDR", nullptr, "MASTER_ADDR='(unset)'"},
                                         {"WORLD_SIZE", "0", "WORLD_SIZE='0'"},
                                         {"WORLD_SIZE", " 2", "WORLD_SIZE=' 2'"},
                                         {"WORLD_SIZE", "2.0", "WORLD_SIZE='2.0'"},
                                         {"RANK", "-1", "RANK='-1'"},
                                         {"RANK", "+1", "RANK='+1'"},
                                         {"LOCAL_WORLD_SIZE", "3", "LOCAL_WORLD_SIZE=3"}}) {
    auto vars = ok;
    if (std::string(c.var) == "LOCAL_WORLD_SIZE") vars["LOCAL_RANK"] = "1";
    if (c.value == nullptr) {
      vars.erase(c.var);
    } else {
      vars[c.var] = c.value;
    }
    auto r = From(vars);
    ASSERT_FALSE(r.ok()) << c.var << "=" << (c.value ? c.value : "(unset)");
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.named), std::string::npos) << r.status().message();
  }
  auto local = From({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"},
                     {"LOCAL_WORLD_SIZE", "2"}, {"GENIE_RENDEZVOUS", "dir:/d"}});
  ASSERT_FALSE(local.ok());
  EXPECT_NE(local.status().message().find("LOCAL_RANK=2 and LOCAL_WORLD_SIZE=2"),
            std::string::npos)
      << local.status().message();
  for (const char* spec : {"tcp:127.0.0.1:0", "tcp:127.0.0.1:70000", "tcp:127.0.0.1", "tcp::5",
                           "udp:h:5", "dir:"}) {
    auto r = From({{"GENIE_RANK", "0"}, {"GENIE_WORLD_SIZE", "2"}, {"GENIE_RENDEZVOUS", spec}});
    ASSERT_FALSE(r.ok()) << spec;
    EXPECT_NE(r.status().message().find(spec), std::string::npos) << r.status().message();
  }
  EXPECT_TRUE(From({{"GENIE_RANK", "0"}, {"GENIE_WORLD_SIZE", "2"},
                    {"GENIE_RENDEZVOUS", "tcp:[::1]:29500"}})
                  .ok());
}

TEST(RankEnvTest, TheLaunchersOwnStoreIsTheRendezvousWhenNoneIsGiven) {
  // mpiexec.mpich (Hydra): PMI-1 on PMI_FD; the job id is asked of the store later.
  auto hydra = From({{"PMI_RANK", "1"}, {"PMI_SIZE", "4"}, {"PMI_FD", "6"}});
  ASSERT_TRUE(hydra.ok()) << hydra.status().ToString();
  EXPECT_EQ(hydra->rendezvous, "pmi");
  EXPECT_EQ(hydra->source, "pmi");
  EXPECT_TRUE(hydra->job_id_derived);
  // Open MPI's mpirun: PMIx, and its own job id.
  auto ompi = From({{"OMPI_COMM_WORLD_RANK", "0"},
                    {"OMPI_COMM_WORLD_SIZE", "4"},
                    {"OMPI_MCA_ess_base_jobid", "1891041281"},
                    {"PMIX_NAMESPACE", "1891041281"},
                    {"PMIX_RANK", "0"}});
  ASSERT_TRUE(ompi.ok()) << ompi.status().ToString();
  EXPECT_EQ(ompi->rendezvous, "pmix");
  EXPECT_EQ(ompi->job_id, "1891041281");
  EXPECT_FALSE(ompi->job_id_derived);
  // srun --mpi=pmi2 sets PMI_RANK too (the rank is the launcher's, the job Slurm's).
  auto pmi2 = From({{"SLURM_PROCID", "2"},
                    {"SLURM_NTASKS", "4"},
                    {"PMI_RANK", "2"},
                    {"PMI_SIZE", "4"},
                    {"PMI_FD", "5"},
                    {"PMI_JOBID", "77.0"}});
  ASSERT_TRUE(pmi2.ok()) << pmi2.status().ToString();
  EXPECT_EQ(pmi2->rendezvous, "pmi");
  EXPECT_EQ(pmi2->job_id, "77.0");
  // srun --mpi=pmix.
  auto pmix = From({{"SLURM_PROCID", "3"},
                    {"SLURM_NTASKS", "4"},
                    {"SLURM_JOB_ID", "77"},
                    {"SLURM_STEP_ID", "1"},
                    {"PMIX_NAMESPACE", "slurm.pmix.77.1"},
                    {"PMIX_RANK", "3"}});
  ASSERT_TRUE(pmix.ok()) << pmix.status().ToString();
  EXPECT_EQ(pmix->rendezvous, "pmix");
  EXPECT_EQ(pmix->job_id, "77.1");
  // mpiexec inside a job step that had PMIx: mpiexec's store, it set the rank.
  auto nested = From({{"PMI_RANK", "0"},
                      {"PMI_SIZE", "2"},
                      {"PMI_FD", "6"},
                      {"PMIX_NAMESPACE", "x"},
                      {"PMIX_RANK", "5"}});
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(nested->rendezvous, "pmi");
}

TEST(RankEnvTest, AGivenRendezvousWinsOverTheLaunchersStore) {
  auto master = From({{"PMI_RANK", "1"},
                      {"PMI_SIZE", "4"},
                      {"PMI_FD", "6"},
                      {"MASTER_ADDR", "10.0.0.1"},
                      {"MASTER_PORT", "29500"}});
  ASSERT_TRUE(master.ok());
  EXPECT_EQ(master->rendezvous, "tcp:10.0.0.1:29500");
  auto given = From(
      {{"PMI_RANK", "1"}, {"PMI_SIZE", "4"}, {"PMI_FD", "6"}, {"GENIE_RENDEZVOUS", "dir:/tmp/r"}});
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->rendezvous, "dir:/tmp/r");
  // Forced by hand (e.g. PMI_FD hidden by a wrapper): accepted as a spec.
  EXPECT_TRUE(CheckRendezvousSpec("pmi").ok());
  EXPECT_TRUE(CheckRendezvousSpec("pmix").ok());
  EXPECT_FALSE(CheckRendezvousSpec("pmi3").ok());
  // A launcher without a store (srun --mpi=none): the error says what srun needs.
  auto none = From({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "4"}});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("--mpi=pmi2"), std::string::npos)
      << none.status().message();
  // Hydra's port mode gives the rank over the connection only: refused, not run as one rank.
  auto port = From({{"PMI_PORT", "vm:37639"}, {"PMI_ID", "1"}});
  ASSERT_FALSE(port.ok());
  EXPECT_NE(port.status().message().find("-pmi-port"), std::string::npos);
  // One rank needs no store.
  auto one = From({{"PMI_RANK", "0"}, {"PMI_SIZE", "1"}, {"PMI_FD", "6"}});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->rendezvous, "");
}

}  // namespace
}  // namespace genie::launch
