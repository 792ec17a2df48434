#include "genie/net/rendezvous.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

namespace genie::net {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/genie_rdzv_XXXXXX";
  return mkdtemp(tmpl);
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

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
  std::string dir = TempDir();
  ExpectTable(RunRanks("dir:" + dir, 5));
  std::filesystem::remove_all(dir);
}

TEST(RendezvousTest, TcpStoreOnRankZero) {
  ExpectTable(RunRanks("tcp:127.0.0.1:" + std::to_string(FreePort()), 4));
}

TEST(RendezvousTest, TcpStoreRefusesAnotherJobAndStillServesItsOwn) {
  std::string spec = "tcp:127.0.0.1:" + std::to_string(FreePort());
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

TEST(RendezvousTest, TimeoutNamesTheMissingRanks) {
  std::string dir = TempDir();
  auto r = ExchangeAddresses({"dir:" + dir, "j", 0, 4, "a:1", 100 * kNsPerMs});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kTimeout);
  EXPECT_NE(r.status().message().find("rank(s) 1, 2, 3"), std::string::npos)
      << r.status().message();
  std::filesystem::remove_all(dir);
}

TEST(RendezvousTest, RejectsUnknownSpec) {
  auto r = ExchangeAddresses({"nfs:/x", "j", 0, 2, "a:1", kNsPerSec});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("dir:"), std::string::npos);
}

}  // namespace
}  // namespace genie::net
