// Unit test of the runner's timing contract on a tiny in-test virtual-time backend (the real
// simulator is tested against ASTRA-sim's figures in tests/simulate_astra_sim_e2e_test.cc).
#include "genie/runtime/collective_runner.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <queue>
#include <tuple>

#include "genie/collective/planner.h"

namespace genie::runtime {
namespace {

using collective::ByteRange;
using collective::Phase;
using collective::Schedule;
using collective::SchedulingPolicy;
using collective::Step;
using collective::StepKind;

// All ranks share one virtual clock; every message takes `delay` ns, no contention.
class World {
 public:
  explicit World(TimeNs delay) : delay_(delay) {}
  class View : public Backend {
   public:
    View(World* w, int r) : w_(w), r_(r) {}
    int rank() const override { return r_; }
    int world_size() const override { return 8; }
    TimeNs Now() const override { return w_->now_; }
    void After(TimeNs d, Callback fn) override { w_->At(w_->now_ + d, std::move(fn)); }
    void Send(const Message& m, Callback done) override {
      auto key = std::make_tuple(r_, m.peer, m.tag);
      w_->At(w_->now_ + w_->delay_, [w = w_, key, done = std::move(done)]() mutable {
        w->arrived_[key]++;
        w->Match(key);
        done();
      });
    }
    void Recv(const Message& m, Callback done) override {
      auto key = std::make_tuple(m.peer, r_, m.tag);
      w_->posted_[key].push(std::move(done));
      w_->Match(key);
    }
    bool modelled() const override { return true; }

   private:
    World* w_;
    int r_;
  };

  void At(TimeNs t, Callback fn) { q_.push({t, seq_++, std::move(fn)}); }
  void Run() {
    while (!q_.empty()) {
      auto e = q_.top();
      q_.pop();
      now_ = e.t;
      e.fn();
    }
  }
  TimeNs now_ = 0;

 private:
  using Key = std::tuple<int, int, uint64_t>;
  void Match(const Key& k) {
    auto& posted = posted_[k];
    while (arrived_[k] > 0 && !posted.empty()) {
      --arrived_[k];
      auto fn = std::move(posted.front());
      posted.pop();
      At(now_, std::move(fn));
    }
  }
  struct Ev {
    TimeNs t;
    uint64_t seq;
    Callback fn;
    bool operator<(const Ev& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
  };
  TimeNs delay_;
  uint64_t seq_ = 0;
  std::priority_queue<Ev> q_;
  std::map<Key, int> arrived_;
  std::map<Key, std::queue<Callback>> posted_;
};

// Rank 0 sends each chunk to rank 1, which receives and reduces it.
Schedule Pair(int rank, int chunks, Bytes bytes) {
  Schedule s;
  s.rank = rank;
  s.buffer_bytes = bytes * chunks;
  for (int c = 0; c < chunks; ++c) {
    Step st;
    st.kind = rank == 0 ? StepKind::kSend : StepKind::kRecvReduce;
    st.send_peer = 1;
    st.recv_peer = 0;
    st.send = st.recv = ByteRange{bytes * c, bytes};
    st.send_tag = st.recv_tag = static_cast<uint32_t>(c);
    uint32_t idx = static_cast<uint32_t>(s.steps.size());
    s.steps.push_back(st);
    s.phases.push_back(Phase{static_cast<uint32_t>(c), 0, CollectiveType::kAllReduce, idx, idx + 1});
  }
  return s;
}

TimeNs RunPair(int chunks, int active, TimeNs* rank0_done) {
  World w(/*delay=*/1000);
  World::View v0(&w, 0), v1(&w, 1);
  LocalCosts costs{/*endpoint_delay_ns=*/10, /*local_mem_bw=*/100};  // 100 B/ns
  TimeNs t0 = -1, t1 = -1;
  CollectiveRunner r0(v0, Pair(0, chunks, 1050), 0, costs, active, SchedulingPolicy::kFifo,
                      nullptr, [&] { t0 = w.now_; });
  CollectiveRunner r1(v1, Pair(1, chunks, 1050), 0, costs, active, SchedulingPolicy::kFifo,
                      nullptr, [&] { t1 = w.now_; });
  r0.Start();
  r1.Start();
  w.Run();
  EXPECT_EQ(r0.bytes_sent(), 1050u * chunks);
  EXPECT_EQ(r1.bytes_received(), 1050u * chunks);
  *rank0_done = t0;
  return t1;
}

TEST(CollectiveRunner, ChargesEndpointDelayAndReduction) {
  TimeNs t0;
  // e (10) + d (1000) + 3*floor(1050/100)=30 + final e (10)
  EXPECT_EQ(RunPair(1, 1, &t0), 1050);
  EXPECT_EQ(t0, 1020);  // sender: e + delivery + final e
}

TEST(CollectiveRunner, ActiveChunksFormWaves) {
  TimeNs t0;
  EXPECT_EQ(RunPair(4, 1, &t0), 4 * 1020 + 30);  // receiver trails the sender's last chunk
  EXPECT_EQ(t0, 4 * 1020);
  EXPECT_EQ(RunPair(4, 2, &t0), 2 * 1020 + 30);
  EXPECT_EQ(RunPair(4, 0, &t0), 1 * 1020 + 30);  // unlimited
}

}  // namespace
}  // namespace genie::runtime

namespace genie::runtime {
namespace {

// Planning chunks on demand changes nothing: a ring all-reduce of 4 chunks finishes at the
// same times whether the runner gets the whole schedule or plans each chunk as it starts.
TEST(CollectiveRunner, OnDemandChunksMatchTheWholeSchedule) {
  collective::CollectiveSpec spec;
  spec.type = CollectiveType::kAllReduce;
  spec.size = 1 << 16;
  spec.group = {0, 1, 2, 3, 4, 5, 6, 7};
  spec.options.chunks = 4;
  spec.options.active_chunks = 1;
  for (SchedulingPolicy policy : {SchedulingPolicy::kFifo, SchedulingPolicy::kLifo}) {
    std::vector<TimeNs> finish[2];
    for (int lazy = 0; lazy < 2; ++lazy) {
      World w(/*delay=*/700);
      std::vector<std::unique_ptr<World::View>> views;
      std::vector<std::unique_ptr<CollectiveRunner>> runners;
      finish[lazy].assign(8, -1);
      LocalCosts costs{/*endpoint_delay_ns=*/10, /*local_mem_bw=*/100};
      for (int r = 0; r < 8; ++r) {
        views.push_back(std::make_unique<World::View>(&w, r));
        Callback done = [&w, &finish, lazy, r] { finish[lazy][r] = w.now_; };
        if (lazy) {
          auto first = collective::PlanChunk(spec, r, 0);
          ASSERT_TRUE(first.ok());
          runners.push_back(std::make_unique<CollectiveRunner>(
              *views.back(), std::move(first).value(), 4,
              [spec, r](uint32_t k) { return collective::PlanChunk(spec, r, static_cast<int>(k)); },
              0, costs, 1, policy, std::move(done)));
        } else {
          auto whole = collective::Plan(spec, r);
          ASSERT_TRUE(whole.ok());
          runners.push_back(
              std::make_unique<CollectiveRunner>(*views.back(), std::move(whole).value(), 0, costs,
                                                 1, policy, nullptr, std::move(done)));
        }
      }
      for (auto& r : runners) r->Start();
      w.Run();
    }
    EXPECT_EQ(finish[0], finish[1]);
    EXPECT_GT(finish[0][0], 0);
  }
}

}  // namespace
}  // namespace genie::runtime
