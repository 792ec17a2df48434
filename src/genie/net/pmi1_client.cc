#include "genie/net/pmi1_client.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "genie/loop/precise_sleep.h"
#include "genie/net/socket_util.h"

namespace genie::net {

namespace {

// Replies are short; a longer "line" means the descriptor is not a PMI server.
constexpr size_t kMaxLine = 64 * 1024;

bool Digits(const char* v) {
  if (v == nullptr || *v == '\0') return false;
  for (const char* p = v; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
  }
  return std::strlen(v) <= 9;
}

int IntOr(const std::map<std::string, std::string>& m, const std::string& key, int fallback) {
  auto it = m.find(key);
  if (it == m.end() || !Digits(it->second.c_str())) return fallback;
  return std::atoi(it->second.c_str());
}

// "cmd=put_result rc=0 msg=success" -> {cmd: put_result, rc: 0, msg: success}. A word without
// '=' belongs to the value before it (some servers' messages hold spaces).
std::map<std::string, std::string> ParseLine(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string word, last;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) {
      if (!last.empty()) out[last] += " " + word;
      continue;
    }
    last = word.substr(0, eq);
    out[last] = word.substr(eq + 1);
  }
  return out;
}

Status CheckWord(const char* what, const std::string& s, int max) {
  if (s.empty() || s.find_first_of(" =\n\t") != std::string::npos) {
    return Status::InvalidArgument(
        fmt::format("PMI {} '{}' is empty or holds a space, '=' or newline", what, s));
  }
  if (max > 0 && static_cast<int>(s.size()) > max) {
    return Status::InvalidArgument(
        fmt::format("PMI {} '{}' is {} bytes; the launcher's limit is {}", what, s, s.size(), max));
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Pmi1Client>> Pmi1Client::Connect(TimeNs deadline, const EnvLookup& lookup) {
  EnvLookup env = lookup ? lookup : EnvLookup([](const char* n) { return std::getenv(n); });
  if (const char* v = env("PMI_FD")) {
    if (!Digits(v)) {
      return Status::InvalidArgument(fmt::format(
          "PMI_FD='{}' is not a descriptor number; fix what sets it (the launcher)", v));
    }
    const int fd = std::atoi(v);
    if (fcntl(fd, F_GETFD) < 0) {
      return Status::InvalidArgument(fmt::format(
          "PMI_FD={} is not an open descriptor of this process: was genie started by the "
          "launcher itself (not through a shell or wrapper that closed it)?",
          fd));
    }
    // Not inherited by anything this process starts.
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return Open(fd, deadline);
  }
  const char* port = env("PMI_PORT");
  if (port == nullptr) {
    return Status::InvalidArgument(
        "neither PMI_FD nor PMI_PORT is set: this process was not started by a PMI launcher "
        "(mpiexec.mpich, srun --mpi=pmi2)");
  }
  auto hp = SplitHostPort(port);
  if (!hp.ok()) {
    return Status::InvalidArgument(fmt::format("PMI_PORT='{}': {}", port, hp.status().message()));
  }
  GENIE_ASSIGN_OR_RETURN(SocketAddress at, ResolveAddress(hp->first, hp->second));
  const int fd = socket(at.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, at.get(), at.length) != 0) {
    const std::string why = strerror(errno);
    if (fd >= 0) close(fd);
    return Status::Unavailable(
        fmt::format("cannot connect to the PMI server at PMI_PORT={}: {}", port, why));
  }
  std::unique_ptr<Pmi1Client> c(new Pmi1Client(fd));
  const char* id = env("PMI_ID");
  GENIE_RETURN_IF_ERROR(c->Send(fmt::format("cmd=initack pmiid={}\n", id ? id : "0")));
  GENIE_RETURN_IF_ERROR(c->Expect("initack", deadline).status());
  for (int i = 0; i < 3; ++i) {
    GENIE_ASSIGN_OR_RETURN(auto set, c->Expect("set", deadline));
    c->rank_ = IntOr(set, "rank", c->rank_);
    c->size_ = IntOr(set, "size", c->size_);
  }
  GENIE_RETURN_IF_ERROR(c->Handshake(deadline));
  return c;
}

Result<std::unique_ptr<Pmi1Client>> Pmi1Client::Open(int fd, TimeNs deadline) {
  std::unique_ptr<Pmi1Client> c(new Pmi1Client(fd));
  GENIE_RETURN_IF_ERROR(c->Handshake(deadline));
  return c;
}

Pmi1Client::~Pmi1Client() {
  if (fd_ >= 0) close(fd_);
}

Status Pmi1Client::Handshake(TimeNs deadline) {
  GENIE_RETURN_IF_ERROR(Send("cmd=init pmi_version=1 pmi_subversion=1\n"));
  GENIE_ASSIGN_OR_RETURN(auto init, Expect("response_to_init", deadline));
  if (init["pmi_version"] != "1") {
    return Status::Unsupported(
        fmt::format("the PMI server speaks PMI version {}, not 1", init["pmi_version"]));
  }
  GENIE_RETURN_IF_ERROR(Send("cmd=get_maxes\n"));
  GENIE_ASSIGN_OR_RETURN(auto maxes, Expect("maxes", deadline));
  keylen_max_ = IntOr(maxes, "keylen_max", keylen_max_);
  vallen_max_ = IntOr(maxes, "vallen_max", vallen_max_);
  GENIE_RETURN_IF_ERROR(Send("cmd=get_my_kvsname\n"));
  GENIE_ASSIGN_OR_RETURN(auto name, Expect("my_kvsname", deadline));
  kvsname_ = name["kvsname"];
  if (kvsname_.empty()) return Status::Corruption("the PMI server named no kvsname");
  return Status::Ok();
}

Status Pmi1Client::Put(const std::string& key, const std::string& value, TimeNs deadline) {
  GENIE_RETURN_IF_ERROR(CheckWord("key", key, keylen_max_));
  GENIE_RETURN_IF_ERROR(CheckWord("value", value, vallen_max_));
  GENIE_RETURN_IF_ERROR(
      Send(fmt::format("cmd=put kvsname={} key={} value={}\n", kvsname_, key, value)));
  return Expect("put_result", deadline).status();
}

Status Pmi1Client::Barrier(TimeNs deadline) {
  GENIE_RETURN_IF_ERROR(Send("cmd=barrier_in\n"));
  return Expect("barrier_out", deadline).status();
}

Result<std::string> Pmi1Client::Get(const std::string& key, TimeNs deadline) {
  GENIE_RETURN_IF_ERROR(CheckWord("key", key, keylen_max_));
  GENIE_RETURN_IF_ERROR(Send(fmt::format("cmd=get kvsname={} key={}\n", kvsname_, key)));
  GENIE_ASSIGN_OR_RETURN(auto got, Expect("get_result", deadline));
  return got["value"];
}

Status Pmi1Client::Finalize(TimeNs deadline) {
  GENIE_RETURN_IF_ERROR(Send("cmd=finalize\n"));
  Status st = Expect("finalize_ack", deadline).status();
  close(fd_);
  fd_ = -1;
  return st;
}

Status Pmi1Client::Send(const std::string& line) {
  if (fd_ < 0) return Status::Internal("PMI connection already finalized");
  size_t off = 0;
  while (off < line.size()) {
    const ssize_t n = write(fd_, line.data() + off, line.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status::Unavailable(
          fmt::format("writing to the PMI server failed ({}): did the "
                      "launcher exit?",
                      strerror(errno)));
    }
    off += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<std::string> Pmi1Client::ReadLine(TimeNs deadline) {
  while (true) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (buffer_.size() > kMaxLine) {
      return Status::Corruption(
          "the PMI server sent a line longer than 64 KiB: is PMI_FD really "
          "the launcher's PMI connection?");
    }
    const TimeNs left = deadline - loop::MonotonicNow();
    if (left <= 0) return Status::Timeout("no answer from the PMI server in time");
    pollfd p{fd_, POLLIN, 0};
    const int ms = static_cast<int>(std::min<TimeNs>(left / kNsPerMs + 1, 1000));
    const int r = poll(&p, 1, ms);
    if (r < 0 && errno != EINTR) return Status::IoError(std::string("poll: ") + strerror(errno));
    if (r <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fd_, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      return Status::Unavailable(
          "the PMI server closed the connection (did the launcher "
          "stop the job, or another rank fail?)");
    }
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

Result<std::map<std::string, std::string>> Pmi1Client::Expect(const std::string& cmd,
                                                              TimeNs deadline) {
  auto line = ReadLine(deadline);
  if (!line.ok()) return line.status().WithContext("waiting for PMI " + cmd);
  auto m = ParseLine(*line);
  if (m["cmd"] != cmd) {
    return Status::Corruption(
        fmt::format("the PMI server answered '{}' where 'cmd={}' was expected", *line, cmd));
  }
  auto rc = m.find("rc");
  if (rc != m.end() && rc->second != "0") {
    auto msg = m.find("msg");
    return Status::Unavailable(fmt::format("PMI {} failed: rc={}{}", cmd, rc->second,
                                           msg == m.end() ? "" : " (" + msg->second + ")"));
  }
  return m;
}

}  // namespace genie::net
