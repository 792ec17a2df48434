#include "genie/net/rendezvous.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "genie/net/socket_util.h"
#include "genie/loop/precise_sleep.h"

namespace genie::net {

namespace {

constexpr const char* kStoreHello = "GENIE-RDZV1";

std::string SafeName(const std::string& job) {
  std::string out = job.empty() ? "job" : job;
  for (char& c : out) {
    if (c == '/' || c == '\0' || c == '\n') c = '_';
  }
  return out;
}

std::string MissingRanks(const std::vector<std::string>& have) {
  std::string s;
  int shown = 0;
  for (size_t r = 0; r < have.size(); ++r) {
    if (!have[r].empty()) continue;
    if (shown++ == 16) {
      s += ", ...";
      break;
    }
    s += fmt::format("{}{}", s.empty() ? "" : ", ", r);
  }
  return s;
}

Result<std::vector<std::string>> DirExchange(const RendezvousRequest& q, const std::string& dir) {
  mkdir(dir.c_str(), 0755);  // may exist; a real problem shows up when writing
  std::string base = dir + "/" + SafeName(q.job_id);
  std::string final_path = fmt::format("{}.{}.addr", base, q.rank);
  std::string tmp = fmt::format("{}/.{}.{}.{}.tmp", dir, SafeName(q.job_id), q.rank, getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << q.my_address << "\n";
    if (!out.good()) {
      return Status::IoError(fmt::format("rank {}: cannot write rendezvous file {}: {}", q.rank,
                                         tmp, strerror(errno)));
    }
  }
  if (rename(tmp.c_str(), final_path.c_str()) != 0) {
    return Status::IoError(fmt::format("rank {}: cannot publish {}: {}", q.rank, final_path,
                                       strerror(errno)));
  }
  std::vector<std::string> addrs(static_cast<size_t>(q.world_size));
  TimeNs deadline = loop::MonotonicNow() + q.timeout;
  while (true) {
    bool all = true;
    for (int r = 0; r < q.world_size; ++r) {
      auto& a = addrs[static_cast<size_t>(r)];
      if (!a.empty()) continue;
      std::ifstream in(fmt::format("{}.{}.addr", base, r));
      std::string line;
      if (in && std::getline(in, line) && !line.empty()) {
        a = line;
      } else {
        all = false;
      }
    }
    if (all) return addrs;
    if (loop::MonotonicNow() > deadline) {
      return Status::Timeout(fmt::format(
          "rank {}: rendezvous in {} timed out after {}: no address from rank(s) {}; did they "
          "start, with the same --rendezvous and job id '{}'?",
          q.rank, dir, FormatDuration(q.timeout), MissingRanks(addrs), q.job_id));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int PollMs(TimeNs deadline) {
  TimeNs left = deadline - loop::MonotonicNow();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<TimeNs>(left / kNsPerMs + 1, 100));
}

bool SendAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

Result<std::vector<std::string>> StoreServer(const RendezvousRequest& q, const SocketAddress& at,
                                             const std::string& where) {
  int lfd = socket(at.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(lfd, at.get(), at.length) != 0 || listen(lfd, 1024) != 0) {
    std::string err = strerror(errno);
    close(lfd);
    return Status::IoError(fmt::format("rank 0: cannot serve the rendezvous store on {}: {} "
                                       "(another job on that port? set MASTER_PORT)", where, err));
  }
  std::vector<std::string> addrs(static_cast<size_t>(q.world_size));
  addrs[0] = q.my_address;
  std::map<int, std::string> pending;  // fd -> partial line
  std::map<int, int> clients;          // rank -> fd
  TimeNs deadline = loop::MonotonicNow() + q.timeout;
  Status result;
  while (static_cast<int>(clients.size()) < q.world_size - 1) {
    if (loop::MonotonicNow() > deadline) {
      result = Status::Timeout(fmt::format(
          "rank 0: rendezvous store on {} timed out after {}: rank(s) {} never registered",
          where, FormatDuration(q.timeout), MissingRanks(addrs)));
      break;
    }
    std::vector<pollfd> fds{{lfd, POLLIN, 0}};
    for (auto& [fd, buf] : pending) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), PollMs(deadline)) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      int cfd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (cfd >= 0) pending[cfd] = "";
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int fd = fds[i].fd;
      char buf[512];
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      std::string& line = pending[fd];
      if (n > 0) line.append(buf, static_cast<size_t>(n));
      auto nl = line.find('\n');
      if (nl == std::string::npos && n > 0 && line.size() < 4096) continue;
      std::istringstream in(line.substr(0, nl));
      std::string magic, job, addr;
      int rank = -1;
      in >> magic >> job >> rank >> addr;
      std::string error;
      if (magic != kStoreHello) {
        error = "not a genie rendezvous client";
      } else if (job != q.job_id) {
        error = fmt::format("job id '{}' but this store serves '{}'", job, q.job_id);
      } else if (rank < 1 || rank >= q.world_size) {
        error = fmt::format("rank {} outside 1..{}", rank, q.world_size - 1);
      } else if (clients.count(rank)) {
        error = fmt::format("rank {} registered twice", rank);
      }
      if (!error.empty()) {
        spdlog::warn("rank 0: rendezvous store refused {}: {}", SocketName(fd, true), error);
        SendAll(fd, "ERR " + error + "\n");
        close(fd);
        pending.erase(fd);
        continue;
      }
      addrs[static_cast<size_t>(rank)] = addr;
      clients[rank] = fd;
      pending.erase(fd);
    }
  }
  std::string table = "OK\n";
  for (const auto& a : addrs) table += a + "\n";
  for (auto& [rank, fd] : clients) {
    if (result.ok()) SendAll(fd, table);
    close(fd);
  }
  for (auto& [fd, buf] : pending) close(fd);
  close(lfd);
  if (!result.ok()) return result;
  return addrs;
}

Result<std::vector<std::string>> StoreClient(const RendezvousRequest& q, const SocketAddress& at,
                                             const std::string& where) {
  TimeNs deadline = loop::MonotonicNow() + q.timeout;
  int fd = -1;
  std::string last_error;
  while (true) {
    fd = socket(at.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connect(fd, at.get(), at.length) == 0) break;
    last_error = strerror(errno);
    close(fd);
    fd = -1;
    if (loop::MonotonicNow() > deadline) {
      return Status::Timeout(fmt::format(
          "rank {}: cannot reach the rendezvous store of rank 0 at {} within {} ({}); is rank 0 "
          "running?", q.rank, where, FormatDuration(q.timeout), last_error));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  SendAll(fd, fmt::format("{} {} {} {}\n", kStoreHello, q.job_id, q.rank, q.my_address));
  std::string reply;
  while (true) {
    pollfd p{fd, POLLIN, 0};
    if (loop::MonotonicNow() > deadline) {
      close(fd);
      return Status::Timeout(fmt::format(
          "rank {}: the rendezvous store at {} did not answer within {}; some ranks never "
          "registered (see rank 0's log)", q.rank, where, FormatDuration(q.timeout)));
    }
    if (poll(&p, 1, PollMs(deadline)) <= 0) continue;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  std::istringstream in(reply);
  std::string line;
  std::getline(in, line);
  if (line != "OK") {
    return Status::Unavailable(fmt::format("rank {}: rendezvous store at {} refused: {}", q.rank,
                                           where, line.empty() ? "connection closed" : line));
  }
  std::vector<std::string> addrs;
  while (std::getline(in, line)) addrs.push_back(line);
  if (static_cast<int>(addrs.size()) != q.world_size) {
    return Status::Corruption(fmt::format("rank {}: rendezvous store sent {} addresses for {} ranks",
                                          q.rank, addrs.size(), q.world_size));
  }
  return addrs;
}

}  // namespace

void WithdrawAddress(const RendezvousRequest& q) {
  if (q.world_size == 1 || q.spec.rfind("dir:", 0) != 0) return;
  const std::string dir = q.spec.substr(4);
  unlink(fmt::format("{}/{}.{}.addr", dir, SafeName(q.job_id), q.rank).c_str());
}

Result<std::vector<std::string>> ExchangeAddresses(const RendezvousRequest& q) {
  if (q.world_size < 1 || q.rank < 0 || q.rank >= q.world_size) {
    return Status::InvalidArgument(
        fmt::format("rank {} outside a world of {} ranks", q.rank, q.world_size));
  }
  if (q.job_id.empty() || q.job_id.find_first_of(" \t\n") != std::string::npos) {
    return Status::InvalidArgument("job id '" + q.job_id + "' must be non-empty without spaces");
  }
  if (q.world_size == 1) return std::vector<std::string>{q.my_address};
  if (q.spec.rfind("dir:", 0) == 0) return DirExchange(q, q.spec.substr(4));
  if (q.spec.rfind("tcp:", 0) == 0) {
    std::string where = q.spec.substr(4);
    GENIE_ASSIGN_OR_RETURN(auto hp, SplitHostPort(where));
    GENIE_ASSIGN_OR_RETURN(SocketAddress at, ResolveAddress(hp.first, hp.second));
    return q.rank == 0 ? StoreServer(q, at, where) : StoreClient(q, at, where);
  }
  return Status::InvalidArgument("rendezvous '" + q.spec +
                                 "': expected dir:/shared/path or tcp:host:port");
}

}  // namespace genie::net
