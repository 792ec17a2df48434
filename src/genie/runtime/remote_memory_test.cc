// RemoteMemory against figures worked out by hand from ASTRA-sim's analytical remote-memory
// backend: access time latency + floor(size / (bw * 1e9) * 1e9) ns; PER_NPU independent,
// PER_NODE one FIFO per node, MEMORY_POOL one FIFO for all, a finished access's rank called
// back before the next waiting access starts.
#include "genie/runtime/remote_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <utility>

namespace genie::runtime {
namespace {

using config::MemoryConfig;
using config::MemoryType;

// A manual clock shared by every rank's backend: events in time order, FIFO at equal times.
class Clock {
 public:
  TimeNs now = 0;
  void At(TimeNs t, Callback fn) { events_.emplace(std::make_pair(t, seq_++), std::move(fn)); }
  void Run() {
    while (!events_.empty()) {
      auto it = events_.begin();
      now = it->first.first;
      Callback fn = std::move(it->second);
      events_.erase(it);
      fn();
    }
  }

 private:
  uint64_t seq_ = 0;
  std::map<std::pair<TimeNs, uint64_t>, Callback> events_;
};

class ClockBackend final : public Backend {
 public:
  ClockBackend(Clock& clock, int rank) : clock_(clock), rank_(rank) {}
  int rank() const override { return rank_; }
  int world_size() const override { return 0; }
  TimeNs Now() const override { return clock_.now; }
  void After(TimeNs delay, Callback fn) override { clock_.At(clock_.now + delay, std::move(fn)); }
  void Send(const Message&, Callback) override { ADD_FAILURE() << "no messages here"; }
  void Recv(const Message&, Callback) override { ADD_FAILURE() << "no messages here"; }
  bool modelled() const override { return true; }

 private:
  Clock& clock_;
  int rank_;
};

MemoryConfig Config(MemoryType type, TimeNs latency, double bw, int nodes = 0, int per_node = 0) {
  MemoryConfig c;
  c.path = "memory.json";
  c.type = type;
  c.remote_mem_latency_ns = latency;
  c.remote_mem_bw_gbps = bw;
  c.num_nodes = nodes;
  c.num_npus_per_node = per_node;
  return c;
}

// Every rank issues one access of `bytes` at t = 0 in rank order; returns each one's end.
std::vector<TimeNs> AllAtOnce(const MemoryConfig& c, int ranks, Bytes bytes) {
  Clock clock;
  std::vector<std::unique_ptr<ClockBackend>> backends;
  for (int r = 0; r < ranks; ++r) backends.push_back(std::make_unique<ClockBackend>(clock, r));
  auto mem = RemoteMemory::CreateSimulated(c, ranks, nullptr);
  EXPECT_TRUE(mem.ok()) << mem.status().message();
  std::vector<TimeNs> end(ranks, -1);
  for (int r = 0; r < ranks; ++r) {
    (*mem)->Issue(r, bytes, *backends[r], [&end, &clock, r] { end[r] = clock.now; });
  }
  clock.Run();
  return end;
}

// 1000 B at 10 GB/s = 100 ns, + 100 ns latency: 200 ns per access.
TEST(RemoteMemory, PerNpuAccessesDoNotWait) {
  EXPECT_EQ(AllAtOnce(Config(MemoryType::kPerNpuMemoryExpansion, 100, 10), 4, 1000),
            (std::vector<TimeNs>{200, 200, 200, 200}));
}

TEST(RemoteMemory, PerNodeAccessesQueueFifoPerNode) {
  // Two nodes of two NPUs: ranks 0 and 1 share node 0, ranks 2 and 3 node 1.
  EXPECT_EQ(AllAtOnce(Config(MemoryType::kPerNodeMemoryExpansion, 100, 10, 2, 2), 4, 1000),
            (std::vector<TimeNs>{200, 400, 200, 400}));
  // One node of four: one transaction at a time, in issue order.
  EXPECT_EQ(AllAtOnce(Config(MemoryType::kPerNodeMemoryExpansion, 100, 10, 1, 4), 4, 1000),
            (std::vector<TimeNs>{200, 400, 600, 800}));
}

TEST(RemoteMemory, PoolServesEveryRankOneAtATime) {
  EXPECT_EQ(AllAtOnce(Config(MemoryType::kMemoryPool, 100, 10), 4, 1000),
            (std::vector<TimeNs>{200, 400, 600, 800}));
}

// ASTRA-sim truncates size / bw once: 1000 B at 3 GB/s = 333.33 ns -> 333, + 7 ns latency.
TEST(RemoteMemory, AccessTimeIsTruncatedOncePerAccess) {
  EXPECT_EQ(AllAtOnce(Config(MemoryType::kMemoryPool, 7, 3), 3, 1000),
            (std::vector<TimeNs>{340, 680, 1020}));
}

// The finished access's rank is called back before the next waiting one starts: an access it
// issues from that callback queues behind those already waiting.
TEST(RemoteMemory, AccessIssuedOnCompletionQueuesBehindWaitingOnes) {
  Clock clock;
  ClockBackend b0(clock, 0), b1(clock, 1);
  auto mem = RemoteMemory::CreateSimulated(Config(MemoryType::kMemoryPool, 100, 10), 2, nullptr);
  ASSERT_TRUE(mem.ok());
  std::vector<std::pair<int, TimeNs>> ends;
  (*mem)->Issue(0, 1000, b0, [&] {
    ends.push_back({0, clock.now});
    (*mem)->Issue(0, 1000, b0, [&] { ends.push_back({0, clock.now}); });
  });
  (*mem)->Issue(1, 1000, b1, [&] { ends.push_back({1, clock.now}); });
  clock.Run();
  EXPECT_EQ(ends, (std::vector<std::pair<int, TimeNs>>{{0, 200}, {1, 400}, {0, 600}}));
  EXPECT_EQ((*mem)->waited(), 2u);
  EXPECT_EQ((*mem)->wait_ns(), 200 + 200);
}

// Later issues wait only for what is still running.
TEST(RemoteMemory, StaggeredIssuesWaitOnlyForTheRunningAccess) {
  Clock clock;
  ClockBackend b0(clock, 0), b1(clock, 1);
  auto mem = RemoteMemory::CreateSimulated(Config(MemoryType::kPerNodeMemoryExpansion, 0, 1, 1, 2),
                                           2, nullptr);
  ASSERT_TRUE(mem.ok());
  TimeNs e0 = -1, e1 = -1, e2 = -1;
  (*mem)->Issue(0, 1000, b0, [&] { e0 = clock.now; });                          // 0 .. 1000
  clock.At(300, [&] { (*mem)->Issue(1, 500, b1, [&] { e1 = clock.now; }); });   // waits to 1000
  clock.At(5000, [&] { (*mem)->Issue(1, 500, b1, [&] { e2 = clock.now; }); });  // idle: at once
  clock.Run();
  EXPECT_EQ(e0, 1000);
  EXPECT_EQ(e1, 1500);
  EXPECT_EQ(e2, 5500);
}

TEST(RemoteMemory, PerNodeNeedsAQueueForEveryRank) {
  auto mem = RemoteMemory::CreateSimulated(Config(MemoryType::kPerNodeMemoryExpansion, 0, 1, 1, 2),
                                           4, nullptr);
  ASSERT_FALSE(mem.ok());
  EXPECT_NE(mem.status().message().find("memory.json: key \"num-nodes\""), std::string::npos)
      << mem.status().message();
  EXPECT_NE(mem.status().message().find("give num-nodes >= 2"), std::string::npos)
      << mem.status().message();
  // Absent num-nodes: as many nodes as the ranks fill, and a note says so.
  std::vector<std::string> notes;
  auto ok = RemoteMemory::CreateSimulated(Config(MemoryType::kPerNodeMemoryExpansion, 0, 1, 0, 2),
                                          3, &notes);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("num-nodes absent; genie uses 2"), std::string::npos) << notes[0];
}

// `genie run`: two objects opened like two rank processes (each its own shm_open and mmap of
// the same object) serve the pool one access at a time, in issue order, and leave nothing in
// /dev/shm once both are gone.
TEST(RemoteMemory, HostSharedQueueServesRanksOfOneHostInIssueOrder) {
  const std::string run_id = "test" + std::to_string(::getpid());
  const std::vector<std::string> hosts = {"h", "h"};
  auto config = Config(MemoryType::kMemoryPool, 100, 10);
  std::vector<std::string> notes;
  auto m0 = RemoteMemory::OpenHostShared(config, 2, 0, hosts, run_id, &notes);
  auto m1 = RemoteMemory::OpenHostShared(config, 2, 1, hosts, run_id, &notes);
  ASSERT_TRUE(m0.ok()) << m0.status().message();
  ASSERT_TRUE(m1.ok()) << m1.status().message();
  ASSERT_NE(m0->get(), nullptr);
  ASSERT_NE(m1->get(), nullptr);
  EXPECT_TRUE(notes.empty());
  const std::string shm = "/dev/shm/genie-mem-" + run_id + "-0";
  EXPECT_TRUE(std::filesystem::exists(shm));
  Clock clock;
  clock.now = 1'000'000;  // a monotonic clock is far from 0
  ClockBackend b0(clock, 0), b1(clock, 1);
  TimeNs e0 = -1, e1 = -1, e2 = -1;
  (*m1)->Issue(1, 1000, b1, [&] { e1 = clock.now; });
  (*m0)->Issue(0, 1000, b0, [&] { e0 = clock.now; });
  clock.At(1'000'300, [&] { (*m1)->Issue(1, 1000, b1, [&] { e2 = clock.now; }); });
  clock.Run();
  EXPECT_EQ(e1, 1'000'200);
  EXPECT_EQ(e0, 1'000'400);
  EXPECT_EQ(e2, 1'000'600);  // issued at +300 while rank 0's access holds the pool to +400
  EXPECT_EQ((*m0)->wait_ns(), 200);
  EXPECT_EQ((*m1)->wait_ns(), 100);
  m0->reset();
  m1->reset();
  EXPECT_FALSE(std::filesystem::exists(shm)) << shm << " left behind";
}

TEST(RemoteMemory, HostSharedQueueAcrossHostsFallsBackAndSaysSo) {
  std::vector<std::string> notes;
  auto m = RemoteMemory::OpenHostShared(Config(MemoryType::kPerNodeMemoryExpansion, 0, 1, 2, 2), 4,
                                        3, {"a", "a", "b", "c"}, "x", &notes);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->get(), nullptr);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("PER_NODE_MEMORY_EXPANSION queue 1 (ranks 2-3) spans hosts (rank 2 "
                          "runs on b, rank 3 on c)"),
            std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("genie simulate models the queue"), std::string::npos) << notes[0];
  // Node 0 (ranks 0-1, both on a) is shareable; PER_NPU never needs a queue.
  notes.clear();
  auto node0 =
      RemoteMemory::OpenHostShared(Config(MemoryType::kPerNodeMemoryExpansion, 0, 1, 2, 2), 4, 1,
                                   {"a", "a", "b", "c"}, "y" + std::to_string(::getpid()), &notes);
  ASSERT_TRUE(node0.ok());
  EXPECT_NE(node0->get(), nullptr);
  EXPECT_TRUE(notes.empty());
  auto npu = RemoteMemory::OpenHostShared(Config(MemoryType::kPerNpuMemoryExpansion, 0, 1), 4, 1,
                                          {"a", "a", "b", "c"}, "z", &notes);
  ASSERT_TRUE(npu.ok());
  EXPECT_EQ(npu->get(), nullptr);
  EXPECT_TRUE(notes.empty());
}

}  // namespace
}  // namespace genie::runtime
