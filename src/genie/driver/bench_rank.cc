// One rank of `genie bench` (bench.h): BenchJob runs the sweep on the real backend; BenchRank
// joins the job, runs it and returns the verdict every rank agreed on.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>

#include "genie/collective/buffer_layout.h"
#include "genie/collective/planner.h"
#include "genie/driver/bench.h"
#include "genie/driver/rank_backend.h"
#include "genie/launch/local_launcher.h"
#include "genie/loop/precise_sleep.h"
#include "genie/real_backend/real_backend.h"
#include "genie/report/atomic_file.h"
#include "genie/report/html/html_page.h"
#include "genie/report/html/page_model.h"
#include "genie/runtime/collective_runner.h"
#include "genie/runtime/verify_data.h"

namespace genie::driver {
namespace {

// Tag space: bench runs no Executor, so it owns every tag. Bits 32..59 number the collectives
// (each iteration its own, so back-to-back iterations never match each other's messages),
// bit 62 the barriers, bit 61 the results sent to rank 0, bit 60 the verdict sent back.
constexpr uint64_t kBarrierBit = 1ull << 62;
constexpr uint64_t kResultBit = 1ull << 61;
constexpr uint64_t kVerdictBit = 1ull << 60;
constexpr uint64_t kSeqMask = (1ull << 28) - 1;

// A test hook (docs/bench.md): the rank named here spoils one element of its result before the
// -c check, which must then report it.
constexpr const char* kCorruptEnv = "GENIE_BENCH_TEST_CORRUPT_RANK";

// One rank's sweep on the real backend: see bench.h. Lives on the loop's thread; every step
// continues from a callback, so nothing blocks the loop.
class BenchJob {
 public:
  BenchJob(const BenchPlan& plan, real_backend::RealBackend& backend, bool corrupt)
      : plan_(plan), backend_(backend), corrupt_(corrupt) {}

  void Start(std::function<void(const Status&)> done) {
    done_ = std::move(done);
    if (backend_.rank() == 0) Print(report::BenchHeaderText(plan_.info));
    NextSize();
  }
  int exit_code() const { return exit_code_; }

 private:
  int world() const { return backend_.world_size(); }

  static void Print(const std::string& text) {
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  }

  void NextSize() {
    if (size_index_ == plan_.sizes.size()) {
      EndSweep();
      return;
    }
    spec_ = BenchSpec(plan_, size_index_, world());
    auto schedule = collective::Plan(spec_, backend_.rank());
    if (!schedule.ok()) {
      Finish(schedule.status().WithContext(
          fmt::format("rank {}: planning {} of {} B", backend_.rank(),
                      CollectiveTypeName(spec_.type), plan_.sizes[size_index_])));
      return;
    }
    schedule_ = std::move(schedule).value();
    times_.clear();
    iteration_ = 0;
    // Ranks start each size together; from then on iterations run back to back.
    Barrier([this] { Iterate(); });
  }

  void Barrier(std::function<void()> then) {
    collective::CollectiveSpec spec;
    spec.type = CollectiveType::kBarrier;
    spec.group = spec_.group;
    auto schedule = collective::Plan(spec, backend_.rank());
    if (!schedule.ok()) {
      Finish(schedule.status());
      return;
    }
    runner_ = std::make_unique<runtime::CollectiveRunner>(
        backend_, std::move(schedule).value(), kBarrierBit | ((barriers_++ & kSeqMask) << 32),
        runtime::LocalCosts{}, 0, collective::SchedulingPolicy::kFifo, nullptr, std::move(then));
    runner_->Start();
  }

  uint64_t NextTag() { return (seq_++ & kSeqMask) << 32; }

  // Warm-up iterations, a barrier, the timed ones back to back, a barrier. A rank's time is
  // its whole timed loop, closing barrier included, over the iterations — nccl-tests' timer,
  // which stops only once the rank's stream has finished. Without the closing barrier a rank
  // that only sends (a reduce's leaf) would stop its clock once its data sat in socket buffers.
  void Iterate() {
    const int warmup = plan_.info.warmup, total = warmup + plan_.info.iters;
    if (iteration_ == warmup && !timing_) {
      timing_ = true;
      Barrier([this] {
        loop_start_ = backend_.Now();
        Iterate();
      });
      return;
    }
    if (iteration_ == total) {
      timing_ = false;
      Barrier([this] {
        loop_us_ = static_cast<double>(backend_.Now() - loop_start_) / 1e3;
        if (plan_.info.check) {
          Check();
        } else {
          Report(-1);
        }
      });
      return;
    }
    const TimeNs start = backend_.Now();
    // The runner's `done` runs from the loop (After(0)), not from inside the runner, so the
    // next iteration may replace it.
    runner_ = std::make_unique<runtime::CollectiveRunner>(
        backend_, schedule_, NextTag(), runtime::LocalCosts{}, plan_.plan.active_chunks,
        collective::SchedulingPolicy::kLifo, nullptr, [this, start] {
          if (iteration_ >= plan_.info.warmup) {
            times_.push_back(static_cast<double>(backend_.Now() - start) / 1e3);
          }
          ++iteration_;
          Iterate();
        });
    runner_->Start();
  }

  // One more iteration with real data, as nccl-tests checks after timing.
  void Check() {
    if (spec_.size % 4 != 0) {  // the data are float32 elements
      Report(-1);
      return;
    }
    collective::BufferLayout layout = collective::Layout(spec_, backend_.rank());
    Bytes largest_receive = 0;
    for (const auto& step : schedule_.steps) {
      largest_receive = std::max<Bytes>(largest_receive, step.recv.length);
    }
    Status st = runtime::ReserveVerifyData(
        buffer_, layout.buffer_bytes, layout.buffer_bytes + largest_receive, 0,
        fmt::format("rank {}: -c check of {} B", backend_.rank(), plan_.sizes[size_index_]));
    if (!st.ok()) {
      Finish(st.WithDetail("or pass -c 0"));
      return;
    }
    runtime::FillInitial(layout, buffer_);
    expected_ = std::move(layout.final);
    runner_ = std::make_unique<runtime::CollectiveRunner>(
        backend_, schedule_, NextTag(), runtime::LocalCosts{}, plan_.plan.active_chunks,
        collective::SchedulingPolicy::kLifo, &buffer_, [this] {
          if (corrupt_ && !expected_.empty() && expected_[0].range.length >= 4) {
            float v;
            std::memcpy(&v, buffer_.data() + expected_[0].range.offset, 4);
            v += 1.0f;
            std::memcpy(buffer_.data() + expected_[0].range.offset, &v, 4);
          }
          Report(static_cast<int64_t>(runtime::CountWrong(expected_, buffer_)));
        });
    runner_->Start();
  }

  // Every rank's timings and wrong count go to rank 0, which prints the row.
  void Report(int64_t wrong) {
    const size_t n = static_cast<size_t>(plan_.info.iters);
    const uint64_t tag = kResultBit | ((size_index_ & kSeqMask) << 32);
    // [wrong, timed loop (µs), each timed iteration (µs)...]
    payload_ = {static_cast<double>(wrong), loop_us_};
    payload_.insert(payload_.end(), times_.begin(), times_.end());
    payload_.resize(n + 2, 0.0);
    if (backend_.rank() != 0) {
      runtime::Message msg;
      msg.peer = 0;
      msg.tag = tag;
      msg.bytes = payload_.size() * sizeof(double);
      msg.data = payload_.data();
      backend_.Send(msg, [this] {
        ++size_index_;
        NextSize();
      });
      return;
    }
    gathered_.assign(static_cast<size_t>(world()), std::vector<double>(n + 2, 0.0));
    gathered_[0] = payload_;
    pending_ = world() - 1;
    if (pending_ == 0) {
      Collected();
      return;
    }
    for (int peer = 1; peer < world(); ++peer) {
      runtime::Message msg;
      msg.peer = peer;
      msg.tag = tag;
      msg.bytes = (n + 2) * sizeof(double);
      msg.into = gathered_[static_cast<size_t>(peer)].data();
      backend_.Recv(msg, [this] {
        if (--pending_ == 0) Collected();
      });
    }
  }

  // Rank 0, all ranks' figures for this size in hand.
  void Collected() {
    std::vector<double> rank_us;
    std::vector<std::vector<double>> per_iteration;
    int64_t wrong = 0;
    for (const auto& g : gathered_) {
      if (g[0] < 0) wrong = -1;
      if (wrong >= 0) wrong += static_cast<int64_t>(g[0]);
      rank_us.push_back(g[1] / plan_.info.iters);
      per_iteration.emplace_back(g.begin() + 2, g.end());
    }
    rows_.push_back(
        report::MakeBenchRow(plan_.info, plan_.sizes[size_index_], rank_us, per_iteration, wrong));
    Print(report::BenchRowText(plan_.info, rows_.back()));
    ++size_index_;
    NextSize();
  }

  void EndSweep() {
    if (backend_.rank() != 0) {
      runtime::Message msg;
      msg.peer = 0;
      msg.tag = kVerdictBit;
      msg.bytes = sizeof(verdict_);
      msg.into = &verdict_;
      backend_.Recv(msg, [this] {
        exit_code_ = verdict_;
        Finish(Status::Ok());
      });
      return;
    }
    BenchVerdict verdict = JudgeBench(plan_, rows_);
    std::string text = report::BenchFooterText(plan_.info, rows_);
    for (const auto& f : verdict.failures) text += "# FAILED: " + f + "\n";
    if (verdict.failures.empty() && (plan_.min_busbw >= 0 || plan_.expect_gbps >= 0)) {
      text += "# PASSED: every bandwidth check\n";
    }
    Print(text);
    exit_code_ = verdict.exit_code;
    if (!report_path_.empty()) {
      const nlohmann::json j = report::BenchJson(plan_.info, rows_, verdict.ToJson(plan_));
      Status st = report::html::WriteReportFromPanels(
          {report::html::BenchPanel(j, json_path_.empty() ? "genie bench" : json_path_)},
          report_path_);
      if (!st.ok()) {
        std::cerr << "genie bench: --report: " << st.message() << "\n";
        exit_code_ = 1;
      }
    }
    if (!json_path_.empty()) {
      nlohmann::json j = report::BenchJson(plan_.info, rows_, verdict.ToJson(plan_));
      Status st = report::WriteFileAtomically(json_path_, j.dump(2) + "\n");
      if (!st.ok()) {
        std::cerr << "genie bench: --json: " << st.message() << "\n";
        exit_code_ = 1;
      }
    }
    verdict_ = exit_code_;
    pending_ = world() - 1;
    if (pending_ == 0) {
      Finish(Status::Ok());
      return;
    }
    for (int peer = 1; peer < world(); ++peer) {
      runtime::Message msg;
      msg.peer = peer;
      msg.tag = kVerdictBit;
      msg.bytes = sizeof(verdict_);
      msg.data = &verdict_;
      backend_.Send(msg, [this] {
        if (--pending_ == 0) Finish(Status::Ok());
      });
    }
  }

  void Finish(const Status& st) {
    if (finished_) return;
    finished_ = true;
    done_(st);
  }

 public:
  void set_json_path(std::string p) { json_path_ = std::move(p); }
  void set_report_path(std::string p) { report_path_ = std::move(p); }

 private:
  const BenchPlan& plan_;
  real_backend::RealBackend& backend_;
  bool corrupt_;
  std::function<void(const Status&)> done_;
  std::string json_path_;
  std::string report_path_;
  size_t size_index_ = 0;
  collective::CollectiveSpec spec_;
  collective::Schedule schedule_;
  std::unique_ptr<runtime::CollectiveRunner> runner_;
  int iteration_ = 0;
  bool timing_ = false;  // the barrier before the timed loop has been entered
  TimeNs loop_start_ = 0;
  double loop_us_ = 0;
  uint64_t seq_ = 0;
  uint64_t barriers_ = 0;
  std::vector<double> times_;  // µs, this rank's timed iterations of the current size
  std::vector<uint8_t> buffer_;
  std::vector<collective::Region> expected_;
  std::vector<double> payload_;
  std::vector<std::vector<double>> gathered_;
  int pending_ = 0;
  std::vector<report::BenchRow> rows_;
  int32_t verdict_ = 0;
  int exit_code_ = 0;
  bool finished_ = false;
};

}  // namespace

int BenchRank(const BenchOptions& o, const launch::RankEnv& env) {
  auto plan = ResolveBench(o, env.world_size);
  if (!plan.ok()) {
    // Every rank says it (as `genie run` does): a launcher stops the others as soon as the
    // first one exits, which need not be rank 0.
    std::cerr << "genie bench: rank " << env.rank << ": " << plan.status().message() << "\n";
    return launch::kExitBadInput;
  }
  // The data check's buffers and the outputs, refused before any byte is sent.
  if (Status fits = CheckBenchFits(o, *plan, env.world_size, {env.rank}); !fits.ok()) {
    std::cerr << "genie bench: rank " << env.rank << ": " << fits.message() << "\n";
    return fits.code() == Status::Code::kIoError ? launch::kExitFailed : launch::kExitBadInput;
  }
  auto identity = RankBackendOptions(env, o.bind);
  if (!identity.ok()) {
    std::cerr << "genie bench: rank " << env.rank << ": " << identity.status().message() << "\n";
    return launch::kExitBadInput;
  }
  real_backend::RealBackendOptions opt = std::move(*identity);
  opt.channels = o.channels;
  opt.tcp_congestion = o.tcp_congestion;
  opt.transport = o.transport;
  opt.carry_data = o.check != 0;
  auto timeout = ParseDuration(o.peer_timeout);
  if (!timeout.ok()) {
    std::cerr << "genie bench: --peer-timeout: " << timeout.status().message() << "\n";
    return launch::kExitBadInput;
  }
  opt.peer_timeout = *timeout;
  const int local = env.local_world_size > 0 ? env.local_world_size : env.world_size;
  auto policy = loop::DefaultSleepPolicy(local);
  opt.spin = policy.spin;
  opt.spin_us = static_cast<int>(policy.margin / kNsPerUs);

  bool corrupt = false;
  if (const char* v = std::getenv(kCorruptEnv); v != nullptr && *v != '\0') {
    corrupt = std::atoi(v) == env.rank;
  }
  auto backend = real_backend::RealBackend::Create(opt);
  if (!backend.ok()) {
    std::cerr << "genie bench: rank " << env.rank << ": " << backend.status().message() << "\n";
    return backend.status().code() == Status::Code::kInvalidArgument ? launch::kExitBadInput
                                                                     : launch::kExitPeerFailed;
  }
  BenchJob job(*plan, **backend, corrupt);
  if (env.rank == 0) job.set_json_path(o.json_path);
  if (env.rank == 0) job.set_report_path(o.report_path);
  Status status;
  job.Start([&](const Status& st) {
    status = st;
    (*backend)->Stop();
  });
  (*backend)->Run();
  if (status.ok() && !(*backend)->status().ok()) status = (*backend)->status();
  if (!status.ok()) {
    (*backend)->Abort(status);
    std::cerr << "genie bench: rank " << env.rank << ": " << status.message() << "\n";
    if (status.code() == Status::Code::kInvalidArgument) return launch::kExitBadInput;
    return status.code() == Status::Code::kUnavailable || status.code() == Status::Code::kTimeout
               ? launch::kExitPeerFailed
               : launch::kExitFailed;
  }
  Status shut = (*backend)->Shutdown();
  if (!shut.ok()) spdlog::warn("rank {}: shutdown: {}", env.rank, shut.message());
  return job.exit_code();
}

}  // namespace genie::driver
