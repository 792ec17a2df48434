// FaultyEnv: wraps another Env (real or manual) and injects the failures a run must survive or
// report clearly — a read-only or full file system, a fork that fails, a child killed from
// outside, a clock that jumps forward. Everything not made to fail is passed to the wrapped
// Env unchanged. Faults are set by the test before or while the code under test runs.
//
// Ownership: borrows `base`, which must outlive it. Threading: any thread (faults are read
// under one mutex; the clock offset is atomic).
#pragma once

#include <signal.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "genie/env/env.h"

namespace genie::env {

class FaultyEnv final : public Env {
 public:
  explicit FaultyEnv(Env* base) : base_(base) {}

  // Writes under `prefix` (creating or appending to a file, renaming onto, removing, making a
  // directory) fail with EROFS, also through files opened before.
  void SetReadOnly(const std::string& prefix);
  // Appends under `prefix` fail with ENOSPC once `bytes_left` more bytes have gone there.
  void SetDiskFull(const std::string& prefix, int64_t bytes_left);
  // After `successes` more spawns succeed, every spawn fails with `err` (fork's EAGAIN).
  void FailSpawnsAfter(int successes, int err = EAGAIN);
  // The `nth` child spawned through this Env (0-based) is sent `sig` `after` it started.
  void KillChild(int nth, TimeNs after, int sig = SIGKILL);
  // Moves this Env's clock forward by `d` at once (a stalled VM, a resumed machine). Timers
  // armed before keep their place on the wrapped clock, so they fire late on the jumped one.
  void JumpClock(TimeNs d) { offset_.fetch_add(d < 0 ? 0 : d); }
  // Removes every fault above (the clock keeps its jumps).
  void ClearFaults();

  TimeNs Now() const override { return base_->Now() + offset_.load(); }
  TimeNs NowWall() const override { return base_->NowWall() + offset_.load(); }
  bool ClockMovesByItself() const override { return base_->ClockMovesByItself(); }
  void SleepFor(TimeNs d) override { base_->SleepFor(d); }
  Result<std::unique_ptr<Timer>> NewTimer() override;

  Result<std::string> ReadFile(const std::string& path) override { return base_->ReadFile(path); }
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;
  Status RemoveAll(const std::string& path) override;
  Status CreateDir(const std::string& path) override;
  Status CreateDirs(const std::string& path) override;
  bool FileExists(const std::string& path) override { return base_->FileExists(path); }
  Result<std::string> CreateTempDir(const std::string& prefix) override;

  Result<std::unique_ptr<ProcessGroup>> NewProcessGroup() override;
  int ProcessId() const override { return base_->ProcessId(); }

  std::optional<std::string> GetEnv(const std::string& name) const override {
    return base_->GetEnv(name);
  }
  void SetEnv(const std::string& name, const std::string& value) override {
    base_->SetEnv(name, value);
  }

 private:
  class FaultyFile;
  class FaultyTimer;
  class FaultyProcessGroup;
  struct Kill {
    TimeNs after;
    int sig;
  };

  // OK, or the injected failure for a write of `bytes` under `path`.
  Status CheckWrite(const std::string& path, int64_t bytes);

  Env* base_;
  std::atomic<TimeNs> offset_{0};
  std::mutex mu_;
  std::vector<std::string> read_only_;
  std::map<std::string, int64_t> disk_left_;  // prefix -> bytes it may still take
  int spawn_successes_left_ = -1;             // -1: never fail
  int spawn_errno_ = EAGAIN;
  int spawns_ = 0;
  std::map<int, Kill> kills_;  // nth spawn -> its kill
};

}  // namespace genie::env
