#include "genie/net/rendezvous.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "genie/env/faulty_env.h"
#include "genie/env/manual_env.h"
#include "tests/support/port.h"
#include "tests/support/temp_dir.h"

namespace genie::net {
namespace {

using ::genie::testing::FreeTcpPort;
using ::genie::testing::TempDir;

// Runs `n` ranks concurrently and returns each one's result.
std::vector<Result<std::vector<std::string>>> RunRanks(const std::string& spec, int n,
                                                       const std::string& job = "j1",
                                                       TimeNs timeout = 10 * kNsPerSec) {
  std::vector<Result<std::vector<std::string>>> out(n, Status::Internal("not run"));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      RendezvousRequest q{spec, job, r, n, "10.0.0." + std::to_string(r) + ":" + std::to_string(1000 + r), timeout};
      out[r] = ExchangeAddresses(q);
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

void ExpectTable(const std::vector<Result<std::vector<std::string>>>& results) {
  int n = static_cast<int>(results.size());
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(results[r].ok()) << "rank " << r << ": " << results[r].status().ToString();
    ASSERT_EQ(static_cast<int>(results[r]->size()), n);
    for (int p = 0; p < n; ++p) {
      EXPECT_EQ((*results[r])[p], "10.0.0." + std::to_string(p) + ":" + std::to_string(1000 + p));
    }
  }
}

TEST(RendezvousTest, DirectoryExchangeGivesEveryRankTheSameTable) {
  const TempDir tmp("rendezvous");
  std::string dir = tmp.path();
  ExpectTable(RunRanks("dir:" + dir, 5));
}

TEST(RendezvousTest, TcpStoreOnRankZero) {
  ExpectTable(RunRanks("tcp:127.0.0.1:" + std::to_string(FreeTcpPort()), 4));
}

TEST(RendezvousTest, TcpStoreRefusesAnotherJobAndStillServesItsOwn) {
  std::string spec = "tcp:127.0.0.1:" + std::to_string(FreeTcpPort());
  const int n = 3;
  std::vector<Result<std::vector<std::string>>> results(n, Status::Internal("not run"));
  auto run = [&](int r) {
    results[r] = ExchangeAddresses({spec, "j1", r, n,
                                    "10.0.0." + std::to_string(r) + ":" + std::to_string(1000 + r),
                                    10 * kNsPerSec});
  };
  std::thread rank0(run, 0);
  // The stranger registers while the store waits for ranks 1 and 2, and is refused.
  auto stranger = ExchangeAddresses({spec, "other-job", 1, n, "1.2.3.4:5", 5 * kNsPerSec});
  std::thread rank1(run, 1), rank2(run, 2);
  rank0.join();
  rank1.join();
  rank2.join();
  ExpectTable(results);
  ASSERT_FALSE(stranger.ok());
  EXPECT_NE(stranger.status().message().find("job id 'other-job'"), std::string::npos)
      << stranger.status().message();
}

// One rank's exchange under the job id "same-job"; nonce and local block as a launcher gives.
Result<std::vector<std::string>> Rank(const std::string& spec, int rank, int n,
                                      const std::string& address, TimeNs timeout,
                                      const std::string& nonce = "", int local_rank = -1,
                                      int local_size = -1, env::Env* env = nullptr) {
  return ExchangeAddresses({spec, "same-job", rank, n, address, timeout},
                           {nonce, local_rank, local_size}, env);
}

// Two torchrun-style jobs (no nonces: the same job id, derived from the same MASTER_PORT).
// Job B's rank 0 finds the port taken; its ranks 1 and 2 reach job A's store, where rank 2 is
// still missing. Job A must not complete with B's rank 2: both stop, saying why.
TEST(RendezvousTest, ASecondJobOnTheSamePortIsRejectedNotJoined) {
  const std::string spec = "tcp:127.0.0.1:" + std::to_string(FreeTcpPort());
  const int n = 3;
  const TimeNs timeout = 3 * kNsPerSec;
  Result<std::vector<std::string>> a0 = Status::Internal("not run"), a1 = a0, b0 = a0, b1 = a0,
                                   b2 = a0;
  std::thread ta0([&] { a0 = Rank(spec, 0, n, "a0:1", timeout); });
  std::thread ta1([&] { a1 = Rank(spec, 1, n, "a1:1", timeout); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // A's store is up
  std::thread tb0([&] { b0 = Rank(spec, 0, n, "b0:1", timeout); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::thread tb2([&] { b2 = Rank(spec, 2, n, "b2:1", timeout); });
  std::thread tb1([&] { b1 = Rank(spec, 1, n, "b1:1", timeout); });
  for (auto* t : {&ta0, &ta1, &tb0, &tb1, &tb2}) t->join();
  for (auto* r : {&a0, &a1, &b0, &b1, &b2}) {
    EXPECT_FALSE(r->ok()) << "a rank joined the other job: " << (*r)->at(0) << " "
                          << (*r)->at(1) << " " << (*r)->at(2);
  }
  ASSERT_FALSE(a0.ok());
  EXPECT_EQ(a0.status().code(), Status::Code::kInvalidArgument) << a0.status().ToString();
  EXPECT_NE(a0.status().message().find("two jobs use the rendezvous store on 127.0.0.1:"),
            std::string::npos)
      << a0.status().message();
  ASSERT_FALSE(b0.ok());
  EXPECT_EQ(b0.status().code(), Status::Code::kInvalidArgument) << b0.status().ToString();
  EXPECT_NE(b0.status().message().find("another job's store"), std::string::npos)
      << b0.status().message();
}

// genie launch gives every rank its launch's nonce: a stray rank of another launch claiming one
// of rank 0's ranks is refused alone, naming it, and the job completes with its own ranks.
TEST(RendezvousTest, AStrayRankOfAnotherLaunchIsRefusedAndTheJobCompletes) {
  const std::string spec = "tcp:127.0.0.1:" + std::to_string(FreeTcpPort());
  const int n = 3;
  std::vector<Result<std::vector<std::string>>> results(n, Status::Internal("not run"));
  auto run = [&](int r) {
    results[r] = Rank(spec, r, n, "10.0.0." + std::to_string(r) + ":" + std::to_string(1000 + r),
                      10 * kNsPerSec, "aaaa", r, n);
  };
  std::thread rank0(run, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto stray = Rank(spec, 1, n, "9.9.9.9:9", 5 * kNsPerSec, "bbbb", 1, n);
  std::thread rank1(run, 1), rank2(run, 2);
  rank0.join();
  rank1.join();
  rank2.join();
  ExpectTable(results);
  ASSERT_FALSE(stray.ok());
  EXPECT_EQ(stray.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(stray.status().message().find("rank 1 was started by another launch (nonce bbbb)"),
            std::string::npos)
      << stray.status().message();
}

// Nodes of two multi-node launches claim the same block of ranks: the store cannot tell which
// is its own, so it stops rather than mix.
TEST(RendezvousTest, TwoLaunchesClaimingTheSameRanksStopTheExchange) {
  const std::string spec = "tcp:127.0.0.1:" + std::to_string(FreeTcpPort());
  const int n = 4;  // two nodes of two ranks
  const TimeNs timeout = 3 * kNsPerSec;
  Result<std::vector<std::string>> r0 = Status::Internal("not run"), a2 = r0, b3 = r0;
  std::thread t0([&] { r0 = Rank(spec, 0, n, "a0:1", timeout, "node0", 0, 2); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  a2 = Rank(spec, 2, n, "a2:1", kNsPerSec / 2, "node1a", 0, 2);
  b3 = Rank(spec, 3, n, "b3:1", timeout, "node1b", 1, 2);
  t0.join();
  ASSERT_FALSE(r0.ok());
  EXPECT_NE(r0.status().message().find("were started by two launches"), std::string::npos)
      << r0.status().message();
  ASSERT_FALSE(b3.ok());
  EXPECT_EQ(b3.status().code(), Status::Code::kInvalidArgument);
}

// In a shared directory, files of this launch's ranks written by another launch are not taken.
// The lone ranks' timeouts run on a manual clock (in-memory files): exact, and instant.
TEST(RendezvousTest, DirectoryIgnoresAnotherLaunchsFilesForItsRanks) {
  env::ManualEnv env;
  const std::string dir = "/shared/rdzv";
  ASSERT_TRUE(env.CreateDir("/shared").ok());
  // Another launch's rank 1, still there (or running beside us) under the same job id: its
  // file stays, since it timed out before withdrawing.
  (void)Rank("dir:" + dir, 1, 2, "9.9.9.9:9", kNsPerSec / 2, "bbbb", 1, 2, &env);
  const TimeNs start = env.Now();
  auto lone = Rank("dir:" + dir, 0, 2, "a0:1", kNsPerSec / 2, "aaaa", 0, 2, &env);
  ASSERT_FALSE(lone.ok());
  EXPECT_EQ(lone.status().code(), Status::Code::kTimeout);
  EXPECT_NE(lone.status().message().find("rank(s) 1 (nonce bbbb) were written by another launch"),
            std::string::npos)
      << lone.status().message();
  // It gave up on the first poll past its deadline (the pause is at most 50 ms).
  EXPECT_GT(env.Now() - start, kNsPerSec / 2);
  EXPECT_LE(env.Now() - start, kNsPerSec / 2 + 50 * kNsPerMs);
  // Our own rank 1 replaces the stale file; then both complete (real threads, real files).
  const TempDir tmp("rendezvous");
  const std::string real_dir = tmp.path();
  (void)Rank("dir:" + real_dir, 1, 2, "9.9.9.9:9", kNsPerMs, "bbbb", 1, 2);
  std::vector<Result<std::vector<std::string>>> both(2, Status::Internal("not run"));
  std::thread t0([&] {
    both[0] = Rank("dir:" + real_dir, 0, 2, "a0:1", 5 * kNsPerSec, "aaaa", 0, 2);
  });
  std::thread t1([&] {
    both[1] = Rank("dir:" + real_dir, 1, 2, "a1:1", 5 * kNsPerSec, "aaaa", 1, 2);
  });
  t0.join();
  t1.join();
  for (const auto& r : both) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, (std::vector<std::string>{"a0:1", "a1:1"}));
  }
}

TEST(RendezvousTest, TimeoutNamesTheMissingRanks) {
  env::ManualEnv env;
  auto r = ExchangeAddresses({"dir:/tmp/rdzv", "j", 0, 4, "a:1", 100 * kNsPerMs}, {}, &env);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kTimeout);
  EXPECT_NE(r.status().message().find("rank(s) 1, 2, 3"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("timed out after 100.000 ms"), std::string::npos)
      << r.status().message();
  // Its own file is there until withdrawn.
  EXPECT_TRUE(env.FileExists("/tmp/rdzv/j.0.addr"));
  WithdrawAddress({"dir:/tmp/rdzv", "j", 0, 4, "a:1", 0}, &env);
  EXPECT_FALSE(env.FileExists("/tmp/rdzv/j.0.addr"));
}

// A rendezvous directory that cannot be written says which rank, which file and why.
TEST(RendezvousTest, AReadOnlyDirectoryIsAClearError) {
  env::ManualEnv manual;
  env::FaultyEnv env(&manual);
  env.SetReadOnly("/tmp/rdzv");
  auto r = ExchangeAddresses({"dir:/tmp/rdzv", "j", 1, 2, "a:1", kNsPerSec}, {}, &env);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kIoError);
  EXPECT_EQ(r.status().message(),
            "rank 1: cannot write rendezvous file /tmp/rdzv/.j.1.1.tmp: Read-only file system");
}

// The launch's nonce and block come from the environment genie launch sets (here the Env's).
TEST(RendezvousTest, TheLaunchIsReadFromTheEnvironment) {
  env::ManualEnv env;
  env.SetEnv("GENIE_LAUNCH_NONCE", "cafe");
  env.SetEnv("GENIE_LOCAL_RANK", "0");
  env.SetEnv("GENIE_LOCAL_WORLD_SIZE", "2");
  ASSERT_TRUE(env.CreateDir("/r").ok());
  (void)ExchangeAddresses({"dir:/r", "j", 2, 4, "a2:1", kNsPerMs}, {}, &env);
  auto text = env.ReadFile("/r/j.2.addr");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "a2:1 cafe 2 2\n");  // nonce, first rank of the block, block size
}

TEST(RendezvousTest, RejectsUnknownSpec) {
  auto r = ExchangeAddresses({"nfs:/x", "j", 0, 2, "a:1", kNsPerSec});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("dir:"), std::string::npos);
}

}  // namespace
}  // namespace genie::net
