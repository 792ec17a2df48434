// RealEnv: the Env of real runs — CLOCK_MONOTONIC and CLOCK_REALTIME, timerfd timers, POSIX
// files, fork/exec children supervised through a signalfd, and the process environment.
// Env::Default() is the one instance real code uses; constructing another is harmless (it
// holds no state). Any thread, except that a ProcessGroup must be made and used on the main
// thread of a single-threaded process (it blocks SIGCHLD/SIGINT/SIGTERM in the calling thread
// and reads them from a signalfd; other threads would receive them instead).
#pragma once

#include "genie/env/env.h"

namespace genie::env {

class RealEnv final : public Env {
 public:
  TimeNs Now() const override;
  TimeNs NowWall() const override;
  void SleepFor(TimeNs d) override;
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
  int ProcessId() const override;

  std::optional<std::string> GetEnv(const std::string& name) const override;
  void SetEnv(const std::string& name, const std::string& value) override;
};

}  // namespace genie::env
