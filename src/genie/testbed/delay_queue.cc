#include "genie/testbed/delay_queue.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>  // NF_ACCEPT
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

namespace genie::testbed {

Status ValidateDelayQueueOptions(const DelayQueueOptions& o) {
  if (o.queue_num < 0 || o.queue_num > 65535) {
    return Status::InvalidArgument("NFQUEUE number " + std::to_string(o.queue_num) +
                                   " is out of range; use 0 to 65535");
  }
  if (o.delay < 0 || o.jitter < 0) {
    return Status::InvalidArgument("delay and jitter must be 0 or more (got " +
                                   FormatDuration(o.delay) + " ± " + FormatDuration(o.jitter) +
                                   ")");
  }
  constexpr TimeNs kHour = 3600 * kNsPerSec;
  if (o.delay > kHour || o.jitter > kHour || o.delay + o.jitter > kHour) {
    return Status::InvalidArgument("delay + jitter " + FormatDuration(o.delay + o.jitter) +
                                   " is more than an hour; use a link-like delay such as 20ms");
  }
  if (o.max_packets == 0) {
    return Status::InvalidArgument("the queue must hold at least 1 packet (max_packets is 0)");
  }
  return Status::Ok();
}

ReleaseSchedule::ReleaseSchedule(TimeNs delay, TimeNs jitter, uint64_t seed)
    : delay_(delay), jitter_(jitter), rng_(seed), draw_(-jitter, jitter) {}

TimeNs ReleaseSchedule::Add(uint32_t id, TimeNs arrival) {
  TimeNs d = delay_;
  if (jitter_ > 0) d = std::max<TimeNs>(0, d + draw_(rng_));
  // Never before the packet ahead of it: TCP must see the order it sent.
  const TimeNs release = std::max(arrival + d, last_release_);
  last_release_ = release;
  held_.push_back({id, release});
  return release;
}

std::optional<ReleaseSchedule::Released> ReleaseSchedule::PopAll() {
  if (held_.empty()) return std::nullopt;
  Released r;
  r.last_id = held_.back().id;
  r.count = static_cast<uint32_t>(held_.size());
  held_.clear();
  return r;
}

namespace {

TimeNs Clock(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<TimeNs>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}
TimeNs Now() { return Clock(CLOCK_MONOTONIC); }

std::string Errno(int e) { return std::strerror(e); }

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// How late packets left, in 1 µs buckets up to 20 ms (later ones count in the last bucket).
class LateHistogram {
 public:
  void Add(TimeNs late) {
    const size_t b = std::min<size_t>(static_cast<size_t>(late / kNsPerUs), kBuckets - 1);
    ++buckets_[b];
    ++count_;
    max_ = std::max(max_, late);
  }
  TimeNs Percentile(double p) const {
    if (count_ == 0) return 0;
    const uint64_t rank = static_cast<uint64_t>(p * static_cast<double>(count_ - 1));
    uint64_t seen = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      seen += buckets_[b];
      if (seen > rank) return std::min<TimeNs>(static_cast<TimeNs>(b) * kNsPerUs, max_);
    }
    return max_;
  }
  TimeNs max() const { return max_; }

 private:
  static constexpr size_t kBuckets = 20'000;
  std::vector<uint64_t> buckets_ = std::vector<uint64_t>(kBuckets);
  uint64_t count_ = 0;
  TimeNs max_ = 0;
};

// State the packet callback updates; it runs inside nfq_handle_packet (and inside the
// library's configuration calls, which hand over packets that arrive meanwhile).
struct Context {
  ReleaseSchedule* schedule;
  DelayQueueStats* stats;
  LateHistogram* read_lag;
  TimeNs read_at = 0;       // CLOCK_MONOTONIC when the messages being handled were read
  TimeNs real_to_mono = 0;  // CLOCK_MONOTONIC - CLOCK_REALTIME at that moment
  uint32_t highest_id = 0;
  bool seen_any = false;
  void Stamp() {
    read_at = Now();
    real_to_mono = read_at - Clock(CLOCK_REALTIME);
  }
};

// When the packet reached the host: the kernel's receive timestamp (CLOCK_REALTIME, present
// while a socket asks for timestamps; see EnableReceiveTimestamps), else when it was read.
// A stamp in the future or more than a second old (clock stepped, or a sender's departure
// time in another clock) is not trusted.
TimeNs Arrival(nfq_data* nfa, Context* c) {
  timeval tv;
  if (nfq_get_timestamp(nfa, &tv) != 0) return c->read_at;
  const TimeNs real =
      static_cast<TimeNs>(tv.tv_sec) * kNsPerSec + static_cast<TimeNs>(tv.tv_usec) * kNsPerUs;
  // Packets handed over inside a configuration call may be newer than the last stamp.
  if (real + c->real_to_mono > c->read_at) c->Stamp();
  const TimeNs at = real + c->real_to_mono;
  if (at > c->read_at || at < c->read_at - kNsPerSec) return c->read_at;
  ++c->stats->kernel_stamped;
  c->read_lag->Add(c->read_at - at);
  return at;
}

int OnPacket(nfq_q_handle* /*qh*/, nfgenmsg* /*msg*/, nfq_data* nfa, void* data) {
  auto* c = static_cast<Context*>(data);
  const nfqnl_msg_packet_hdr* ph = nfq_get_msg_packet_hdr(nfa);
  if (ph == nullptr) return 0;
  const uint32_t id = ntohl(ph->packet_id);
  if (nfq_get_skbinfo(nfa) & NFQA_SKB_GSO) ++c->stats->gso_packets;
  c->schedule->Add(id, Arrival(nfa, c));
  c->highest_id = id;
  c->seen_any = true;
  ++c->stats->packets;
  c->stats->max_held = std::max<uint64_t>(c->stats->max_held, c->schedule->size());
  return 0;
}

// Signals the helper stops on, blocked while it runs and read through a signalfd.
sigset_t StopSignals() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGINT);
  return s;
}

// Messages in META mode are a few hundred bytes; a batch of reads per system call.
constexpr int kReadBatch = 64;
constexpr size_t kMessageBuffer = 4096;
// Packets read before releases are looked at again, so a flood cannot starve them.
constexpr int kReadBudget = 1024;
// Room for packets not yet read; a full socket fails open (or drops) in the kernel.
constexpr int kSocketBuffer = 16 << 20;
// Above every normal task, below the kernel's own real-time threads (50 and up).
constexpr int kRealtimePriority = 10;

class Reader {
 public:
  Reader(nfq_handle* h, int fd, Context* ctx, DelayQueueStats* stats)
      : h_(h), fd_(fd), ctx_(ctx), stats_(stats), buffers_(kReadBatch * kMessageBuffer) {
    for (int i = 0; i < kReadBatch; ++i) {
      iov_[i] = {buffers_.data() + i * kMessageBuffer, kMessageBuffer};
      msgs_[i] = {};
      msgs_[i].msg_hdr.msg_iov = &iov_[i];
      msgs_[i].msg_hdr.msg_iovlen = 1;
    }
  }

  // Reads and schedules what the socket holds, up to `budget` messages (< 0: all of it).
  Status Drain(int budget) {
    int done = 0;
    while (budget < 0 || done < budget) {
      const int n = recvmmsg(fd_, msgs_.data(), kReadBatch, MSG_DONTWAIT, nullptr);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();
        if (errno == ENOBUFS) {  // messages were lost; their packets go with the next batch
          ++stats_->truncated;
          continue;
        }
        return Status::IoError("reading the NFQUEUE socket: " + Errno(errno));
      }
      ctx_->Stamp();
      for (int i = 0; i < n; ++i) {
        if (msgs_[i].msg_hdr.msg_flags & MSG_TRUNC) {
          ++stats_->truncated;
          continue;
        }
        nfq_handle_packet(h_, static_cast<char*>(iov_[i].iov_base),
                          static_cast<int>(msgs_[i].msg_len));
      }
      done += n;
      if (n < kReadBatch) return Status::Ok();
    }
    return Status::Ok();
  }

 private:
  nfq_handle* h_;
  int fd_;
  Context* ctx_;
  DelayQueueStats* stats_;
  std::vector<char> buffers_;
  std::array<iovec, kReadBatch> iov_{};
  std::array<mmsghdr, kReadBatch> msgs_{};
};

}  // namespace

Status RunDelayQueue(const DelayQueueOptions& o, DelayQueueStats* stats_out) {
  GENIE_RETURN_IF_ERROR(ValidateDelayQueueOptions(o));
  DelayQueueStats local_stats;
  DelayQueueStats& stats = stats_out ? *stats_out : local_stats;
  stats = DelayQueueStats{};
  const std::string where = "NFQUEUE " + std::to_string(o.queue_num);

  // Stop signals go to the signalfd from now on; the caller's mask is restored on return.
  const sigset_t stop = StopSignals();
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &stop, &old_mask);
  struct RestoreMask {
    sigset_t mask;
    ~RestoreMask() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore_mask{old_mask};
  Fd sig(signalfd(-1, &stop, SFD_NONBLOCK | SFD_CLOEXEC));
  Fd timer(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  Fd ep(epoll_create1(EPOLL_CLOEXEC));
  if (sig.fd < 0 || timer.fd < 0 || ep.fd < 0) {
    return Status::IoError(where + ": cannot create signalfd/timerfd/epoll: " + Errno(errno));
  }
  // Default slack (50 µs) would make every release late by up to that.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  ReleaseSchedule schedule(o.delay, o.jitter, o.seed);
  LateHistogram late, read_lag;
  Context ctx{&schedule, &stats, &read_lag};
  // The kernel stamps received packets only while some socket asks for it; this one does.
  Fd stamps(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  const int on = 1;
  stats.kernel_stamps =
      stamps.fd >= 0 && setsockopt(stamps.fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) == 0;

  std::unique_ptr<nfq_handle, int (*)(nfq_handle*)> h(nfq_open(), &nfq_close);
  if (!h) {
    return Status::Unavailable(where + ": cannot open a netfilter netlink socket (" + Errno(errno) +
                               "); run as root (CAP_NET_ADMIN) in the link's network namespace, "
                               "e.g. `ip netns exec NS genie netdelay ...`");
  }
  ctx.Stamp();
  std::unique_ptr<nfq_q_handle, int (*)(nfq_q_handle*)> qh(
      nfq_create_queue(h.get(), static_cast<uint16_t>(o.queue_num), &OnPacket, &ctx),
      &nfq_destroy_queue);
  if (!qh) {
    return Status::Unavailable(where + ": cannot bind it in this network namespace (" +
                               Errno(errno) +
                               "); another program may hold it (a helper left running? "
                               "`ps -ef | grep netdelay`), or pick another --queue");
  }
  if (nfq_set_mode(qh.get(), NFQNL_COPY_META, 0) < 0) {
    return Status::Unsupported(where + ": cannot set copy mode META (" + Errno(errno) +
                               "); the kernel's nfnetlink_queue is too old");
  }
  if (nfq_set_queue_maxlen(qh.get(), o.max_packets) < 0) {
    return Status::IoError(where + ": cannot set the queue length to " +
                           std::to_string(o.max_packets) + ": " + Errno(errno));
  }
  // Whole GSO packets (else the kernel segments them first, ~44 verdicts per 64 KB), and
  // fail-open; each separately when the kernel refuses both at once.
  bool gso = false;
  if (nfq_set_queue_flags(qh.get(), NFQA_CFG_F_GSO | NFQA_CFG_F_FAIL_OPEN,
                          NFQA_CFG_F_GSO | NFQA_CFG_F_FAIL_OPEN) == 0) {
    gso = stats.fail_open = true;
  } else {
    gso = nfq_set_queue_flags(qh.get(), NFQA_CFG_F_GSO, NFQA_CFG_F_GSO) == 0;
    stats.fail_open =
        nfq_set_queue_flags(qh.get(), NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN) == 0;
  }
  // Real-time priority while bound; the thread's own policy comes back on return.
  struct RestorePolicy {
    int policy = sched_getscheduler(0);
    sched_param param{};
    bool changed = false;
    ~RestorePolicy() {
      if (changed) sched_setscheduler(0, policy, &param);
    }
  } restore_policy;
  sched_getparam(0, &restore_policy.param);
  if (o.realtime) {
    sched_param rt{};
    rt.sched_priority = kRealtimePriority;
    stats.realtime = restore_policy.changed = sched_setscheduler(0, SCHED_FIFO, &rt) == 0;
  }
  const int fd = nfq_fd(h.get());
  const int rcvbuf = kSocketBuffer, one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  }
  // Overflow must not turn into a read error: the lost messages' packets are released with
  // the next batch verdict (it covers every id up to the one given).
  setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);

  for (int f : {fd, timer.fd, sig.fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = f;
    if (epoll_ctl(ep.fd, EPOLL_CTL_ADD, f, &ev) < 0) {
      return Status::IoError(where + ": epoll_ctl: " + Errno(errno));
    }
  }
  stats.bound = true;
  fmt::print(stderr, "netdelay: queue {} bound: delay {}{}, up to {} packets, {}{}, {}\n",
             o.queue_num, FormatDuration(o.delay),
             o.jitter > 0 ? fmt::format(" ± {} (seed {})", FormatDuration(o.jitter), o.seed)
                          : std::string(", no jitter"),
             o.max_packets, stats.fail_open ? "fail-open" : "drops when full",
             gso ? ", GSO packets whole" : "",
             stats.realtime ? "SCHED_FIFO"
             : o.realtime   ? "normal priority (SCHED_FIFO refused: less precise on a busy machine)"
                            : "normal priority");
  std::fflush(stderr);

  Reader reader(h.get(), fd, &ctx, &stats);
  auto on_late = [&late](TimeNs l) { late.Add(l); };
  auto verdict = [&](uint32_t last_id) -> Status {
    ++stats.batches;
    if (nfq_set_verdict_batch(qh.get(), last_id, NF_ACCEPT) < 0) {
      return Status::IoError(where + ": sending a verdict: " + Errno(errno));
    }
    return Status::Ok();
  };
  TimeNs armed = -1;  // the timer's deadline, -1 when disarmed
  Status failure;
  for (bool stopping = false; !stopping;) {
    std::array<epoll_event, 4> events;
    const int n = epoll_wait(ep.fd, events.data(), static_cast<int>(events.size()), -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      failure = Status::IoError(where + ": epoll_wait: " + Errno(errno));
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == sig.fd) {
        // Consume it, or it would kill the process when the caller's mask comes back.
        signalfd_siginfo info;
        while (read(sig.fd, &info, sizeof(info)) == sizeof(info)) {
        }
        stopping = true;
      }
      if (events[i].data.fd == timer.fd) {
        uint64_t expirations;
        [[maybe_unused]] ssize_t r = read(timer.fd, &expirations, sizeof(expirations));
        armed = -1;
      }
    }
    failure = reader.Drain(kReadBudget);
    if (!failure.ok()) break;
    if (auto r = schedule.PopDue(Now(), on_late)) {
      failure = verdict(r->last_id);
      if (!failure.ok()) break;
    }
    const TimeNs next = schedule.empty() ? -1 : schedule.NextRelease();
    if (next != armed) {
      itimerspec its{};
      if (next >= 0) {
        its.it_value.tv_sec = next / kNsPerSec;
        its.it_value.tv_nsec = next % kNsPerSec;
      }
      timerfd_settime(timer.fd, TFD_TIMER_ABSTIME, &its, nullptr);
      armed = next;
    }
  }

  // Shutdown, nothing dropped and (nearly) nothing reordered: release what is held, in order;
  // then, with fail-open, a zero-length queue lets new packets pass at once. What the kernel
  // queued before that is in the socket: read it all and accept every id up to the last.
  // (Unbinding alone would drop whatever is still queued.)
  std::optional<uint32_t> accepted;  // a second verdict for the same ids would be an error
  auto accept_all = [&] {
    if (!ctx.seen_any || accepted == ctx.highest_id) return;
    Status v = verdict(ctx.highest_id);
    accepted = ctx.highest_id;
    if (failure.ok()) failure = v;
  };
  schedule.PopAll();
  accept_all();
  if (stats.fail_open) nfq_set_queue_maxlen(qh.get(), 0);
  Status drained = reader.Drain(-1);
  if (failure.ok()) failure = drained;
  schedule.PopAll();
  accept_all();
  qh.reset();
  h.reset();

  stats.late_p50 = late.Percentile(0.50);
  stats.late_p99 = late.Percentile(0.99);
  stats.late_max = late.max();
  stats.read_lag_p50 = read_lag.Percentile(0.50);
  stats.read_lag_p99 = read_lag.Percentile(0.99);
  return failure;
}

int RunDelayQueue(const DelayQueueOptions& o) {
  if (Status s = ValidateDelayQueueOptions(o); !s.ok()) {
    fmt::print(stderr, "netdelay: {}\n", s.message());
    return 2;
  }
  DelayQueueStats stats;
  Status s = RunDelayQueue(o, &stats);
  if (stats.bound) {
    fmt::print(stderr,
               "netdelay: queue {}: {} packets ({} GSO) in {} verdicts, at most {} held, {} "
               "messages lost; released late by p50 {}, p99 {}, max {}; {} timed from the "
               "kernel's receive stamp, read after it by p50 {}, p99 {}\n",
               o.queue_num, stats.packets, stats.gso_packets, stats.batches, stats.max_held,
               stats.truncated, FormatDuration(stats.late_p50), FormatDuration(stats.late_p99),
               FormatDuration(stats.late_max), stats.kernel_stamped,
               FormatDuration(stats.read_lag_p50), FormatDuration(stats.read_lag_p99));
  }
  if (!s.ok()) {
    fmt::print(stderr, "netdelay: {}\n", s.message());
    return 1;
  }
  return 0;
}

}  // namespace genie::testbed
