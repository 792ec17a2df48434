// Env: everything genie asks of the operating system that a test may want to replace — the
// clock and timers, files, child processes and environment variables — behind one interface,
// in the manner of LevelDB's leveldb::Env. Three implementations:
//   RealEnv    (real_env.h)   the OS; Env::Default() is the process-wide one real runs use.
//   ManualEnv  (manual_env.h) a clock that moves only when the test advances it, an in-memory
//                             file system and scripted child processes: timing and failure
//                             logic tested by arithmetic, without sleeps or real kills.
//   FaultyEnv  (faulty_env.h) wraps another Env and injects failures (EROFS/ENOSPC on writes,
//                             failing spawns, killed processes, a clock that jumps).
// Code that needs the OS takes an `Env*` (constructor or option, defaulting to Default()).
// Network sockets and epoll stay direct: the transports and the event loop own them, and the
// simulator, not an Env, stands in for the network.
//
// Errors: file and process calls return IoError (NotFound for a missing file) whose message is
// the OS's reason alone (strerror's words), so that callers name the file, rank or peer and say
// what to do in their own words.
//
// Ownership: an Env is borrowed by everything that uses it and must outlive them; Default() is
// never destroyed. Threading: every method may be called from any thread; objects an Env hands
// out (a WritableFile, a Timer, a ProcessGroup) belong to their caller's thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/env/process.h"

namespace genie::env {

// A file being written from the start (created or truncated): what the results streams go to.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends all of `data` with as few writes as the OS allows (one, normally): a crash leaves
  // at most a partial last append, and what was appended is in the kernel, not a user buffer.
  virtual Status Append(std::string_view data) = 0;
  // Closing twice is harmless; the destructor closes.
  virtual Status Close() = 0;
};

// A deadline on the Env's clock that a poller can wait for: fd() becomes readable once Now()
// reaches the armed deadline (a timerfd for the real clock; for a manual clock, when the test
// advances past it). Re-arming replaces the previous deadline.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual int fd() const = 0;
  // `deadline` is absolute, on Env::Now(); one already past makes fd() readable at once.
  virtual void ArmAt(TimeNs deadline) = 0;
  // Consumes fd()'s readiness after it fired.
  virtual void Clear() = 0;
};

class Env {
 public:
  virtual ~Env() = default;
  // The real OS, shared by the whole process, never destroyed.
  static Env* Default();

  // --- Time ---
  // Nanoseconds on a clock that never goes backwards (CLOCK_MONOTONIC for the real Env); the
  // clock of every timer and timeout.
  virtual TimeNs Now() const = 0;
  // Nanoseconds since the Unix epoch (CLOCK_REALTIME): for stamps that cross processes.
  virtual TimeNs NowWall() const = 0;
  // False when the clock moves only when someone moves it (ManualEnv): a caller must then never
  // busy-wait for it to pass a deadline.
  virtual bool ClockMovesByItself() const { return true; }
  // Blocks the calling thread for `d` (a manual clock is advanced by `d` instead).
  virtual void SleepFor(TimeNs d) = 0;
  virtual Result<std::unique_ptr<Timer>> NewTimer() = 0;

  // --- Files ---
  // The whole file; NotFound when it does not exist.
  virtual Result<std::string> ReadFile(const std::string& path) = 0;
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) = 0;
  // Atomic replacement of `to` (rename(2)).
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  // NotFound when it does not exist.
  virtual Status RemoveFile(const std::string& path) = 0;
  // A file or a whole tree; absent already is fine.
  virtual Status RemoveAll(const std::string& path) = 0;
  // One directory, whose parent must exist (mkdir); existing already is fine.
  virtual Status CreateDir(const std::string& path) = 0;
  // The directory and its missing parents (mkdir -p); existing already is fine.
  virtual Status CreateDirs(const std::string& path) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  // A fresh, empty directory <temporary directory>/<prefix>XXXXXX; returns its path.
  virtual Result<std::string> CreateTempDir(const std::string& prefix) = 0;

  // Writes `data` as the whole file (created or truncated).
  Status WriteFile(const std::string& path, std::string_view data);
  // Writes `data` to a temporary file beside `path`, then renames it over `path`: a reader sees
  // the old file or the new one, never half of one. The temporary file is removed on failure.
  Status WriteFileAtomically(const std::string& path, std::string_view data);

  // --- Processes ---
  // Children of this process and the stop signals sent to it (process.h). One group at a time
  // per process: the real one takes over SIGCHLD, SIGINT and SIGTERM while it lives.
  virtual Result<std::unique_ptr<ProcessGroup>> NewProcessGroup() = 0;
  // This process's id (the real Env's getpid()).
  virtual int ProcessId() const = 0;

  // --- Environment variables ---
  // nullopt when unset.
  virtual std::optional<std::string> GetEnv(const std::string& name) const = 0;
  virtual void SetEnv(const std::string& name, const std::string& value) = 0;
};

}  // namespace genie::env
