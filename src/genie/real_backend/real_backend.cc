#include "genie/real_backend/real_backend.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "genie/net/fd_limit.h"
#include "genie/net/frame.h"
#include "genie/net/rendezvous.h"

namespace genie::real_backend {
namespace {

// Clock ping-pongs use tags no Executor or barrier tag takes (those never set all of 63..16).
constexpr uint64_t kClockTag = 0xFFFF'FFFF'FFFF'0000ull;

// The kernel's boot id: processes that share it share CLOCK_MONOTONIC (one machine, whatever
// network namespace they are in).
std::string BootId(env::Env* env) {
  auto id = env->ReadFile("/proc/sys/kernel/random/boot_id");
  if (!id.ok() || id->empty()) return "unknown";
  return id->substr(0, id->find('\n'));
}

}  // namespace

Result<std::unique_ptr<RealBackend>> RealBackend::Create(const RealBackendOptions& options) {
  RealBackendOptions o = options;
  if (o.env == nullptr) o.env = env::Env::Default();
  env::Env* env = o.env;
  const TimeNs created = env->Now();
  if (o.world_size > 1 && o.rendezvous.empty()) {
    return Status::InvalidArgument(fmt::format(
        "rank {} of {}: no rendezvous given; use genie launch, or set GENIE_RENDEZVOUS to "
        "dir:/shared/path or tcp:host:port",
        o.rank, o.world_size));
  }
  loop::SleepPolicy policy;
  policy.spin = o.spin;
  if (o.spin_us > 0) policy.margin = static_cast<TimeNs>(o.spin_us) * kNsPerUs;
  GENIE_ASSIGN_OR_RETURN(auto loop, loop::EventLoop::Create(policy, env));
  std::unique_ptr<RealBackend> b(new RealBackend(o, std::move(loop)));
  b->startup_.created = created;
  b->traffic_.resize(static_cast<size_t>(o.world_size));
  if (o.intra_host) {
    GENIE_ASSIGN_OR_RETURN(auto model, IntraHostModel::Create(*o.intra_host, o.world_size));
    b->intra_.emplace(std::move(model));
  }

  net::TransportOptions t;
  t.rank = o.rank;
  t.world_size = o.world_size;
  t.job_id = o.job_id;
  t.bind_addr = o.bind_addr;
  t.channels = o.channels;
  t.tcp_congestion = o.tcp_congestion;
  t.peer_timeout = o.peer_timeout;
  t.clock = env;
  t.socket_buffer_bytes = o.socket_buffer_bytes;
  t.fabric_provider = o.transport.fabric_provider;
  t.fabric_rma = o.transport.fabric_rma;
  if (!o.transport.fabric_domain.empty()) {
    // One domain (NIC) per local rank, as --iface maps interfaces.
    std::vector<std::string> domains;
    size_t start = 0;
    while (start <= o.transport.fabric_domain.size()) {
      size_t comma = o.transport.fabric_domain.find(',', start);
      if (comma == std::string::npos) comma = o.transport.fabric_domain.size();
      domains.push_back(o.transport.fabric_domain.substr(start, comma - start));
      start = comma + 1;
    }
    t.fabric_domain = domains[static_cast<size_t>(std::max(0, o.local_rank)) % domains.size()];
  }
  net::TransportFactory make = o.transport_factory;
  if (!make) {
    GENIE_ASSIGN_OR_RETURN(make, net::TransportFactoryFor(o.transport.kind));
  }
  GENIE_ASSIGN_OR_RETURN(b->transport_, make(b->loop_.get(), t));
  b->transport_->SetEvents(b.get());

  GENIE_ASSIGN_OR_RETURN(std::string address, b->transport_->Listen());
  b->listen_address_ = address;
  // Each rank publishes "address|host id"; the transport sees only the addresses.
  net::RendezvousRequest q{o.rendezvous,  o.job_id, o.rank, o.world_size, address + "|" + BootId(env),
                           o.peer_timeout};
  const TimeNs rendezvous_start = env->Now();
  GENIE_ASSIGN_OR_RETURN(auto published,
                         net::ExchangeAddresses(q, {"", o.local_rank, o.local_world_size}, env));
  b->startup_.rendezvous = env->Now() - rendezvous_start;
  std::vector<std::string> addresses;
  std::string table;
  for (const std::string& p : published) {
    const size_t bar = p.rfind('|');
    addresses.push_back(p.substr(0, bar));
    b->host_ids_.push_back(bar == std::string::npos ? "unknown" : p.substr(bar + 1));
    table += p + "\n";
  }
  // Listening ports are fresh every run: the table's hash tells this run's files from others'.
  b->run_id_ = fmt::format("{:016x}", net::JobHash(table));
  b->addresses_ = addresses;
  GENIE_RETURN_IF_ERROR(b->CheckHosts(addresses));
  b->peers_ = o.peers ? *o.peers : net::AllPeers(o.rank, o.world_size);
  // The clock estimate ping-pongs rank 0 with every rank on another machine: both ends know
  // the host ids from the table, so both add the pair.
  for (int r = 0; r < o.world_size; ++r) {
    if (r != o.rank && (o.rank == 0 || r == 0) && !b->SameClock(o.rank == 0 ? r : o.rank)) {
      b->peers_.push_back(r);
    }
  }
  GENIE_ASSIGN_OR_RETURN(b->peers_, net::NormalizePeers(b->peers_, o.rank, o.world_size));
  net::RaiseFdLimit();
  GENIE_RETURN_IF_ERROR(net::CheckFdBudget(
      o.rank, static_cast<uint64_t>(b->peers_.size()) * static_cast<uint64_t>(o.channels),
      o.channels));
  const TimeNs connect_start = env->Now();
  GENIE_RETURN_IF_ERROR(b->transport_->Connect(addresses, b->peers_));
  b->startup_.connect = env->Now() - connect_start;
  // A full mesh is a barrier: every rank has read our address. With fewer peers a rank we do
  // not talk to may still be reading the table, so the address stays until Shutdown / Abort
  // (after the run's final world barrier).
  b->rendezvous_ = q;
  if (b->peers_.size() + 1 == static_cast<size_t>(o.world_size)) b->Withdraw();
  spdlog::info("rank {}: connected to {} of {} peers over {} ({} channel(s) each) from {}", o.rank,
               b->peers_.size(), o.world_size - 1, b->transport_->name(), o.channels, address);
  const TimeNs sync_start = env->Now();
  GENIE_RETURN_IF_ERROR(b->EstimateClock());
  b->startup_.clock_sync = env->Now() - sync_start;
  b->startup_.ready = env->Now();
  return b;
}

Status RealBackend::CheckHosts(const std::vector<std::string>& addresses) {
  if (!intra_) return Status::Ok();
  // Modelled delivery times are CLOCK_MONOTONIC deadlines: both ends must share that clock.
  // Every rank checks every host (not just its own), so all fail together with one message.
  const int per_host = intra_->ranks_per_host();
  for (int r = 0; r < options_.world_size; ++r) {
    const int first = intra_->HostOf(r) * per_host;
    if (host_ids_[static_cast<size_t>(r)] != host_ids_[static_cast<size_t>(first)]) {
      return Status::InvalidArgument(fmt::format(
          "ranks {} and {} ({} and {}) are one host in the intra-host model ({} ranks per "
          "host) but run on different machines; start {} consecutive ranks per host (e.g. "
          "mpiexec -ppn {}, srun --distribution=block)",
          first, r, addresses[static_cast<size_t>(first)], addresses[static_cast<size_t>(r)],
          per_host, per_host, per_host));
    }
  }
  return Status::Ok();
}

Status RealBackend::EstimateClock() {
  const int me = options_.rank;
  const int n = options_.world_size;
  if (n == 1) return Status::Ok();
  int outstanding = 0;
  auto post_recv = [&](int peer, int round, uint64_t* data, Callback fn) {
    Pending p;
    p.fn = std::move(fn);
    p.remote_data = data;
    transport_->PostRecv(
        {peer, 0, kClockTag | static_cast<uint64_t>(round), nullptr, 0, Store(std::move(p))});
  };
  auto post_send = [&](int peer, int round, uint64_t data) {
    ++outstanding;
    transport_->PostSend({peer, 0, kClockTag | static_cast<uint64_t>(round), nullptr, 0,
                          Store({[&outstanding] { --outstanding; }}), data});
  };
  auto same_clock = [&](int r) { return SameClock(r); };
  std::vector<uint64_t> stamps(kClockPings);  // rank 0's reply times, for a pinging rank
  if (me == 0) {
    // Answer every other machine's ranks' pings with the time each arrived, in any order.
    for (int peer = 1; peer < n; ++peer) {
      if (same_clock(peer)) continue;
      for (int round = 0; round < kClockPings; ++round) {
        ++outstanding;
        post_recv(peer, round, nullptr, [&, peer, round] {
          --outstanding;
          post_send(peer, round, static_cast<uint64_t>(loop_->Now()));
        });
      }
    }
  }
  // Ranks other than 0: one ping at a time, each timed by this rank's clock.
  TimeNs best_rtt = std::numeric_limits<TimeNs>::max();
  std::function<void(int)> ping = [&](int round) {
    if (round == kClockPings) return;
    const TimeNs t0 = loop_->Now();
    ++outstanding;
    uint64_t* stamp = &stamps[static_cast<size_t>(round)];
    post_recv(0, round, stamp, [&, t0, stamp, round] {
      --outstanding;
      const TimeNs t1 = loop_->Now();
      if (t1 - t0 < best_rtt) {
        best_rtt = t1 - t0;
        clock_.offset_ns = static_cast<TimeNs>(*stamp) - (t0 + (t1 - t0) / 2);
        clock_.rtt_ns = best_rtt;
      }
      ++clock_.samples;
      ping(round + 1);
    });
    post_send(0, round, 0);
  };
  if (me != 0 && !same_clock(me)) ping(0);
  const TimeNs deadline = loop_->Now() + options_.peer_timeout;
  while (outstanding > 0 && status_.ok()) {
    if (loop_->Now() > deadline) {
      return Status::Timeout(fmt::format(
          "rank {}: clock synchronisation with rank 0 did not finish within {} (--peer-timeout)",
          me, FormatDuration(options_.peer_timeout)));
    }
    loop_->RunOnce(loop_->Now() + 10 * kNsPerMs);
  }
  loop_->ResetQuit();
  return status_;
}

RealBackend::RealBackend(const RealBackendOptions& options, std::unique_ptr<loop::EventLoop> loop)
    : options_(options), loop_(std::move(loop)) {}

RealBackend::~RealBackend() {
  Withdraw();
  transport_.reset();  // closes sockets while the loop still exists
}

uint64_t RealBackend::Store(Pending p) {
  if (!free_.empty()) {
    uint64_t slot = free_.back();
    free_.pop_back();
    callbacks_[slot] = std::move(p);
    return slot;
  }
  callbacks_.push_back(std::move(p));
  return callbacks_.size() - 1;
}

bool RealBackend::SameClock(int r) const {
  // Ranks on rank 0's machine read the same CLOCK_MONOTONIC: offset 0, nothing to measure.
  return !options_.always_sync_clock && host_ids_[static_cast<size_t>(r)] == host_ids_[0];
}

int RealBackend::connections() const {
  int n = 0;
  for (int p : peers_) n += transport_->counters(p).connections;
  return n;
}

void RealBackend::OnRecvDone(uint64_t cookie, Bytes, uint64_t remote_data) {
  Pending& p = callbacks_[cookie];
  if (p.remote_data != nullptr) *p.remote_data = remote_data;
  if (p.deadline_from_peer) p.not_before = static_cast<TimeNs>(remote_data);
  Fire(cookie);
}

void RealBackend::Fire(uint64_t cookie) {
  Pending p = std::move(callbacks_[cookie]);
  callbacks_[cookie] = Pending{};
  free_.push_back(cookie);
  if (aborting_) return;
  if (p.not_before > loop_->Now()) {
    // A modelled message: the transport was faster than the modelled link.
    loop_->RunAt(p.not_before, std::move(p.fn));
    return;
  }
  if (p.fn) p.fn();
}

void RealBackend::After(TimeNs delay, Callback fn) {
  loop_->RunAt(loop_->Now() + delay, std::move(fn));
}

void RealBackend::Send(const Message& msg, Callback done) {
  PeerTraffic& t = traffic_[static_cast<size_t>(msg.peer)];
  if (!Modelled(msg.peer)) {
    if (msg.peer != options_.rank) {
      t.network_bytes_sent += msg.bytes;
      ++t.network_messages_sent;
    }
    transport_->PostSend(
        {msg.peer, msg.channel, msg.tag, msg.data, msg.bytes, Store({std::move(done)})});
    return;
  }
  t.modelled_bytes_sent += msg.bytes;
  ++t.modelled_messages_sent;
  const TimeNs deliver = intra_->Deliver(options_.rank, msg.peer, msg.bytes, loop_->Now());
  const Bytes wire = options_.carry_data ? msg.bytes : 0;
  transport_->PostSend({msg.peer, msg.channel, msg.tag, options_.carry_data ? msg.data : nullptr,
                        wire, Store({std::move(done), deliver}), static_cast<uint64_t>(deliver)});
}

void RealBackend::Recv(const Message& msg, Callback done) {
  if (!Modelled(msg.peer)) {
    transport_->PostRecv(
        {msg.peer, msg.channel, msg.tag, msg.into, msg.bytes, Store({std::move(done)})});
    return;
  }
  Pending p{std::move(done)};
  p.deadline_from_peer = true;
  const Bytes wire = options_.carry_data ? msg.bytes : 0;
  transport_->PostRecv({msg.peer, msg.channel, msg.tag, options_.carry_data ? msg.into : nullptr,
                        wire, Store(std::move(p))});
}

void RealBackend::Run() {
  if (status_.ok()) loop_->Run();
  // Consume the Stop() so the next Run() (next iteration) runs again; a fatal error sticks.
  if (status_.ok()) loop_->ResetQuit();
}

void RealBackend::OnFatal(const Status& status) {
  if (status_.ok()) status_ = status;
  loop_->Quit();
}

void RealBackend::Withdraw() {
  if (!rendezvous_) return;
  net::WithdrawAddress(*rendezvous_, loop_->env());
  rendezvous_.reset();
}

void RealBackend::Abort(const Status& why) {
  Withdraw();
  aborting_ = true;  // completions that still drain while the news goes out reach nobody
  if (transport_)
    transport_->Abort(why.message(), std::min<TimeNs>(options_.peer_timeout, kNsPerSec));
}

Status RealBackend::Shutdown() {
  Withdraw();
  if (!transport_) return Status::Ok();
  // After a failure nobody waits for goodbyes: the job is over.
  return transport_->Shutdown(status_.ok() ? options_.peer_timeout : 0);
}

}  // namespace genie::real_backend
