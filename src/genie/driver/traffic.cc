#include "genie/driver/traffic.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include <fmt/format.h>

#include "genie/env/env.h"
#include "genie/launch/rank_env.h"
#include "genie/net/interface_address.h"
#include "genie/net/rendezvous.h"
#include "genie/net/socket_util.h"
#include "genie/report/atomic_file.h"

namespace genie::driver {

namespace {

constexpr size_t kTrafficChunk = 256 << 10;  // one write or read
constexpr TimeNs kPacingTick = kNsPerMs;

// One rank's record file: JSON lines, flushed as written.
class TrafficLog {
 public:
  Status Open(const std::string& path) {
    file_ = fopen(path.c_str(), "w");
    if (file_ == nullptr) {
      return Status::IoError(fmt::format("cannot write {}: {}", path, strerror(errno)));
    }
    return Status::Ok();
  }
  ~TrafficLog() {
    if (file_ != nullptr) fclose(file_);
  }
  void Line(const nlohmann::json& j) {
    if (file_ == nullptr) return;
    fmt::print(file_, "{}\n", j.dump());
    fflush(file_);
  }

 private:
  FILE* file_ = nullptr;
};

// A socket that closes itself.
struct TrafficSocket {
  int fd = -1;
  explicit TrafficSocket(int f = -1) : fd(f) {}
  TrafficSocket(TrafficSocket&& o) noexcept : fd(o.fd) { o.fd = -1; }
  TrafficSocket& operator=(TrafficSocket&& o) noexcept {
    std::swap(fd, o.fd);
    return *this;
  }
  ~TrafficSocket() {
    if (fd >= 0) close(fd);
  }
};

// SIGINT/SIGTERM as a readable fd: a stop request ends the loop cleanly.
int StopSignalFd() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

Result<TrafficSocket> ListenForSender(const std::string& address) {
  auto addr = net::ResolveAddress(address, 0);
  if (!addr.ok()) return addr.status();
  TrafficSocket s(socket(addr->family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd < 0 || bind(s.fd, addr->get(), addr->length) != 0 || listen(s.fd, 64) != 0) {
    return Status::IoError(fmt::format("cannot listen on {}: {}", address, strerror(errno)));
  }
  return s;
}

Result<TrafficSocket> ConnectToReceiver(const std::string& from, const std::string& to, TimeNs timeout) {
  auto hp = net::SplitHostPort(to);
  if (!hp.ok()) return hp.status();
  auto dst = net::ResolveAddress(hp->first, hp->second);
  auto src = net::ResolveAddress(from, 0);
  if (!dst.ok() || !src.ok()) return !dst.ok() ? dst.status() : src.status();
  TrafficSocket s(socket(dst->family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd < 0 || bind(s.fd, src->get(), src->length) != 0) {
    return Status::IoError(fmt::format("cannot bind to {}: {}", from, strerror(errno)));
  }
  timeval tv{static_cast<time_t>(timeout / kNsPerSec), 0};
  setsockopt(s.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (connect(s.fd, dst->get(), dst->length) != 0) {
    return Status::IoError(fmt::format("cannot connect to {}: {}", to, strerror(errno)));
  }
  return s;
}

bool StopRequested(int sigfd) {
  signalfd_siginfo info{};
  return read(sigfd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info));
}

struct TrafficLoop {
  env::Env* env;
  TrafficLog* log;
  int sigfd;
  TimeNs interval;
};

// The sender's life once connected. Returns the reason it ended.
std::string SendLoop(const TrafficLoop& l, const TrafficOptions& o, std::vector<TrafficSocket>& socks, Bytes* total) {
  const TimeNs t0 = l.env->Now();
  TimeNs next_sample = t0 + l.interval;
  TimeNs period_start = t0;
  Bytes in_period = 0;
  bool on = true;
  const TimeNs cycle = o.on_ns + o.off_ns;
  std::vector<char> buf(kTrafficChunk, 'g');
  std::vector<pollfd> p;
  size_t turn = 0;  // round-robin over the connections
  l.log->Line({{"on_ns", l.env->NowWall()}});
  while (true) {
    const TimeNs now = l.env->Now();
    if (o.duration_ns > 0 && now - t0 >= o.duration_ns) return "duration";
    if (o.bytes > 0 && *total >= o.bytes) return "bytes";
    if (cycle > 0) {
      const bool want_on = (now - t0) % cycle < o.on_ns;
      if (want_on != on) {
        on = want_on;
        l.log->Line({{on ? "on_ns" : "off_ns", l.env->NowWall()}});
        period_start = now;
        in_period = 0;
      }
    }
    if (now >= next_sample) {
      l.log->Line({{"t_ns", l.env->NowWall()}, {"bytes", *total}});
      next_sample += l.interval * ((now - next_sample) / l.interval + 1);
    }
    // What may be written now.
    uint64_t allow = on ? UINT64_MAX : 0;
    if (on && o.rate_bps > 0) {
      const double due = static_cast<double>(o.rate_bps) / 8 *
                         static_cast<double>(now - period_start) / kNsPerSec;
      allow = due > static_cast<double>(in_period) ? static_cast<uint64_t>(due) - in_period : 0;
      // A token bucket of 20 ms: credit a late wake-up built beyond that is forfeited, not
      // sent as a burst above the rate.
      const uint64_t burst = std::max<uint64_t>(kTrafficChunk, o.rate_bps / 8 / 50);
      if (allow > burst) {
        in_period += allow - burst;
        allow = burst;
      }
    }
    if (o.bytes > 0) allow = std::min<uint64_t>(allow, o.bytes - *total);
    TimeNs wake = next_sample;
    if (o.duration_ns > 0) wake = std::min(wake, t0 + o.duration_ns);
    if (cycle > 0) {  // the next on/off edge
      const TimeNs phase = (now - t0) % cycle;
      wake = std::min(wake, now + (phase < o.on_ns ? o.on_ns - phase : cycle - phase));
    }
    if (on && allow == 0) wake = std::min(wake, now + kPacingTick);
    p.assign(1, {l.sigfd, POLLIN, 0});
    for (const TrafficSocket& s : socks) p.push_back({s.fd, static_cast<short>(allow > 0 ? POLLOUT : 0), 0});
    const int ms = static_cast<int>(std::max<TimeNs>(0, wake - now) / kNsPerMs) + 1;
    if (poll(p.data(), p.size(), ms) < 0 && errno != EINTR) return "error: poll";
    if ((p[0].revents & POLLIN) && StopRequested(l.sigfd)) return "stopped";
    for (size_t k = 0; k < socks.size() && allow > 0; ++k) {
      const size_t i = (turn + k) % socks.size();
      const short ev = p[i + 1].revents;
      if (ev & (POLLERR | POLLHUP)) return "error: the receiver closed the connection";
      if (!(ev & POLLOUT)) continue;
      const size_t n = static_cast<size_t>(std::min<uint64_t>(allow, kTrafficChunk));
      const ssize_t w = send(socks[i].fd, buf.data(), n, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        return fmt::format("error: send: {}", strerror(errno));
      }
      *total += static_cast<Bytes>(w);
      in_period += static_cast<Bytes>(w);
      allow -= static_cast<uint64_t>(w);
    }
    ++turn;
  }
}

// The receiver's: until every connection is closed by the sender, or a stop.
std::string ReceiveLoop(const TrafficLoop& l, std::vector<TrafficSocket>& socks, Bytes* total) {
  TimeNs next_sample = l.env->Now() + l.interval;
  std::vector<char> buf(kTrafficChunk);
  std::vector<pollfd> p;
  size_t open = socks.size();
  while (open > 0) {
    const TimeNs now = l.env->Now();
    if (now >= next_sample) {
      l.log->Line({{"t_ns", l.env->NowWall()}, {"bytes", *total}});
      next_sample += l.interval * ((now - next_sample) / l.interval + 1);
    }
    p.assign(1, {l.sigfd, POLLIN, 0});
    for (const TrafficSocket& s : socks) p.push_back({s.fd, static_cast<short>(s.fd >= 0 ? POLLIN : 0), 0});
    const int ms = static_cast<int>(std::max<TimeNs>(0, next_sample - now) / kNsPerMs) + 1;
    if (poll(p.data(), p.size(), ms) < 0 && errno != EINTR) return "error: poll";
    if ((p[0].revents & POLLIN) && StopRequested(l.sigfd)) return "stopped";
    for (size_t i = 0; i < socks.size(); ++i) {
      if (socks[i].fd < 0 || !(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t r = recv(socks[i].fd, buf.data(), buf.size(), MSG_DONTWAIT);
      if (r > 0) {
        *total += static_cast<Bytes>(r);
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        socks[i] = TrafficSocket();
        --open;
      }
    }
  }
  return "sender done";
}

}  // namespace

int RunTraffic(const TrafficOptions& o) {
  env::Env* env = env::Env::Default();
  auto re = launch::DiscoverRankEnv();
  if (!re.ok()) {
    fmt::print(stderr, "genie traffic: {}\n", re.status().message());
    return 2;
  }
  const int rank = re->rank;
  if (re->world_size % 2 != 0) {
    fmt::print(stderr,
               "genie traffic: {} ranks; traffic ranks come in pairs (rank 2p sends to 2p+1)\n",
               re->world_size);
    return 2;
  }
  auto bind = net::ResolveBindAddress(o.bind, re->local_rank);
  if (!bind.ok()) {
    fmt::print(stderr, "genie traffic: rank {}: --bind: {}\n", rank, bind.status().message());
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.output, ec);
  TrafficLog log;
  if (Status st = log.Open(fmt::format("{}/traffic-rank-{}.jsonl", o.output, rank)); !st.ok()) {
    fmt::print(stderr, "genie traffic: rank {}: {}\n", rank, st.message());
    return 2;
  }
  const bool sender = rank % 2 == 0;
  const int peer = sender ? rank + 1 : rank - 1;
  const int sigfd = StopSignalFd();
  auto fail = [&](const std::string& what) {
    fmt::print(stderr, "genie traffic: rank {}: {}\n", rank, what);
    log.Line({{"end_ns", env->NowWall()}, {"bytes", 0}, {"reason", "error: " + what}});
    return 1;
  };

  // The receiver listens first, then publishes where; the sender publishes its own address.
  TrafficSocket listener;
  std::string published = *bind;
  if (!sender) {
    auto l = ListenForSender(*bind);
    if (!l.ok()) return fail(l.status().message());
    listener = std::move(*l);
    published = net::SocketName(listener.fd, /*peer=*/false);
  }
  net::RendezvousRequest req;
  req.spec = o.rendezvous.empty() ? re->rendezvous : o.rendezvous;
  req.job_id = !o.job_id.empty() ? o.job_id : re->job_id.empty() ? "genie-traffic" : re->job_id;
  req.rank = rank;
  req.world_size = re->world_size;
  req.my_address = published;
  req.timeout = o.connect_timeout;
  auto all = net::ExchangeAddresses(req);
  if (!all.ok()) return fail("rendezvous: " + all.status().message());
  const std::string peer_addr = (*all)[static_cast<size_t>(peer)];

  std::vector<TrafficSocket> socks;
  for (int c = 0; c < o.parallel; ++c) {
    if (sender) {
      auto s = ConnectToReceiver(*bind, peer_addr, o.connect_timeout);
      if (!s.ok()) return fail(fmt::format("rank {} at {}: {}", peer, peer_addr, s.status().message()));
      socks.push_back(std::move(*s));
      continue;
    }
    pollfd p[2] = {{listener.fd, POLLIN, 0}, {sigfd, POLLIN, 0}};
    const int ready = poll(p, 2, static_cast<int>(o.connect_timeout / kNsPerMs));
    if (ready > 0 && (p[1].revents & POLLIN) && StopRequested(sigfd)) {
      log.Line({{"end_ns", env->NowWall()}, {"bytes", 0}, {"reason", "stopped"}});
      return 0;
    }
    if (ready <= 0 || !(p[0].revents & POLLIN)) {
      return fail(fmt::format("rank {} (the sender) did not connect {} time(s) within {}", peer,
                              o.parallel, FormatDuration(o.connect_timeout)));
    }
    socks.emplace_back(accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (socks.back().fd < 0) return fail(fmt::format("accept: {}", strerror(errno)));
  }
  listener = TrafficSocket();
  net::WithdrawAddress(req);
  for (TrafficSocket& s : socks) {
    net::DataSocketOptions dso;
    (void)net::SetDataSocketOptions(s.fd, dso);
    (void)net::SetNonBlocking(s.fd);
  }

  log.Line({{"rank", rank},
            {"role", sender ? "send" : "receive"},
            {"pair", rank / 2},
            {"address", published},
            {"peer", peer_addr},
            {"parallel", o.parallel},
            {"rate_bps", o.rate_bps},
            {"start_ns", env->NowWall()}});
  Bytes total = 0;
  TrafficLoop loop{env, &log, sigfd, std::max<TimeNs>(o.interval_ns, 10 * kNsPerMs)};
  const std::string reason = sender ? SendLoop(loop, o, socks, &total) : ReceiveLoop(loop, socks, &total);
  for (TrafficSocket& s : socks) {
    if (s.fd >= 0) shutdown(s.fd, SHUT_WR);
  }
  log.Line({{"t_ns", env->NowWall()}, {"bytes", total}});
  log.Line({{"end_ns", env->NowWall()}, {"bytes", total}, {"reason", reason}});
  if (reason.rfind("error", 0) == 0) return fail(reason.substr(7));
  return 0;
}

Status WriteTrafficResults(const JobsSpec& spec, const JobSpec& job) {
  namespace fs = std::filesystem;
  const TrafficSpec& t = job.traffic;
  nlohmann::json pairs = nlohmann::json::array();
  for (size_t p = 0; p < t.pairs.size(); ++p) {
    nlohmann::json pair = {
        {"from", spec.hosts.empty() ? t.pair_names[p].first : spec.hosts[static_cast<size_t>(t.pairs[p].first)]},
        {"to", spec.hosts.empty() ? t.pair_names[p].second : spec.hosts[static_cast<size_t>(t.pairs[p].second)]}};
    for (int side = 0; side < 2; ++side) {
      const std::string role = side == 0 ? "sent" : "received";
      const std::string path = fmt::format("{}/traffic-rank-{}.jsonl", job.output, 2 * p + static_cast<size_t>(side));
      std::ifstream in(path);
      nlohmann::json samples = nlohmann::json::array();
      nlohmann::json windows = nlohmann::json::array();
      Bytes bytes = 0;
      int64_t start = 0, end = 0;
      std::string reason = in ? "killed (no end line)" : "no record (the rank did not start)";
      std::string line;
      while (std::getline(in, line)) {
        auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded() || !j.is_object()) continue;  // a line cut by a kill
        if (j.contains("start_ns")) start = j["start_ns"].get<int64_t>();
        if (j.contains("t_ns")) {
          bytes = j.value("bytes", Bytes{0});
          samples.push_back({j["t_ns"], bytes});
          end = j["t_ns"].get<int64_t>();
        }
        if (j.contains("on_ns")) windows.push_back({j["on_ns"], nullptr});
        if (j.contains("off_ns") && !windows.empty()) windows.back()[1] = j["off_ns"];
        if (j.contains("end_ns")) {
          end = j["end_ns"].get<int64_t>();
          bytes = j.value("bytes", bytes);
          reason = j.value("reason", "");
        }
      }
      if (!windows.empty() && windows.back()[1].is_null()) windows.back()[1] = end;
      pair[role + "_bytes"] = bytes;
      pair[role] = samples;
      pair[side == 0 ? "sender_end" : "receiver_end"] = reason;
      if (side == 0) {
        pair["start_ns"] = start;
        pair["on_windows"] = windows;
        continue;
      }
      pair["end_ns"] = end;
      // Goodput: what arrived, per sample interval and over the whole flow.
      nlohmann::json goodput = nlohmann::json::array();
      for (size_t i = 1; i < samples.size(); ++i) {
        const double dt = samples[i][0].get<double>() - samples[i - 1][0].get<double>();
        const double db = samples[i][1].get<double>() - samples[i - 1][1].get<double>();
        if (dt > 0) goodput.push_back({samples[i][0], db * 8 * kNsPerSec / dt});
      }
      pair["goodput_bps"] = goodput;
      pair["mean_goodput_bps"] = start > 0 && end > start ? static_cast<double>(bytes) * 8 *
                                                                kNsPerSec /
                                                                static_cast<double>(end - start)
                                                          : 0.0;
    }
    pairs.push_back(pair);
  }
  nlohmann::json out = {{"job", job.name},
                        {"type", "traffic"},
                        {"jobs_file", spec.path},
                        {"testbed", spec.testbed},
                        {"parallel", t.parallel},
                        {"rate_bps", t.rate_bps},
                        {"bytes_per_pair", t.bytes},
                        {"duration_ns", t.duration_ns},
                        {"on_ns", t.on_ns},
                        {"off_ns", t.off_ns},
                        {"pairs", pairs}};
  std::error_code ec;
  fs::create_directories(job.output, ec);
  return report::WriteFileAtomically(JobResultsPath(job), out.dump(1) + "\n");
}

}  // namespace genie::driver
