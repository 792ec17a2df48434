#include "genie/net/rendezvous.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "genie/net/interface_address.h"
#include "genie/net/launcher_kvs.h"
#include "genie/net/socket_util.h"

namespace genie::net {

namespace {

constexpr const char* kStoreHello = "GENIE-RDZV2";

// The block of ranks one launch started, and its nonce; an empty nonce claims nothing.
struct Launch {
  std::string nonce;
  int base = -1;
  int size = -1;
  bool Claims() const { return !nonce.empty() && base >= 0 && size > 0; }
  bool Has(int rank) const { return Claims() && rank >= base && rank < base + size; }
  bool Overlaps(const Launch& o) const {
    return Claims() && o.Claims() && base < o.base + o.size && o.base < base + size;
  }
  std::string Range() const { return fmt::format("{}..{}", base, base + size - 1); }
};

int EnvInt(const env::Env& env, const char* name) {
  const std::optional<std::string> value = env.GetEnv(name);
  if (!value || value->empty()) return -1;
  const char* v = value->c_str();
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  return *end == '\0' && x >= 0 && x < (1L << 30) ? static_cast<int>(x) : -1;
}

Launch LaunchOf(const RendezvousRequest& q, const RendezvousLaunch& given, const env::Env& env) {
  Launch l;
  l.nonce = given.nonce;
  if (l.nonce.empty()) l.nonce = env.GetEnv("GENIE_LAUNCH_NONCE").value_or("");
  if (l.nonce.find_first_of(" \t\n") != std::string::npos) l.nonce.clear();
  const int local = given.local_rank >= 0 ? given.local_rank : EnvInt(env, "GENIE_LOCAL_RANK");
  const int size = given.local_world_size > 0 ? given.local_world_size
                                              : EnvInt(env, "GENIE_LOCAL_WORLD_SIZE");
  if (local >= 0 && size > 0 && local < size && q.rank >= local) {
    l.base = q.rank - local;
    l.size = size;
  }
  return l;
}

// "nonce base size" as it travels in a hello or a rendezvous file ("-" for no nonce).
std::string FormatLaunch(const Launch& l) {
  return fmt::format("{} {} {}", l.nonce.empty() ? "-" : l.nonce, l.base, l.size);
}
Launch ParseLaunch(std::istream& in) {
  Launch l;
  in >> l.nonce >> l.base >> l.size;
  if (l.nonce == "-" || !in) l = Launch{};
  return l;
}

std::string TwoJobsAdvice() {
  return "give each job its own MASTER_PORT (or --rendezvous), or wait for the other to finish";
}

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

Result<std::vector<std::string>> DirExchange(const RendezvousRequest& q, const Launch& mine,
                                             const std::string& dir, env::Env& env) {
  (void)env.CreateDir(dir);  // may exist; a real problem shows up when writing
  std::string base = dir + "/" + SafeName(q.job_id);
  std::string final_path = fmt::format("{}.{}.addr", base, q.rank);
  std::string tmp =
      fmt::format("{}/.{}.{}.{}.tmp", dir, SafeName(q.job_id), q.rank, env.ProcessId());
  if (Status st = env.WriteFile(tmp, q.my_address + " " + FormatLaunch(mine) + "\n"); !st.ok()) {
    return Status::IoError(
        fmt::format("rank {}: cannot write rendezvous file {}: {}", q.rank, tmp, st.message()));
  }
  if (Status st = env.RenameFile(tmp, final_path); !st.ok()) {
    return Status::IoError(
        fmt::format("rank {}: cannot publish {}: {}", q.rank, final_path, st.message()));
  }
  std::vector<std::string> addrs(static_cast<size_t>(q.world_size));
  std::map<int, std::string> foreign;  // rank -> nonce of a file another launch wrote
  TimeNs deadline = env.Now() + q.timeout;
  // Polling cost matters at scale: N ranks each trying every missing file every few ms is
  // N² failed opens a round, enough to starve the ranks still starting on a busy machine. So
  // a round stops at the first file still missing (the rest are read once it is there), and
  // the pause grows from 2 ms to 50 ms while nothing new appears.
  int first_missing = 0;
  TimeNs pause = 2 * kNsPerMs;
  while (true) {
    bool all = true;
    const int was_missing = first_missing;
    // Past the deadline, one full pass, so that the error names exactly the missing ranks.
    const bool full = env.Now() > deadline;
    for (int r = first_missing; r < q.world_size; ++r) {
      auto& a = addrs[static_cast<size_t>(r)];
      if (!a.empty()) continue;
      const auto text = env.ReadFile(fmt::format("{}.{}.addr", base, r));
      const std::string line = text.ok() ? text->substr(0, text->find('\n')) : "";
      if (!line.empty()) {
        std::istringstream fields(line);
        std::string address;
        fields >> address;
        const Launch theirs = ParseLaunch(fields);
        // Our own launch started rank r: a file with another nonce is not our rank r's.
        if (mine.Has(r) && !theirs.nonce.empty() && theirs.nonce != mine.nonce) {
          foreign[r] = theirs.nonce;
          all = false;
          if (full) continue;
          first_missing = r;
          break;
        }
        foreign.erase(r);
        a = address;
      } else {
        all = false;
      }
      if (!all && !full) {
        first_missing = r;
        break;
      }
    }
    if (all) return addrs;
    if (full) {
      std::string why;
      if (!foreign.empty()) {
        std::string ranks;
        for (const auto& [r, nonce] : foreign) {
          ranks += fmt::format("{}{} (nonce {})", ranks.empty() ? "" : ", ", r, nonce);
        }
        why = fmt::format("; the files of rank(s) {} were written by another launch than this "
                          "one (nonce {}): another job uses this directory and job id; {}",
                          ranks, mine.nonce, TwoJobsAdvice());
      }
      return Status::Timeout(fmt::format(
          "rank {}: rendezvous in {} timed out after {}: no address from rank(s) {}; did they "
          "start, with the same --rendezvous and job id '{}'?{}",
          q.rank, dir, FormatDuration(q.timeout), MissingRanks(addrs), q.job_id, why));
    }
    pause = first_missing != was_missing ? 2 * kNsPerMs : std::min(pause * 2, 50 * kNsPerMs);
    env.SleepFor(pause);
  }
}

int PollMs(TimeNs deadline, const env::Env& env) {
  TimeNs left = deadline - env.Now();
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

// Reads the store's answer to a hello until it closes the connection.
std::string ReadReply(int fd, TimeNs deadline, const env::Env& env) {
  std::string reply;
  while (env.Now() <= deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, PollMs(deadline, env)) <= 0) continue;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  return reply;
}

std::string Hello(const RendezvousRequest& q, const Launch& mine) {
  return fmt::format("{} {} {} {} {}\n", kStoreHello, q.job_id, q.rank, q.my_address,
                     FormatLaunch(mine));
}

// Rank 0 found the store's port taken: if another job's store is there, tell it (so that it
// stops rather than mix its ranks with ours) and stop too.
Status PortTaken(const RendezvousRequest& q, const Launch& mine, const SocketAddress& at,
                 const std::string& where, const std::string& bind_error, const env::Env& env) {
  std::string answer = "nothing answered";
  int fd = socket(at.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, at.get(), at.length) == 0) {
    SendAll(fd, Hello(q, mine));
    std::string reply = ReadReply(fd, env.Now() + 2 * kNsPerSec, env);
    answer = reply.empty() ? "it closed the connection" : "it answered: " + reply.substr(0, reply.find('\n'));
  }
  if (fd >= 0) close(fd);
  return Status::InvalidArgument(fmt::format(
      "rank 0: cannot serve the rendezvous store on {}: {}; another job's store is probably "
      "there ({}); {}",
      where, bind_error, answer, TwoJobsAdvice()));
}

Result<std::vector<std::string>> StoreServer(const RendezvousRequest& q, const Launch& own,
                                             const SocketAddress& at, const std::string& where,
                                             const env::Env& env) {
  int lfd = socket(at.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(lfd, at.get(), at.length) != 0 || listen(lfd, 1024) != 0) {
    const int err = errno;
    close(lfd);
    if (err == EADDRINUSE) return PortTaken(q, own, at, where, strerror(err), env);
    if (err == EADDRNOTAVAIL) {
      return AddressNotOnThisHost(0, where, "serve the rendezvous store", "MASTER_ADDR");
    }
    return Status::IoError(fmt::format("rank 0: cannot serve the rendezvous store on {}: {} "
                                       "(set MASTER_ADDR to an address of rank 0's host)",
                                       where, strerror(err)));
  }
  std::map<std::string, Launch> launches;  // nonce -> the block it claims
  if (own.Claims()) launches[own.nonce] = own;
  std::vector<std::string> addrs(static_cast<size_t>(q.world_size));
  addrs[0] = q.my_address;
  std::vector<std::string> from(static_cast<size_t>(q.world_size));  // who registered each rank
  from[0] = "rank 0 itself";
  std::map<int, std::string> pending;  // fd -> partial line
  std::map<int, int> clients;          // rank -> fd
  TimeNs deadline = env.Now() + q.timeout;
  Status result;
  std::string conflict;  // two jobs here, and we cannot tell which ranks are ours
  while (static_cast<int>(clients.size()) < q.world_size - 1 && conflict.empty()) {
    if (env.Now() > deadline) {
      result = Status::Timeout(fmt::format(
          "rank 0: rendezvous store on {} timed out after {}: rank(s) {} never registered; did "
          "they start, with this MASTER_ADDR/--rendezvous, and can their hosts reach {}? (a "
          "link down between them and this host looks the same: their output says)",
          where, FormatDuration(q.timeout), MissingRanks(addrs), where));
      break;
    }
    std::vector<pollfd> fds{{lfd, POLLIN, 0}};
    for (auto& [fd, buf] : pending) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), PollMs(deadline, env)) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      int cfd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (cfd >= 0) pending[cfd] = "";
    }
    for (size_t i = 1; i < fds.size() && conflict.empty(); ++i) {
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
      const Launch theirs = ParseLaunch(in);
      const std::string peer = SocketName(fd, true);
      std::string error;
      if (magic != kStoreHello) {
        error = "not a genie rendezvous client (or another genie version)";
      } else if (job != q.job_id) {
        error = fmt::format("job id '{}' but this store serves '{}'", job, q.job_id);
      } else if (rank < 0 || rank >= q.world_size) {
        error = fmt::format("rank {} outside 1..{}", rank, q.world_size - 1);
      } else if (own.Has(rank) && !theirs.nonce.empty() && theirs.nonce != own.nonce) {
        // Rank 0's launch started this rank: certainly not ours. Refuse it alone.
        error = fmt::format(
            "rank {} was started by another launch (nonce {}) than ranks {} of this job (nonce "
            "{}): another job uses this rendezvous; {}",
            rank, theirs.nonce, own.Range(), own.nonce,
            TwoJobsAdvice());
      } else if (rank == 0) {
        conflict = fmt::format("a second rank 0 (from {}) found this port taken", peer);
        error = "this port serves another job's rendezvous (its rank 0 is up); " + TwoJobsAdvice();
      } else if (theirs.Claims() && launches.count(theirs.nonce) &&
                 (launches[theirs.nonce].base != theirs.base ||
                  launches[theirs.nonce].size != theirs.size)) {
        error = fmt::format("rank {} claims ranks {} for launch {}, which claimed {} before",
                            rank, theirs.Range(), theirs.nonce, launches[theirs.nonce].Range());
      } else if (clients.count(rank)) {
        conflict = fmt::format("rank {} registered twice (from {} and from {})", rank,
                               from[static_cast<size_t>(rank)], peer);
      } else {
        for (const auto& [nonce, other] : launches) {
          if (nonce != theirs.nonce && other.Overlaps(theirs)) {
            conflict = fmt::format("ranks {} (launch {}) and ranks {} (launch {}, rank {} from "
                                   "{}) were started by two launches",
                                   other.Range(), nonce, theirs.Range(), theirs.nonce, rank, peer);
          }
        }
      }
      if (!error.empty() || !conflict.empty()) {
        const std::string why = error.empty() ? conflict : error;
        spdlog::warn("rank 0: rendezvous store on {} refused {}: {}", where, peer, why);
        SendAll(fd, "ERR " + why + "\n");
        close(fd);
        pending.erase(fd);
        continue;
      }
      if (theirs.Claims()) launches[theirs.nonce] = theirs;
      addrs[static_cast<size_t>(rank)] = addr;
      from[static_cast<size_t>(rank)] = peer;
      clients[rank] = fd;
      pending.erase(fd);
    }
  }
  if (!conflict.empty()) {
    result = Status::InvalidArgument(fmt::format(
        "rank 0: two jobs use the rendezvous store on {}: {}; their ranks cannot be told apart, "
        "so this job stops rather than mix with the other: {}",
        where, conflict, TwoJobsAdvice()));
  }
  std::string table = "OK\n";
  for (const auto& a : addrs) table += a + "\n";
  for (auto& [rank, fd] : clients) {
    SendAll(fd, result.ok() ? table : "ERR " + result.message() + "\n");
    close(fd);
  }
  for (auto& [fd, buf] : pending) {
    if (!conflict.empty()) SendAll(fd, "ERR " + result.message() + "\n");
    close(fd);
  }
  close(lfd);
  if (!result.ok()) return result;
  return addrs;
}

Result<std::vector<std::string>> StoreClient(const RendezvousRequest& q, const Launch& mine,
                                             const SocketAddress& at, const std::string& where,
                                             env::Env& env) {
  TimeNs deadline = env.Now() + q.timeout;
  int fd = -1;
  std::string last_error;
  int last_errno = 0;
  while (true) {
    fd = socket(at.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    // A connect to a host behind a link that is down waits for SYN retries (minutes): bound
    // each attempt by what is left of the deadline (connect() honours SO_SNDTIMEO).
    const TimeNs left = std::max<TimeNs>(deadline - env.Now(), 10 * kNsPerMs);
    timeval tv{static_cast<time_t>(left / kNsPerSec),
               static_cast<suseconds_t>(left % kNsPerSec / 1000)};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, at.get(), at.length) == 0) break;
    last_errno = errno == EINPROGRESS ? ETIMEDOUT : errno;
    last_error = strerror(last_errno);
    close(fd);
    fd = -1;
    if (env.Now() > deadline) {
      if (last_errno == ECONNREFUSED) {
        // Its host answered: nothing listens there, rank 0 is not (yet, or any more) running.
        return Status::Timeout(fmt::format(
            "rank {}: cannot reach the rendezvous store of rank 0 at {} within {} ({}); is "
            "rank 0 running?", q.rank, where, FormatDuration(q.timeout), last_error));
      }
      // Its host never answered: the network between the two is the cause, this rank's to
      // report (IoError: the network failed), not a peer's.
      return Status::IoError(fmt::format(
          "rank {}: cannot reach the rendezvous store of rank 0 at {} within {} ({}): the link "
          "between this host and {} may be down, or a route or firewall is missing (check "
          "`ip link` and `ping` from here; on a testbed, `genie testbed status`)",
          q.rank, where, FormatDuration(q.timeout), last_error, where));
    }
    env.SleepFor(20 * kNsPerMs);
  }
  // Back to blocking without a bound: ReadReply waits with poll() up to the deadline.
  timeval none{};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
  SendAll(fd, Hello(q, mine));
  std::string reply = ReadReply(fd, deadline, env);
  close(fd);
  std::istringstream in(reply);
  std::string line;
  std::getline(in, line);
  if (line.rfind("ERR ", 0) == 0) {
    // Refused for what it is (another job, a wrong rank): this rank's input, not a peer's loss.
    return Status::InvalidArgument(fmt::format("rank {}: the rendezvous store at {} refused it: {}",
                                               q.rank, where, line.substr(4)));
  }
  if (line != "OK" && env.Now() > deadline) {
    return Status::Timeout(fmt::format(
        "rank {}: the rendezvous store at {} did not answer within {}; some ranks never "
        "registered (see rank 0's log)", q.rank, where, FormatDuration(q.timeout)));
  }
  if (line != "OK") {
    return Status::Unavailable(fmt::format(
        "rank {}: the rendezvous store at {} closed the connection without an answer (did rank "
        "0 fail?)", q.rank, where));
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

void WithdrawAddress(const RendezvousRequest& q, env::Env* env) {
  if (q.world_size == 1 || q.spec.rfind("dir:", 0) != 0) return;
  if (env == nullptr) env = env::Env::Default();
  const std::string dir = q.spec.substr(4);
  (void)env->RemoveFile(fmt::format("{}/{}.{}.addr", dir, SafeName(q.job_id), q.rank));
}

Result<std::vector<std::string>> ExchangeAddresses(const RendezvousRequest& q,
                                                   const RendezvousLaunch& launch,
                                                   env::Env* env) {
  if (env == nullptr) env = env::Env::Default();
  if (q.world_size < 1 || q.rank < 0 || q.rank >= q.world_size) {
    return Status::InvalidArgument(
        fmt::format("rank {} outside a world of {} ranks", q.rank, q.world_size));
  }
  if (q.job_id.empty() || q.job_id.find_first_of(" \t\n") != std::string::npos) {
    return Status::InvalidArgument("job id '" + q.job_id + "' must be non-empty without spaces");
  }
  if (q.world_size == 1) return std::vector<std::string>{q.my_address};
  if (IsLauncherKvsSpec(q.spec)) {
    return ExchangeThroughLauncher(q.spec, q.rank, q.world_size, q.my_address, q.timeout);
  }
  const Launch mine = LaunchOf(q, launch, *env);
  if (q.spec.rfind("dir:", 0) == 0) return DirExchange(q, mine, q.spec.substr(4), *env);
  if (q.spec.rfind("tcp:", 0) == 0) {
    std::string where = q.spec.substr(4);
    GENIE_ASSIGN_OR_RETURN(auto hp, SplitHostPort(where));
    GENIE_ASSIGN_OR_RETURN(SocketAddress at, ResolveAddress(hp.first, hp.second));
    return q.rank == 0 ? StoreServer(q, mine, at, where, *env)
                       : StoreClient(q, mine, at, where, *env);
  }
  return Status::InvalidArgument("rendezvous '" + q.spec +
                                 "': expected dir:/shared/path, tcp:host:port, pmi or pmix");
}

}  // namespace genie::net
