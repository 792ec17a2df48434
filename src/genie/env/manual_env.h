// ManualEnv: an Env for tests in which nothing happens by itself. Its clock moves only when the
// test calls Advance() (or when code under test sleeps or waits for processes: SleepFor(d)
// advances it by d, ProcessGroup::Wait jumps it to the next scripted event), so timeouts,
// heartbeats and escalations are tested by arithmetic, exactly and at once. Timers it hands out
// become readable when the clock passes their deadline, so an EventLoop on a ManualEnv fires
// its timers when the test advances time — also from another thread, since a timer's fd wakes
// the loop's epoll. Files live in memory (paths are normalised; "/" and "/tmp" exist at start);
// child processes follow scripts (ProcessScript); environment variables are a map.
//
// Ownership: the test owns the ManualEnv; everything using it must be gone before it is.
// Threading: every method may be called from any thread (one mutex; the time is atomic).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "genie/env/env.h"

namespace genie::env {

// How a scripted child behaves: it runs `runs_for` and then ends with `wait_status`
// (ExitedWith(3), KilledBy(9)); runs_for < 0 runs until signalled. SIGINT, SIGTERM and SIGKILL
// end it at once with KilledBy(sig), except SIGTERM when `ignores_sigterm`.
struct ProcessScript {
  TimeNs runs_for = 0;
  int wait_status = 0;
  bool ignores_sigterm = false;
};

class ManualEnv final : public Env {
 public:
  // Decides each spawned child's script from its spec (its argv and environment).
  using Scripter = std::function<ProcessScript(const ProcessSpec& spec)>;
  // One signal a ProcessGroup sent, and when.
  struct SentSignal {
    int pid;
    int signal;
    TimeNs at;
  };

  explicit ManualEnv(TimeNs start = 0);
  ~ManualEnv() override;

  // Moves the clock forward by `d` (d < 0 is ignored: a clock that goes back breaks every
  // reader) and makes readable the timers whose deadline it passed.
  void Advance(TimeNs d);
  void SetWallOffset(TimeNs offset) { wall_offset_.store(offset); }

  // Scripts of the children spawned from now on (default: exit 0 at once).
  void SetScripter(Scripter scripter);
  // Delivers `sig` (SIGINT or SIGTERM) to this process at `at`, as a shell or batch system would.
  void SignalAt(TimeNs at, int sig);
  // Every child spawned so far, in order, and the signals sent to children.
  std::vector<ProcessSpec> spawned() const;
  std::vector<SentSignal> signals_sent() const;

  TimeNs Now() const override { return now_.load(std::memory_order_acquire); }
  TimeNs NowWall() const override { return Now() + wall_offset_.load(); }
  bool ClockMovesByItself() const override { return false; }
  void SleepFor(TimeNs d) override { Advance(d); }
  Result<std::unique_ptr<Timer>> NewTimer() override;

  Result<std::string> ReadFile(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;
  Status RemoveAll(const std::string& path) override;
  Status CreateDir(const std::string& path) override;
  Status CreateDirs(const std::string& path) override;
  bool FileExists(const std::string& path) override;
  Result<std::string> CreateTempDir(const std::string& prefix) override;

  Result<std::unique_ptr<ProcessGroup>> NewProcessGroup() override;
  int ProcessId() const override { return 1; }

  std::optional<std::string> GetEnv(const std::string& name) const override;
  void SetEnv(const std::string& name, const std::string& value) override;

 private:
  class ManualTimer;
  class ManualFile;
  class ManualProcessGroup;
  struct Child {
    ProcessScript script;
    TimeNs ends_at;  // -1: until signalled
    int wait_status;
    bool reaped = false;
  };

  // Caller holds mu_.
  Status AppendLocked(const std::string& path, std::string_view data);
  bool IsDirLocked(const std::string& path) const;
  void FireTimersLocked(TimeNs now);

  std::atomic<TimeNs> now_;
  std::atomic<TimeNs> wall_offset_{1'700'000'000 * kNsPerSec};
  mutable std::mutex mu_;
  std::map<std::string, std::string> files_;
  std::set<std::string> dirs_;
  int next_temp_ = 0;
  std::map<ManualTimer*, TimeNs> armed_;  // timer -> deadline
  std::map<std::string, std::string> vars_;
  Scripter scripter_;
  std::map<int, Child> children_;  // pid -> child
  std::vector<ProcessSpec> spawned_;
  std::vector<SentSignal> sent_;
  std::multimap<TimeNs, int> signals_to_us_;
  int next_pid_ = 1000;
};

}  // namespace genie::env
