#include "genie/record/run_folder.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "genie/env/manual_env.h"
#include "genie/record/recorder.h"
#include "tests/support/temp_dir.h"

namespace genie::record {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;

class RunFolderTest : public ::testing::Test {
 protected:
  TempDir tmp_{"run-folder"};
  std::string dir_ = tmp_.path();
};

TEST_F(RunFolderTest, AJobsRanksShareTheFolderAnotherJobIsRefusedUntilTheyAreGone) {
  auto a0 = ClaimOutputFolder(dir_, "job-a", 4);
  ASSERT_TRUE(a0.ok()) << a0.status().ToString();
  auto a1 = ClaimOutputFolder(dir_, "job-a", 4);  // another rank of the same job
  ASSERT_TRUE(a1.ok()) << a1.status().ToString();

  auto b = ClaimOutputFolder(dir_, "job-b", 4);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Status::Code::kInvalidArgument);
  const std::string& m = b.status().message();
  EXPECT_NE(m.find("output folder " + dir_ + " is in use"), std::string::npos) << m;
  EXPECT_NE(m.find("job job-a"), std::string::npos) << m;
  EXPECT_NE(m.find("own --output"), std::string::npos) << m;

  a0->reset();
  EXPECT_FALSE(ClaimOutputFolder(dir_, "job-b", 4).ok());  // rank 1 of job a still runs
  a1->reset();
  auto b2 = ClaimOutputFolder(dir_, "job-b", 4);
  ASSERT_TRUE(b2.ok()) << b2.status().ToString();
  EXPECT_FALSE(ClaimOutputFolder(dir_, "job-a", 4).ok());  // now job b holds it
}

// A killed job never blocks the next one: the kernel drops its lock. One-rank jobs (which all
// derive the same job id) are told apart by their process.
TEST_F(RunFolderTest, AKilledOwnerReleasesTheFolderAndOneRankJobsAreKeyedByProcess) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto c = ClaimOutputFolder(dir_, "job-x", 1);
    char ok = c.ok() ? 'y' : 'n';
    (void)!write(ready[1], &ok, 1);
    pause();
    _exit(0);
  }
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  auto same_id = ClaimOutputFolder(dir_, "job-x", 1);
  EXPECT_FALSE(same_id.ok());
  EXPECT_NE(same_id.status().message().find("process " + std::to_string(child)), std::string::npos)
      << same_id.status().message();

  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  auto after = ClaimOutputFolder(dir_, "job-x", 1);
  EXPECT_TRUE(after.ok()) << after.status().ToString();
  close(ready[0]);
  close(ready[1]);
}

// A process that stopped while holding the lock file's mutex byte (SIGSTOP between check and
// claim) would keep every later job waiting: the claim gives up after 10 s of its clock, polling
// every 5 ms, and says why. On a manual clock: no 10 s sleep.
TEST_F(RunFolderTest, AHolderOfTheMutexThatDoesNotGoOnIsGivenUpOnAfterTenSeconds) {
  const std::string lock = dir_ + "/.genie-run.lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  struct flock l {};
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  l.l_start = 0;  // the mutex byte
  l.l_len = 1;
  ASSERT_EQ(::fcntl(fd, F_OFD_SETLK, &l), 0);  // another open file description: conflicts
  env::ManualEnv env(1000 * kNsPerSec);
  auto claim = ClaimOutputFolder(dir_, "job-b", 2, &env);
  ASSERT_FALSE(claim.ok());
  EXPECT_NE(claim.status().message().find("does not go on"), std::string::npos)
      << claim.status().ToString();
  EXPECT_GE(env.Now(), 1010 * kNsPerSec);
  EXPECT_LE(env.Now(), 1010 * kNsPerSec + 5 * kNsPerMs);
  ::close(fd);
  EXPECT_TRUE(ClaimOutputFolder(dir_, "job-b", 2, &env).ok());
}

TEST_F(RunFolderTest, AMissingFolderIsAnErrorNamingIt) {
  auto c = ClaimOutputFolder(dir_ + "/nope", "j", 2);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(dir_ + "/nope"), std::string::npos);
}

TEST_F(RunFolderTest, StreamsAreMatchedToTheirRunById) {
  EXPECT_EQ(StreamPath(dir_, 3), dir_ + "/rank-3.jsonl");
  {
    auto r = Recorder::Create(StreamPath(dir_, 0), {{"rank", 0}});
    ASSERT_TRUE(r.ok());
    (*r)->Note("clock", {{"rank", 0}, {"run_id", "run-1"}});
  }
  EXPECT_TRUE(IsStreamOfRun(StreamPath(dir_, 0), "run-1"));
  EXPECT_FALSE(IsStreamOfRun(StreamPath(dir_, 0), "run-2"));
  EXPECT_FALSE(IsStreamOfRun(StreamPath(dir_, 0), ""));
  EXPECT_FALSE(IsStreamOfRun(StreamPath(dir_, 1), "run-1"));  // no such file
  std::ofstream(StreamPath(dir_, 2)) << "{}\n{\"record\":7,\"run_id\":[1]}\n";
  EXPECT_FALSE(IsStreamOfRun(StreamPath(dir_, 2), "run-1"));  // garbage, no throw
}

}  // namespace
}  // namespace genie::record
