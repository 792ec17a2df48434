// The Executor over a fake Backend: a manual clock (an event queue in virtual time) and
// in-memory message matching, so the issue rules, compute durations, stuck sends and failing
// collectives are checked exactly, with no network and no simulator model.
#include "genie/runtime/executor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <map>
#include <tuple>

#include "genie/runtime/remote_memory.h"
#include "genie/trace/attributes.h"
#include "genie/trace/et_writer.h"
#include "tests/support/temp_dir.h"

namespace genie::runtime {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;

// Virtual time and the messages in transit, shared by every rank's FakeBackend.
class FakeWorld {
 public:
  TimeNs now() const { return now_; }
  void At(TimeNs t, Callback fn) { events_.emplace(std::make_pair(t, seq_++), std::move(fn)); }
  // Runs events in time order (FIFO at equal times) until none is left.
  void Run() {
    while (!events_.empty()) {
      auto it = events_.begin();
      now_ = it->first.first;
      Callback fn = std::move(it->second);
      events_.erase(it);
      fn();
    }
  }
  // A send or receive meets its counterpart by (src, dst, tag); both complete `latency` later.
  void Post(bool send, int src, int dst, uint64_t tag, Bytes bytes, Callback done) {
    auto key = std::make_tuple(src, dst, tag);
    auto& other = send ? recvs_[key] : sends_[key];
    if (other.empty()) {
      (send ? sends_ : recvs_)[key].push_back({bytes, std::move(done)});
      return;
    }
    Waiting w = std::move(other.front());
    other.pop_front();
    EXPECT_EQ(w.bytes, bytes) << "size mismatch " << src << "->" << dst << " tag " << tag;
    At(now_ + latency, std::move(w.done));
    At(now_ + latency, std::move(done));
  }
  TimeNs latency = 1000;

 private:
  struct Waiting {
    Bytes bytes;
    Callback done;
  };
  TimeNs now_ = 0;
  uint64_t seq_ = 0;
  std::map<std::pair<TimeNs, uint64_t>, Callback> events_;
  std::map<std::tuple<int, int, uint64_t>, std::deque<Waiting>> sends_, recvs_;
};

// What a rank asked of its backend, in order.
struct Call {
  TimeNs at;
  std::string what;  // "after 3000", "send 1 tag 5", "recv 0 tag 5"
};

class FakeBackend final : public Backend {
 public:
  FakeBackend(FakeWorld& world, int rank, int world_size)
      : world_(world), rank_(rank), world_size_(world_size) {}
  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  TimeNs Now() const override { return world_.now(); }
  void After(TimeNs delay, Callback fn) override {
    calls.push_back({Now(), "after " + std::to_string(delay)});
    world_.At(Now() + delay + late, std::move(fn));
  }
  void Send(const Message& m, Callback done) override {
    calls.push_back({Now(), "send " + std::to_string(m.peer)});
    world_.Post(true, rank_, m.peer, m.tag, m.bytes, std::move(done));
  }
  void Recv(const Message& m, Callback done) override {
    calls.push_back({Now(), "recv " + std::to_string(m.peer)});
    world_.Post(false, m.peer, rank_, m.tag, m.bytes, std::move(done));
  }
  bool modelled() const override { return true; }
  std::vector<Call> calls;
  // Every timer runs this much after its time: a real rank's thread that was elsewhere (busy,
  // or waiting for a core) when the time came.
  TimeNs late = 0;

 private:
  FakeWorld& world_;
  int rank_, world_size_;
};

struct N {
  NodeId id;
  ChakraProtoMsg::NodeType type = ChakraProtoMsg::COMP_NODE;
  std::vector<NodeId> deps = {};
  int64_t duration_us = 0;
  bool cpu = false;
  int src = -1, dst = -1;  // SEND/RECV
  int64_t tag = 0;
  Bytes bytes = 0;
  std::string pg;  // COMM_COLL process group
};

N Mem(NodeId id, bool store, Bytes tensor_size, std::vector<NodeId> deps = {}) {
  N n;
  n.id = id;
  n.type = store ? ChakraProtoMsg::MEM_STORE_NODE : ChakraProtoMsg::MEM_LOAD_NODE;
  n.bytes = tensor_size;
  n.deps = std::move(deps);
  return n;
}

N Comp(NodeId id, int64_t us, std::vector<NodeId> deps = {}, bool cpu = false) {
  N n;
  n.id = id;
  n.duration_us = us;
  n.deps = std::move(deps);
  n.cpu = cpu;
  return n;
}

N P2p(NodeId id, ChakraProtoMsg::NodeType type, int src, int dst, int64_t tag, Bytes bytes) {
  N n;
  n.id = id;
  n.type = type;
  n.src = src;
  n.dst = dst;
  n.tag = tag;
  n.bytes = bytes;
  return n;
}
N Send(NodeId id, int src, int dst, int64_t tag, Bytes bytes) {
  return P2p(id, ChakraProtoMsg::COMM_SEND_NODE, src, dst, tag, bytes);
}
N Recv(NodeId id, int src, int dst, int64_t tag, Bytes bytes) {
  return P2p(id, ChakraProtoMsg::COMM_RECV_NODE, src, dst, tag, bytes);
}

N AllReduce(NodeId id, Bytes bytes, std::string pg) {
  N n;
  n.id = id;
  n.type = ChakraProtoMsg::COMM_COLL_NODE;
  n.bytes = bytes;
  n.pg = std::move(pg);
  return n;
}

class ExecutorTest : public ::testing::Test {
 protected:
  // Writes rank `rank`'s trace and opens it.
  std::unique_ptr<workload::RankGraph> Graph(int rank, const std::vector<N>& nodes) {
    const std::string path = (dir_ / ("t." + std::to_string(rank) + ".et")).string();
    auto w = trace::EtWriter::Create(path, trace::DefaultMetadata());
    EXPECT_TRUE(w.ok());
    for (const N& n : nodes) {
      ChakraProtoMsg::Node node;
      node.set_id(n.id);
      node.set_name("n" + std::to_string(n.id));
      node.set_type(n.type);
      node.set_duration_micros(n.duration_us);
      for (NodeId d : n.deps) node.add_data_deps(d);
      if (n.cpu) trace::AddBool(&node, "is_cpu_op", true);
      if (n.type == ChakraProtoMsg::COMM_SEND_NODE || n.type == ChakraProtoMsg::COMM_RECV_NODE) {
        trace::AddInt64(&node, "comm_src", n.src);
        trace::AddInt64(&node, "comm_dst", n.dst);
        trace::AddInt64(&node, "comm_tag", n.tag);
        trace::AddUint64(&node, "comm_size", n.bytes);
      }
      if (n.type == ChakraProtoMsg::MEM_LOAD_NODE || n.type == ChakraProtoMsg::MEM_STORE_NODE) {
        trace::AddUint64(&node, "tensor_size", n.bytes);
      }
      if (n.type == ChakraProtoMsg::COMM_COLL_NODE) {
        trace::AddInt64(&node, "comm_type", 0);  // ALL_REDUCE
        trace::AddUint64(&node, "comm_size", n.bytes);
        if (!n.pg.empty()) trace::AddString(&node, "pg_name", n.pg);
      }
      EXPECT_TRUE((*w)->Write(node).ok());
    }
    EXPECT_TRUE((*w)->Close().ok());
    auto g = workload::RankGraph::Open(path, rank, {});
    EXPECT_TRUE(g.ok()) << g.status().ToString();
    return std::move(g).value();
  }

  // Runs every rank's graph to the end of the world's events; returns each rank's outcome
  // (nullopt: never finished).
  // `orders[r]`, when given and not null, is rank r's Executor::SetIssueOrder.
  std::vector<std::optional<Status>> RunAll(const std::vector<std::vector<N>>& traces,
                                            const std::vector<const IssueOrder*>& orders = {}) {
    const int n = static_cast<int>(traces.size());
    config_.world_size = n;
    std::vector<std::optional<Status>> out(static_cast<size_t>(n));
    graphs_.clear();
    backends_.clear();
    executors_.clear();
    for (int r = 0; r < n; ++r) {
      graphs_.push_back(Graph(r, traces[static_cast<size_t>(r)]));
      backends_.push_back(std::make_unique<FakeBackend>(world_, r, n));
      executors_.push_back(
          std::make_unique<Executor>(*graphs_.back(), config_, *backends_.back(), nullptr));
      if (static_cast<size_t>(r) < orders.size()) executors_.back()->SetIssueOrder(orders[r]);
    }
    for (int r = 0; r < n; ++r) {
      executors_[static_cast<size_t>(r)]->Start(0, [&out, r](const Status& st) {
        EXPECT_FALSE(out[static_cast<size_t>(r)].has_value()) << "done twice on rank " << r;
        out[static_cast<size_t>(r)] = st;
      });
    }
    world_.Run();
    return out;
  }

  std::vector<std::string> Calls(int rank) const {
    std::vector<std::string> v;
    for (const Call& c : backends_[static_cast<size_t>(rank)]->calls) {
      v.push_back(std::to_string(c.at) + " " + c.what);
    }
    return v;
  }

  TempDir tmp_{"executor"};
  fs::path dir_ = tmp_.path();
  ExecutorConfig config_;
  FakeWorld world_;
  std::vector<std::unique_ptr<workload::RankGraph>> graphs_;
  std::vector<std::unique_ptr<FakeBackend>> backends_;
  std::vector<std::unique_ptr<Executor>> executors_;
};

TEST_F(ExecutorTest, ComputeTakesItsTraceDurationAlongTheDependencyChain) {
  auto out = RunAll({{Comp(1, 5), Comp(2, 7, {1})}});
  ASSERT_TRUE(out[0].has_value());
  EXPECT_TRUE(out[0]->ok()) << out[0]->ToString();
  EXPECT_EQ(world_.now(), 12'000);
  EXPECT_EQ(Calls(0), (std::vector<std::string>{"0 after 5000", "5000 after 7000"}));
  EXPECT_EQ(executors_[0]->summary().compute_ns, 12'000);
}

TEST_F(ExecutorTest, AComputeOpAlreadyOverWhenIssuedCompletesWithoutATimer) {
  // The thread notices op 1's end (5 us) 10 us late. Op 2 (7 us) started when op 1 was due, so
  // by then it is over too, as a kernel queued behind op 1 on a GPU stream would be: it
  // completes at once, with no timer (whose turn would come late again). Op 3 (5 us, due at
  // 17 us) is still ahead: a timer for the 2 us left.
  std::vector<N> trace = {Comp(1, 5), Comp(2, 7, {1}), Comp(3, 5, {2})};
  config_.world_size = 1;
  graphs_.push_back(Graph(0, trace));
  backends_.push_back(std::make_unique<FakeBackend>(world_, 0, 1));
  backends_[0]->late = 10'000;
  executors_.push_back(std::make_unique<Executor>(*graphs_[0], config_, *backends_[0], nullptr));
  std::optional<Status> out;
  executors_[0]->Start(0, [&out](const Status& st) { out = st; });
  world_.Run();
  ASSERT_TRUE(out.has_value() && out->ok());
  EXPECT_EQ(Calls(0), (std::vector<std::string>{"0 after 5000", "15000 after 2000"}));
  EXPECT_EQ(world_.now(), 27'000);  // op 3's timer, late like the others
  EXPECT_EQ(executors_[0]->summary().compute_ns, 17'000);
}

// One rank's iterations `first`, first + 1, ... (as IterationDriver numbers them: negative =
// warm-up) one after another; each iteration's summary.
std::vector<record::RankSummary> RunIterations(FakeWorld& world, Executor& ex,
                                               workload::RankGraph& graph, int first, int count) {
  std::vector<record::RankSummary> out;
  for (int i = first; i < first + count; ++i) {
    if (i > first) graph.Reset();
    bool done = false;
    ex.Start(i, [&done](const Status& st) {
      EXPECT_TRUE(st.ok()) << st.ToString();
      done = true;
    });
    world.Run();
    EXPECT_TRUE(done);
    out.push_back(ex.summary());
  }
  return out;
}

// The host's retransmission timeouts are read once before the first iteration and once as each
// ends: each iteration gets those since the one before ended, and its namespace when it has some.
TEST_F(ExecutorTest, EachIterationCountsTheRetransmissionTimeoutsSinceTheOneBefore) {
  std::vector<int64_t> counter = {10, 10, 13, 14};  // the readings, in order
  size_t reads = 0;
  config_.tcp_timeouts_counter = [&] { return counter.at(reads++); };
  config_.host_id = 77;
  config_.world_size = 1;
  graphs_.push_back(Graph(0, {Comp(1, 10)}));
  backends_.push_back(std::make_unique<FakeBackend>(world_, 0, 1));
  executors_.push_back(std::make_unique<Executor>(*graphs_[0], config_, *backends_[0], nullptr));
  const auto s = RunIterations(world_, *executors_[0], *graphs_[0], 0, 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(reads, 4u);
  EXPECT_EQ(s[0].tcp_timeouts, 0);
  EXPECT_EQ(s[0].host_id, 0);
  EXPECT_EQ(s[1].tcp_timeouts, 3);
  EXPECT_EQ(s[1].host_id, 77);
  EXPECT_EQ(s[2].tcp_timeouts, 1);
}

// A compute fault scales the GPU ops of its iterations (not CPU ops, not warm-ups) and a stall
// holds the rank at its iteration's start; the summary says by how much, the events when.
TEST_F(ExecutorTest, ComputeFaultsSlowTheGpuOpsOfTheirIterationsAndStallTheirStart) {
  auto schedule = compute::ParseComputeFaults(
      "faults:\n  - {rank: 0, iteration: 2, iterations: 1, compute: 1.5x}\n"
      "  - {rank: 0, iteration: 3, stall: 4us}\n  - {rank: 1, compute: 3x}\n",
      "f.yml");
  ASSERT_TRUE(schedule.ok()) << schedule.status().message();
  config_.compute_faults = std::make_shared<compute::ComputeFaultSchedule>(*schedule);
  config_.world_size = 1;
  graphs_.push_back(Graph(0, {Comp(1, 10), Comp(2, 6, {1}), Comp(3, 2, {}, /*cpu=*/true)}));
  backends_.push_back(std::make_unique<FakeBackend>(world_, 0, 1));
  executors_.push_back(std::make_unique<Executor>(*graphs_[0], config_, *backends_[0], nullptr));
  // Iterations -1 (warm-up), 0, 1, 2: measured 1, 2 and 3.
  auto s = RunIterations(world_, *executors_[0], *graphs_[0], -1, 4);
  ASSERT_EQ(s.size(), 4u);
  for (int i : {0, 1, 3}) {
    EXPECT_EQ(s[i].compute_ns, 16'000) << i;
    EXPECT_EQ(s[i].compute_excess_ns, 0) << i;
  }
  EXPECT_EQ(s[2].compute_ns, 24'000);  // measured iteration 2: 15 + 9 us; the CPU op 2 us still
  EXPECT_EQ(s[2].compute_excess_ns, 8'000);
  EXPECT_EQ(s[2].finish - s[2].start, 24'000);
  EXPECT_EQ(s[3].stall_ns, 4'000);  // measured 3: the chain starts after the stall
  EXPECT_EQ(s[3].finish - s[3].start, 20'000);
  EXPECT_EQ(s[3].exposed_comm_ns, 0);
  auto events = executors_[0]->ComputeFaultEvents();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].action, "apply");
  EXPECT_EQ(events[0].iteration, 2);
  EXPECT_EQ(events[0].at_ns, s[2].start);
  EXPECT_EQ(events[1].action, "undo");  // at 3's start, in the schedule's order
  EXPECT_EQ(events[1].iteration, 3);
  EXPECT_EQ(events[2].action, "stall");
  EXPECT_EQ(events[2].at_ns, s[3].start);
}

// A prediction of measured iteration k runs one iteration (Start(0)) standing for k.
TEST_F(ExecutorTest, ComputeFaultsFollowTheMeasuredIterationAPredictionStandsFor) {
  auto schedule = compute::ParseComputeFaults(
      "faults:\n  - {rank: 0, iteration: 5, compute: 2x}\n", "f.yml");
  ASSERT_TRUE(schedule.ok());
  config_.compute_faults = std::make_shared<compute::ComputeFaultSchedule>(*schedule);
  for (int base : {0, 4, 5}) {
    config_.fault_iteration_base = base;
    auto out = RunAll({{Comp(1, 10)}});
    ASSERT_TRUE(out[0].has_value() && out[0]->ok());
    EXPECT_EQ(executors_[0]->summary().compute_ns, base == 5 ? 20'000 : 10'000) << base;
  }
}

// Attribution's counterfactual: given durations replace the trace's (and any fault's) for the
// GPU ops listed; other ops, and CPU ops, keep theirs.
TEST_F(ExecutorTest, GivenComputeDurationsReplaceTheTracesAndTheFaults) {
  auto schedule = compute::ParseComputeFaults("faults:\n  - {rank: 0, compute: 3x}\n", "f.yml");
  ASSERT_TRUE(schedule.ok());
  config_.compute_faults = std::make_shared<compute::ComputeFaultSchedule>(*schedule);
  config_.world_size = 1;
  graphs_.push_back(Graph(0, {Comp(1, 10), Comp(2, 6, {1}), Comp(3, 4, {}, /*cpu=*/true)}));
  backends_.push_back(std::make_unique<FakeBackend>(world_, 0, 1));
  executors_.push_back(std::make_unique<Executor>(*graphs_[0], config_, *backends_[0], nullptr));
  const std::map<NodeId, TimeNs> given = {{1, 25'000}, {3, 1'000}};
  executors_[0]->SetComputeDurations(&given);
  std::optional<Status> out;
  executors_[0]->Start(0, [&out](const Status& st) { out = st; });
  world_.Run();
  ASSERT_TRUE(out.has_value() && out->ok());
  // Op 1 as given, op 2 under the fault (3 x 6 us), CPU op 3 as traced beside them.
  EXPECT_EQ(executors_[0]->summary().compute_ns, 25'000 + 18'000);
  EXPECT_EQ(executors_[0]->summary().compute_excess_ns, 15'000 + 12'000);
  EXPECT_EQ(world_.now(), 43'000);
}

TEST_F(ExecutorTest, ReadyNodesIssueInIdOrderOneGpuComputeAtATimeCpuBeside) {
  // All ready at once: 3 and 5 share the GPU, so 5 waits for 3; 4 is a CPU op and runs beside.
  auto out = RunAll({{Comp(5, 5), Comp(3, 3), Comp(4, 10, {}, true)}});
  ASSERT_TRUE(out[0].has_value() && out[0]->ok());
  EXPECT_EQ(Calls(0), (std::vector<std::string>{"0 after 3000", "0 after 10000", "3000 after 5000"}));
  EXPECT_EQ(world_.now(), 10'000);
}

TEST_F(ExecutorTest, OneCommunicationOpInFlightButReceivesAreExempt) {
  // Rank 0 sends twice to rank 1 (tags 1, 2): the second send waits for the first. Rank 1's
  // two receives are both posted at once, and a compute op does not wait for communication.
  auto out = RunAll({
      {Send(1, 0, 1, 1, 100), Send(2, 0, 1, 2, 100), Comp(3, 4)},
      {Recv(1, 0, 1, 1, 100), Recv(2, 0, 1, 2, 100)},
  });
  ASSERT_TRUE(out[0].has_value() && out[0]->ok()) << (out[0] ? out[0]->ToString() : "");
  ASSERT_TRUE(out[1].has_value() && out[1]->ok());
  EXPECT_EQ(Calls(0), (std::vector<std::string>{"0 send 1", "0 after 4000", "1000 send 1"}));
  EXPECT_EQ(Calls(1), (std::vector<std::string>{"0 recv 0", "0 recv 0"}));
  EXPECT_EQ(world_.now(), 4000);
}

TEST_F(ExecutorTest, ASendThatNeverMatchesIsNamedByDescribePending) {
  auto out = RunAll({
      {Send(1, 0, 1, 9, 64)},
      {Recv(1, 0, 1, 8, 64)},  // another tag
  });
  EXPECT_FALSE(out[0].has_value());
  EXPECT_FALSE(out[1].has_value());
  EXPECT_FALSE(executors_[0]->finished());
  const std::string pending = executors_[0]->DescribePending();
  EXPECT_NE(pending.find("rank 0 node 1 (n1, send to rank 1 tag 9) in flight"),
            std::string::npos)
      << pending;
  EXPECT_NE(executors_[1]->DescribePending().find("from rank 0 tag 8"), std::string::npos)
      << executors_[1]->DescribePending();
}

TEST_F(ExecutorTest, AnErrorInACollectiveStopsTheRun) {
  config_.groups.Add(5, {1});  // group 5 holds rank 1 only
  auto out = RunAll({{AllReduce(1, 1024, "5"), Comp(2, 5)}});
  ASSERT_TRUE(out[0].has_value());
  ASSERT_FALSE(out[0]->ok());
  EXPECT_NE(out[0]->message().find("node 1 (n1): process group 5 does not contain this rank"),
            std::string::npos)
      << out[0]->ToString();
  EXPECT_TRUE(Calls(0).empty());  // node 2, ready beside it, was never issued
  EXPECT_EQ(executors_[0]->status().code(), out[0]->code());
}

TEST_F(ExecutorTest, AnIssueOrderThatCannotBeMetLeavesTheRankWaitingAndSaysWhy) {
  // Node 2 depends on node 1, but the order puts 2 first: node 1 never issues.
  config_.comm_streams = ExecutorConfig::CommStreams::kConcurrent;
  std::vector<std::vector<N>> traces = {{AllReduce(1, 1024, ""), AllReduce(2, 1024, "")}};
  traces[0][1].deps = {1};
  const IssueOrder order = {{kWorldGroup, {2, 1}}};
  auto out = RunAll(traces, {&order});
  EXPECT_FALSE(out[0].has_value());
  const std::string pending = executors_[0]->DescribePending();
  EXPECT_NE(pending.find("node 1 (n1, collective) is ready but its resource is busy or an earlier "
                         "collective of its group (issue order)"),
            std::string::npos)
      << pending;
}

// Remote memory (runtime/remote_memory.h): figures worked by hand from ASTRA-sim's analytical
// backend. Latency 1000 ns, 1 GB/s: 1000 B take 2000 ns, 2000 B 3000 ns. Each rank has one
// memory op in flight (the Executor's rule), and a queued access counts as in flight.
//   rank 0: LOAD 1 (1000 B), STORE 2 (1000 B), COMP 3 (1 us) after 1
//   rank 1: LOAD 1 (1000 B), COMP 2 (1 us), STORE 3 (2000 B) after 2
// MEMORY_POOL: r0.1 0-2000 | r1.1 2000-4000 | r0.2 (issued at 2000) 4000-6000 | r1.3 (issued at
// 4000, when r1.1 frees the rank's memory slot, behind r0.2) 6000-9000.
// PER_NPU: r0 1 0-2000, 2 2000-4000; r1 1 0-2000, 3 2000-5000.
class ExecutorMemoryTest : public ExecutorTest {
 protected:
  std::vector<TimeNs> Finishes(config::MemoryType type, int nodes, int per_node) {
    world_ = FakeWorld();  // time from 0 again
    config::MemoryConfig m;
    m.path = "memory.json";
    m.type = type;
    m.remote_mem_latency_ns = 1000;
    m.remote_mem_bw_gbps = 1;
    m.num_nodes = nodes;
    m.num_npus_per_node = per_node;
    config_.memory = m;
    auto mem = RemoteMemory::CreateSimulated(m, 2, nullptr);
    EXPECT_TRUE(mem.ok());
    config_.remote_memory = mem->get();
    auto out = RunAll({{Mem(1, false, 1000), Mem(2, true, 1000), Comp(3, 1, {1})},
                       {Mem(1, false, 1000), Comp(2, 1), Mem(3, true, 2000, {2})}});
    std::vector<TimeNs> finish;
    for (int r = 0; r < 2; ++r) {
      EXPECT_TRUE(out[r].has_value() && out[r]->ok()) << "rank " << r;
      finish.push_back(executors_[r]->summary().finish);
    }
    config_.remote_memory = nullptr;
    return finish;
  }
};

TEST_F(ExecutorMemoryTest, PoolQueuesEveryRanksAccessesFifo) {
  EXPECT_EQ(Finishes(config::MemoryType::kMemoryPool, 0, 0), (std::vector<TimeNs>{6000, 9000}));
}

TEST_F(ExecutorMemoryTest, PerNodeQueuesOnlyTheRanksOfANode) {
  // Both ranks on one node: the pool's figures.
  EXPECT_EQ(Finishes(config::MemoryType::kPerNodeMemoryExpansion, 1, 2),
            (std::vector<TimeNs>{6000, 9000}));
}

TEST_F(ExecutorMemoryTest, PerNodeOfOneNpuAndPerNpuDoNotWaitForOthers) {
  EXPECT_EQ(Finishes(config::MemoryType::kPerNodeMemoryExpansion, 2, 1),
            (std::vector<TimeNs>{4000, 5000}));
  EXPECT_EQ(Finishes(config::MemoryType::kPerNpuMemoryExpansion, 0, 0),
            (std::vector<TimeNs>{4000, 5000}));
}

}  // namespace
}  // namespace genie::runtime
