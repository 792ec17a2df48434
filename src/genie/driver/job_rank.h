// JobRank: one rank of a job whose ranks sit at other NPUs of a shared SimBackend (several jobs
// on one network, or one job placed on hosts: driver/jobs_simulation.h). It keeps the job's own
// rank numbers and world size, and sends to and receives from its peers' NPUs. With a nonzero
// salt, a collective's flow id (the same on every rank of the job: the flow model paces a
// chunk's messages by it) is mixed with the salt, so that two jobs running the same collectives
// never share one. Refers to the NPU view and the rank -> NPU table it is given (they outlive it).
// Threading: the simulation's thread, as every Backend.
#pragma once

#include <vector>

#include "genie/common/check.h"
#include "genie/runtime/backend.h"

namespace genie::driver {

class JobRank final : public runtime::Backend {
 public:
  JobRank(runtime::Backend& npu, const std::vector<int>& npu_of, int rank, uint64_t salt)
      : npu_(npu), npu_of_(npu_of), rank_(rank), salt_(salt) {}
  int rank() const override { return rank_; }
  int world_size() const override { return static_cast<int>(npu_of_.size()); }
  TimeNs Now() const override { return npu_.Now(); }
  void After(TimeNs delay, runtime::Callback fn) override { npu_.After(delay, std::move(fn)); }
  void AfterEvent(TimeNs delay, EventHandler* handler, uint64_t arg) override {
    npu_.AfterEvent(delay, handler, arg);
  }
  void Send(const runtime::Message& msg, runtime::Callback done) override {
    npu_.Send(Renamed(msg), std::move(done));
  }
  void Recv(const runtime::Message& msg, runtime::Callback done) override {
    npu_.Recv(Renamed(msg), std::move(done));
  }
  void SendEvent(const runtime::Message& msg, EventHandler* handler, uint64_t arg) override {
    npu_.SendEvent(Renamed(msg), handler, arg);
  }
  void RecvEvent(const runtime::Message& msg, EventHandler* handler, uint64_t arg) override {
    npu_.RecvEvent(Renamed(msg), handler, arg);
  }
  void SendEventAfter(TimeNs first, TimeNs then, const runtime::Message& msg,
                      EventHandler* handler, uint64_t arg) override {
    npu_.SendEventAfter(first, then, Renamed(msg), handler, arg);
  }
  bool modelled() const override { return true; }
  runtime::ScheduleCache* schedule_cache() override { return npu_.schedule_cache(); }

 private:
  runtime::Message Renamed(runtime::Message m) const {
    GENIE_CHECK(m.peer >= 0 && m.peer < world_size()) << "rank " << rank_ << ": peer " << m.peer;
    m.peer = npu_of_[static_cast<size_t>(m.peer)];
    if (m.flow != 0 && salt_ != 0) {
      // splitmix64's finalizer: distinct (flow, job) pairs collide with probability 2^-64.
      uint64_t z = m.flow ^ salt_;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      z ^= z >> 31;
      m.flow = z == 0 ? 1 : z;
    }
    return m;
  }

  runtime::Backend& npu_;
  const std::vector<int>& npu_of_;
  int rank_;
  uint64_t salt_;
};

}  // namespace genie::driver
