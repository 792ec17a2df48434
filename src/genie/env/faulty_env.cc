#include "genie/env/faulty_env.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

namespace genie::env {

namespace {

bool Under(const std::string& path, const std::string& prefix) {
  const std::string p = std::filesystem::path(path).lexically_normal().string();
  std::string pre = std::filesystem::path(prefix).lexically_normal().string();
  if (pre.size() > 1 && pre.back() == '/') pre.pop_back();
  return p == pre || p.rfind(pre == "/" ? pre : pre + "/", 0) == 0;
}

}  // namespace

class FaultyEnv::FaultyFile final : public WritableFile {
 public:
  FaultyFile(FaultyEnv* env, std::string path, std::unique_ptr<WritableFile> base)
      : env_(env), path_(std::move(path)), base_(std::move(base)) {}
  Status Append(std::string_view data) override {
    GENIE_RETURN_IF_ERROR(env_->CheckWrite(path_, static_cast<int64_t>(data.size())));
    return base_->Append(data);
  }
  Status Close() override { return base_->Close(); }

 private:
  FaultyEnv* env_;
  std::string path_;
  std::unique_ptr<WritableFile> base_;
};

// Deadlines on the jumped clock, armed on the wrapped one.
class FaultyEnv::FaultyTimer final : public Timer {
 public:
  FaultyTimer(FaultyEnv* env, std::unique_ptr<Timer> base) : env_(env), base_(std::move(base)) {}
  int fd() const override { return base_->fd(); }
  void ArmAt(TimeNs deadline) override { base_->ArmAt(deadline - env_->offset_.load()); }
  void Clear() override { base_->Clear(); }

 private:
  FaultyEnv* env_;
  std::unique_ptr<Timer> base_;
};

class FaultyEnv::FaultyProcessGroup final : public ProcessGroup {
 public:
  FaultyProcessGroup(FaultyEnv* env, std::unique_ptr<ProcessGroup> base)
      : env_(env), base_(std::move(base)) {}

  Result<int> Spawn(const ProcessSpec& spec) override {
    int nth;
    std::optional<Kill> kill;
    {
      std::lock_guard<std::mutex> lock(env_->mu_);
      if (env_->spawn_successes_left_ == 0) return Status::IoError(strerror(env_->spawn_errno_));
      if (env_->spawn_successes_left_ > 0) --env_->spawn_successes_left_;
      nth = env_->spawns_++;
      if (auto it = env_->kills_.find(nth); it != env_->kills_.end()) kill = it->second;
    }
    GENIE_ASSIGN_OR_RETURN(int pid, base_->Spawn(spec));
    if (kill) pending_.emplace(env_->Now() + kill->after, std::make_pair(pid, kill->sig));
    return pid;
  }

  void Signal(int pid, int sig) override { base_->Signal(pid, sig); }
  bool RealProcesses() const override { return base_->RealProcesses(); }

  ProcessEvent Wait(TimeNs deadline) override {
    while (!pending_.empty() && (deadline < 0 || pending_.begin()->first <= deadline)) {
      const auto [at, what] = *pending_.begin();
      ProcessEvent e = base_->Wait(at - env_->offset_.load());
      if (e.kind != ProcessEvent::Kind::kTimeout) return e;
      pending_.erase(pending_.begin());
      base_->Signal(what.first, what.second);
    }
    return base_->Wait(deadline < 0 ? -1 : deadline - env_->offset_.load());
  }

 private:
  FaultyEnv* env_;
  std::unique_ptr<ProcessGroup> base_;
  std::multimap<TimeNs, std::pair<int, int>> pending_;  // when -> (pid, signal)
};

void FaultyEnv::SetReadOnly(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  read_only_.push_back(prefix);
}

void FaultyEnv::SetDiskFull(const std::string& prefix, int64_t bytes_left) {
  std::lock_guard<std::mutex> lock(mu_);
  disk_left_[prefix] = bytes_left;
}

void FaultyEnv::FailSpawnsAfter(int successes, int err) {
  std::lock_guard<std::mutex> lock(mu_);
  spawn_successes_left_ = successes < 0 ? 0 : successes;
  spawn_errno_ = err;
}

void FaultyEnv::KillChild(int nth, TimeNs after, int sig) {
  std::lock_guard<std::mutex> lock(mu_);
  kills_[nth] = {after, sig};
}

void FaultyEnv::ClearFaults() {
  std::lock_guard<std::mutex> lock(mu_);
  read_only_.clear();
  disk_left_.clear();
  spawn_successes_left_ = -1;
  kills_.clear();
}

Status FaultyEnv::CheckWrite(const std::string& path, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& p : read_only_) {
    if (Under(path, p)) return Status::IoError(strerror(EROFS));
  }
  for (auto& [p, left] : disk_left_) {
    if (!Under(path, p)) continue;
    if (bytes > left) return Status::IoError(strerror(ENOSPC));
    left -= bytes;
  }
  return Status::Ok();
}

Result<std::unique_ptr<Timer>> FaultyEnv::NewTimer() {
  GENIE_ASSIGN_OR_RETURN(auto base, base_->NewTimer());
  return std::unique_ptr<Timer>(new FaultyTimer(this, std::move(base)));
}

Result<std::unique_ptr<WritableFile>> FaultyEnv::NewWritableFile(const std::string& path) {
  GENIE_RETURN_IF_ERROR(CheckWrite(path, 0));
  GENIE_ASSIGN_OR_RETURN(auto base, base_->NewWritableFile(path));
  return std::unique_ptr<WritableFile>(new FaultyFile(this, path, std::move(base)));
}

Status FaultyEnv::RenameFile(const std::string& from, const std::string& to) {
  GENIE_RETURN_IF_ERROR(CheckWrite(to, 0));
  GENIE_RETURN_IF_ERROR(CheckWrite(from, 0));
  return base_->RenameFile(from, to);
}

Status FaultyEnv::RemoveFile(const std::string& path) {
  GENIE_RETURN_IF_ERROR(CheckWrite(path, 0));
  return base_->RemoveFile(path);
}

Status FaultyEnv::RemoveAll(const std::string& path) {
  GENIE_RETURN_IF_ERROR(CheckWrite(path, 0));
  return base_->RemoveAll(path);
}

Status FaultyEnv::CreateDir(const std::string& path) {
  if (!base_->FileExists(path)) GENIE_RETURN_IF_ERROR(CheckWrite(path, 0));
  return base_->CreateDir(path);
}

Status FaultyEnv::CreateDirs(const std::string& path) {
  if (!base_->FileExists(path)) GENIE_RETURN_IF_ERROR(CheckWrite(path, 0));
  return base_->CreateDirs(path);
}

Result<std::string> FaultyEnv::CreateTempDir(const std::string& prefix) {
  GENIE_ASSIGN_OR_RETURN(std::string dir, base_->CreateTempDir(prefix));
  if (Status st = CheckWrite(dir, 0); !st.ok()) {
    (void)base_->RemoveAll(dir);
    return st;
  }
  return dir;
}

Result<std::unique_ptr<ProcessGroup>> FaultyEnv::NewProcessGroup() {
  GENIE_ASSIGN_OR_RETURN(auto base, base_->NewProcessGroup());
  return std::unique_ptr<ProcessGroup>(new FaultyProcessGroup(this, std::move(base)));
}

}  // namespace genie::env
