#include "genie/env/manual_env.h"

#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "genie/common/check.h"

namespace genie::env {

namespace {

std::string Norm(const std::string& path) {
  std::string p = std::filesystem::path(path).lexically_normal().string();
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string Parent(const std::string& normalised) {
  return std::filesystem::path(normalised).parent_path().string();
}

Status Err(int err) {
  return err == ENOENT ? Status::NotFound(strerror(err)) : Status::IoError(strerror(err));
}

}  // namespace

// An eventfd made readable by ManualEnv::Advance when the clock passes the armed deadline.
class ManualEnv::ManualTimer final : public Timer {
 public:
  ManualTimer(ManualEnv* env, int fd) : env_(env), fd_(fd) {}
  ~ManualTimer() override {
    {
      std::lock_guard<std::mutex> lock(env_->mu_);
      env_->armed_.erase(this);
    }
    close(fd_);
  }
  int fd() const override { return fd_; }
  void ArmAt(TimeNs deadline) override {
    std::lock_guard<std::mutex> lock(env_->mu_);
    if (deadline <= env_->Now()) {
      env_->armed_.erase(this);
      Ring();
    } else {
      env_->armed_[this] = deadline;
    }
  }
  void Clear() override {
    uint64_t v;
    [[maybe_unused]] ssize_t r = read(fd_, &v, sizeof(v));
  }
  void Ring() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t r = write(fd_, &one, sizeof(one));
  }

 private:
  ManualEnv* env_;
  int fd_;
};

class ManualEnv::ManualFile final : public WritableFile {
 public:
  ManualFile(ManualEnv* env, std::string path) : env_(env), path_(std::move(path)) {}
  Status Append(std::string_view data) override {
    if (closed_) return Status::IoError(strerror(EBADF));
    std::lock_guard<std::mutex> lock(env_->mu_);
    return env_->AppendLocked(path_, data);
  }
  Status Close() override {
    closed_ = true;
    return Status::Ok();
  }

 private:
  ManualEnv* env_;
  std::string path_;
  bool closed_ = false;
};

class ManualEnv::ManualProcessGroup final : public ProcessGroup {
 public:
  explicit ManualProcessGroup(ManualEnv* env) : env_(env) {}

  Result<int> Spawn(const ProcessSpec& spec) override {
    Scripter scripter;
    {
      std::lock_guard<std::mutex> lock(env_->mu_);
      scripter = env_->scripter_;
    }
    const ProcessScript script = scripter ? scripter(spec) : ProcessScript{};
    std::lock_guard<std::mutex> lock(env_->mu_);
    const int pid = env_->next_pid_++;
    env_->children_[pid] = {script, script.runs_for >= 0 ? env_->Now() + script.runs_for : -1,
                            script.wait_status};
    env_->spawned_.push_back(spec);
    return pid;
  }

  void Signal(int pid, int sig) override {
    std::lock_guard<std::mutex> lock(env_->mu_);
    env_->sent_.push_back({pid, sig, env_->Now()});
    auto it = env_->children_.find(pid);
    if (it == env_->children_.end() || it->second.reaped) return;
    Child& c = it->second;
    if (sig != SIGINT && sig != SIGTERM && sig != SIGKILL) return;
    if (sig == SIGTERM && c.script.ignores_sigterm) return;
    if (c.ends_at >= 0 && c.ends_at <= env_->Now()) return;  // already ending by itself
    c.ends_at = env_->Now();
    c.wait_status = KilledBy(sig);
  }

  ProcessEvent Wait(TimeNs deadline) override {
    TimeNs next = -1;
    bool signal_first = false;
    {
      std::lock_guard<std::mutex> lock(env_->mu_);
      for (const auto& [pid, c] : env_->children_) {
        if (!c.reaped && c.ends_at >= 0 && (next < 0 || c.ends_at < next)) next = c.ends_at;
      }
      if (!env_->signals_to_us_.empty()) {
        const TimeNs s = env_->signals_to_us_.begin()->first;
        if (next < 0 || s <= next) {
          next = s;
          signal_first = true;
        }
      }
    }
    GENIE_CHECK(next >= 0 || deadline >= 0)
        << "ManualEnv: ProcessGroup::Wait without a deadline while nothing is scripted to happen "
           "(the real one would block forever)";
    if (next < 0 || (deadline >= 0 && next > deadline)) {
      env_->Advance(deadline - env_->Now());
      return {};
    }
    env_->Advance(next - env_->Now());
    std::lock_guard<std::mutex> lock(env_->mu_);
    ProcessEvent e;
    if (signal_first) {
      e.kind = ProcessEvent::Kind::kSignal;
      e.signal = env_->signals_to_us_.begin()->second;
      env_->signals_to_us_.erase(env_->signals_to_us_.begin());
      return e;
    }
    e.kind = ProcessEvent::Kind::kExited;
    for (auto& [pid, c] : env_->children_) {
      if (!c.reaped && c.ends_at >= 0 && c.ends_at <= env_->Now()) {
        c.reaped = true;
        e.exited.emplace_back(pid, c.wait_status);
      }
    }
    return e;
  }

 private:
  ManualEnv* env_;
};

ManualEnv::ManualEnv(TimeNs start) : now_(start) {
  dirs_ = {"/", "/tmp", ".", ""};
}

ManualEnv::~ManualEnv() = default;

void ManualEnv::Advance(TimeNs d) {
  std::lock_guard<std::mutex> lock(mu_);
  const TimeNs now = now_.fetch_add(d < 0 ? 0 : d, std::memory_order_acq_rel) + (d < 0 ? 0 : d);
  FireTimersLocked(now);
}

void ManualEnv::FireTimersLocked(TimeNs now) {
  for (auto it = armed_.begin(); it != armed_.end();) {
    if (it->second <= now) {
      it->first->Ring();
      it = armed_.erase(it);
    } else {
      ++it;
    }
  }
}

void ManualEnv::SetScripter(Scripter scripter) {
  std::lock_guard<std::mutex> lock(mu_);
  scripter_ = std::move(scripter);
}

void ManualEnv::SignalAt(TimeNs at, int sig) {
  std::lock_guard<std::mutex> lock(mu_);
  signals_to_us_.emplace(at, sig);
}

std::vector<ProcessSpec> ManualEnv::spawned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spawned_;
}

std::vector<ManualEnv::SentSignal> ManualEnv::signals_sent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sent_;
}

Result<std::unique_ptr<Timer>> ManualEnv::NewTimer() {
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) return Status::IoError(strerror(errno));
  return std::unique_ptr<Timer>(new ManualTimer(this, fd));
}

bool ManualEnv::IsDirLocked(const std::string& path) const { return dirs_.count(path) > 0; }

Status ManualEnv::AppendLocked(const std::string& path, std::string_view data) {
  auto it = files_.find(path);
  if (it != files_.end()) it->second.append(data);  // else: removed while open, like unlink
  return Status::Ok();
}

Result<std::string> ManualEnv::ReadFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string p = Norm(path);
  if (IsDirLocked(p)) return Err(EISDIR);
  auto it = files_.find(p);
  if (it == files_.end()) return Err(ENOENT);
  return it->second;
}

Result<std::unique_ptr<WritableFile>> ManualEnv::NewWritableFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string p = Norm(path);
  if (IsDirLocked(p)) return Err(EISDIR);
  if (!IsDirLocked(Parent(p))) return Err(ENOENT);
  files_[p].clear();
  return std::unique_ptr<WritableFile>(new ManualFile(this, p));
}

Status ManualEnv::RenameFile(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string f = Norm(from), t = Norm(to);
  auto it = files_.find(f);
  if (it == files_.end() || !IsDirLocked(Parent(t))) return Err(ENOENT);
  if (IsDirLocked(t)) return Err(EISDIR);
  std::string data = std::move(it->second);
  files_.erase(it);
  files_[t] = std::move(data);
  return Status::Ok();
}

Status ManualEnv::RemoveFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  return files_.erase(Norm(path)) > 0 ? Status::Ok() : Err(ENOENT);
}

Status ManualEnv::RemoveAll(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string p = Norm(path);
  const std::string under = p == "/" ? "/" : p + "/";
  auto inside = [&](const std::string& name) { return name == p || name.rfind(under, 0) == 0; };
  for (auto it = files_.begin(); it != files_.end();) {
    it = inside(it->first) ? files_.erase(it) : std::next(it);
  }
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    it = inside(*it) ? dirs_.erase(it) : std::next(it);
  }
  dirs_.insert({"/", ".", ""});
  return Status::Ok();
}

Status ManualEnv::CreateDir(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string p = Norm(path);
  if (IsDirLocked(p)) return Status::Ok();
  if (files_.count(p)) return Err(EEXIST);
  if (!IsDirLocked(Parent(p))) return Err(ENOENT);
  dirs_.insert(p);
  return Status::Ok();
}

Status ManualEnv::CreateDirs(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> chain;
  for (std::string p = Norm(path); !IsDirLocked(p); p = Parent(p)) {
    if (files_.count(p)) return Err(ENOTDIR);
    chain.push_back(p);
  }
  dirs_.insert(chain.begin(), chain.end());
  return Status::Ok();
}

bool ManualEnv::FileExists(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string p = Norm(path);
  return files_.count(p) > 0 || IsDirLocked(p);
}

Result<std::string> ManualEnv::CreateTempDir(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  dirs_.insert("/tmp");
  std::string p;
  do {
    p = fmt::format("/tmp/{}{:06d}", prefix, next_temp_++);
  } while (dirs_.count(p) || files_.count(p));
  dirs_.insert(p);
  return p;
}

Result<std::unique_ptr<ProcessGroup>> ManualEnv::NewProcessGroup() {
  return std::unique_ptr<ProcessGroup>(new ManualProcessGroup(this));
}

std::optional<std::string> ManualEnv::GetEnv(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

void ManualEnv::SetEnv(const std::string& name, const std::string& value) {
  std::lock_guard<std::mutex> lock(mu_);
  vars_[name] = value;
}

}  // namespace genie::env
