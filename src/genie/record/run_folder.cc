#include "genie/record/run_folder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "genie/record/json_check.h"

namespace genie::record {

std::string StreamPath(const std::string& dir, int rank) {
  return (std::filesystem::path(dir) / ("rank-" + std::to_string(rank) + ".jsonl")).string();
}

bool IsStreamOfRun(const std::string& path, const std::string& run_id) {
  std::ifstream in(path, std::ios::binary);
  std::string header, clock;
  if (!std::getline(in, header) || !std::getline(in, clock)) return false;
  if (JsonNestingDepth(clock) > kMaxJsonDepth) return false;
  auto j = nlohmann::json::parse(clock, nullptr, /*allow_exceptions=*/false);
  return StringField(j, "record") == "clock" && !run_id.empty() &&
         StringField(j, "run_id") == run_id;
}

namespace {

constexpr const char* kLockName = ".genie-run.lock";
// Byte 0 of the lock file guards the check-and-claim; byte 1 is the claim itself.
constexpr off_t kMutexByte = 0;
constexpr off_t kClaimByte = 1;

// One byte of `fd` locked (F_RDLCK / F_WRLCK) or unlocked (F_UNLCK) without waiting; false
// with errno set when another open file description holds a conflicting lock.
bool LockByte(int fd, short type, off_t byte) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = byte;
  l.l_len = 1;
  while (true) {
    if (::fcntl(fd, F_OFD_SETLK, &l) == 0) return true;
    if (errno != EINTR) return false;
  }
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[512];
  off_t at = 0;
  while (out.size() < 4096) {
    ssize_t n = ::pread(fd, buf, sizeof(buf), at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    at += n;
  }
  return out;
}

std::string Hostname() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "?";
  return host;
}

std::string UtcNow() {
  time_t now = time(nullptr);
  struct tm tm {};
  gmtime_r(&now, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string DescribeOwner(const std::string& text) {
  nlohmann::json owner = JsonNestingDepth(text) <= kMaxJsonDepth
                             ? nlohmann::json::parse(text, nullptr, false)
                             : nlohmann::json();
  return fmt::format("job {}, process {} on {}, since {}", StringField(owner, "job_id", "?"),
                     IntField(owner, "pid", 0), StringField(owner, "host", "?"),
                     StringField(owner, "since", "?"));
}

}  // namespace

std::vector<std::string> FirstRecordLines(const std::string& dir, const std::string& kind) {
  std::vector<std::string> lines;
  const std::string tag = "\"record\":\"" + kind + "\"";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (!file.starts_with("rank-") || !file.ends_with(".jsonl")) continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.find(tag) == std::string::npos) continue;
      lines.push_back(std::move(line));
      break;
    }
  }
  return lines;
}

std::string FolderHolder(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kLockName).string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  struct flock l {};
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  l.l_start = kClaimByte;
  l.l_len = 1;
  std::string holder;
  if (::fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK) holder = DescribeOwner(ReadAll(fd));
  ::close(fd);
  return holder;
}

OutputFolderClaim::~OutputFolderClaim() {
  if (fd_ >= 0) ::close(fd_);  // drops the lock
}

Result<std::unique_ptr<OutputFolderClaim>> ClaimOutputFolder(const std::string& dir,
                                                             const std::string& job_id,
                                                             int world_size, env::Env* env) {
  if (env == nullptr) env = env::Env::Default();
  const std::string path = (std::filesystem::path(dir) / kLockName).string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IoError(
        fmt::format("cannot create {}: {} (check that the output folder "
                    "exists and is writable)",
                    path, std::strerror(errno)));
  }
  std::unique_ptr<OutputFolderClaim> claim(new OutputFolderClaim(fd));
  const std::string token =
      world_size > 1 ? job_id : fmt::format("{}/pid-{}", job_id, static_cast<long>(getpid()));

  // The check-and-claim runs under the mutex byte, held for microseconds by whoever has it; a
  // holder that stopped (SIGSTOP) would keep it, so give up after a while instead of hanging.
  const TimeNs give_up = env->Now() + 10 * kNsPerSec;
  while (!LockByte(fd, F_WRLCK, kMutexByte)) {
    if (errno != EAGAIN && errno != EACCES) {
      return Status::IoError(
          fmt::format("cannot lock {}: {} (genie needs fcntl locks in the "
                      "output folder)",
                      path, std::strerror(errno)));
    }
    if (env->Now() > give_up) {
      return Status::InvalidArgument(fmt::format(
          "output folder {} is locked by a genie process that does not go on (stopped?); "
          "end it, or give this job its own --output folder",
          dir));
    }
    env->SleepFor(5 * kNsPerMs);
  }

  Status result;
  if (LockByte(fd, F_WRLCK, kClaimByte)) {
    // Nobody alive holds the folder: it is this job's now.
    const std::string owner = nlohmann::json({{"job_id", token},
                                              {"host", Hostname()},
                                              {"pid", static_cast<long>(getpid())},
                                              {"since", UtcNow()}})
                                  .dump() +
                              "\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, owner.data(), owner.size(), 0) != static_cast<ssize_t>(owner.size())) {
      result = Status::IoError(
          fmt::format("cannot write {}: {} (disk full?)", path, std::strerror(errno)));
    } else if (!LockByte(fd, F_RDLCK, kClaimByte)) {  // an atomic downgrade: others may join
      result = Status::IoError(fmt::format("cannot lock {}: {}", path, std::strerror(errno)));
    }
  } else if (errno == EAGAIN || errno == EACCES) {
    // Held by the live processes of some job: join it if it is ours.
    const std::string text = ReadAll(fd);
    nlohmann::json owner = JsonNestingDepth(text) <= kMaxJsonDepth
                               ? nlohmann::json::parse(text, nullptr, false)
                               : nlohmann::json();
    if (StringField(owner, "job_id") == token) {
      if (!LockByte(fd, F_RDLCK, kClaimByte)) {
        result = Status::IoError(fmt::format("cannot lock {}: {}", path, std::strerror(errno)));
      }
    } else {
      result = Status::InvalidArgument(fmt::format(
          "output folder {} is in use by another genie job or simulation that is still running "
          "({}); its results would be overwritten. Wait for it to finish, or give this one its "
          "own --output folder",
          dir, DescribeOwner(text)));
    }
  } else {
    result = Status::IoError(fmt::format("cannot lock {}: {}", path, std::strerror(errno)));
  }
  LockByte(fd, F_UNLCK, kMutexByte);
  if (!result.ok()) return result;
  return claim;
}

}  // namespace genie::record
