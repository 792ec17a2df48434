// RealBackend: the Backend of real runs. Time is CLOCK_MONOTONIC; After() is a precise timer
// on the rank's EventLoop (timerfd to deadline - margin, then spin if allowed); Send/Recv are
// two-sided messages over a net::Transport (made by the options' factory: TCP unless a test
// injects another, such as net::FaultyTransport), matched by (peer, tag, channel). A message
// that arrives before its Recv is posted is kept by the transport until it is.
//
// Create() connects eagerly: it listens on the bind address, exchanges addresses through the
// rendezvous, and returns only when all C connections to every peer are up (or fails naming
// the missing ranks after peer_timeout). So connection cost never lands inside a measured step.
// The peers are the options' (the ranks the rank's plans use, runtime/peer_set.h) plus those
// the clock estimate needs (rank 0 and the ranks on other machines than rank 0's); unset =
// every rank. Before connecting it raises RLIMIT_NOFILE to the hard limit and fails, naming
// the limit and the fix, when the connections would not fit under it.
// It then estimates this rank's clock offset to rank 0 (ping-pong, the minimum-RTT sample of
// Cristian's method) so results from many hosts merge onto one timeline.
//
// With an intra-host model (intra_host_model.h), messages between ranks of one host are
// modelled: they still pass through the transport (over loopback, with no payload unless
// carry_data) to keep the ranks in step, but complete at the modelled delivery time.
//
// Ownership: owns its EventLoop and Transport. Threading: everything on the thread that calls
// Run(), except Stop(), which any thread may call. Callbacks run on the loop, never
// re-entrantly from Send/Recv/After.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/config/network_config.h"
#include "genie/loop/event_loop.h"
#include "genie/net/rendezvous.h"
#include "genie/net/transport.h"
#include "genie/net/transport_factory.h"
#include "genie/real_backend/intra_host_model.h"
#include "genie/runtime/backend.h"

namespace genie::real_backend {

// The executor's side of the seam this backend implements (runtime/backend.h).
using runtime::Backend;
using runtime::Callback;
using runtime::Message;
using runtime::ScheduleCache;

// Which transport carries the messages (genie run/netcheck --transport and --fabric-*).
struct TransportChoice {
  std::string kind = "tcp";  // tcp | fabric
  std::string fabric_provider = "tcp;ofi_rxm";
  // Comma list mapped by local rank, like --iface (one NIC per rank); empty = the provider's
  // choice (for socket providers: the interface of the bind address).
  std::string fabric_domain;
  bool fabric_rma = false;
};

struct RealBackendOptions {
  int rank = 0;
  int world_size = 1;
  std::string job_id = "genie";
  // "dir:/path" (files in a shared directory) or "tcp:host:port" (store on rank 0).
  std::string rendezvous;
  // Which ranks this rank's launcher started with it (the launcher's LOCAL_RANK and
  // LOCAL_WORLD_SIZE; -1: unknown): the rendezvous refuses a stray of another job among them.
  int local_rank = -1;
  int local_world_size = -1;
  std::string bind_addr = "127.0.0.1";
  // The ranks this rank's operations talk to (runtime/PlannedPeers); nullopt = all of them.
  std::optional<std::vector<int>> peers;
  int channels = 1;            // connections per peer pair
  std::string tcp_congestion;  // empty = the kernel's default
  TimeNs peer_timeout = 30 * kNsPerSec;  // connect/rendezvous deadline and TCP_USER_TIMEOUT
  // Spin the last spin_us µs of every timer. Set spin = DefaultSleepPolicy(local ranks).spin
  // so that spinning happens only when this machine's ranks fit on its cores.
  bool spin = true;
  int spin_us = 200;
  int socket_buffer_bytes = 4 << 20;
  // The host's internal network, modelled instead of sent (genie run --intra-host).
  std::optional<config::NetworkConfig> intra_host;
  // Modelled messages carry their real payload (--verify); otherwise only a header.
  bool carry_data = false;
  // Measure the clock offset even on rank 0's machine (where it is 0): to test the estimate.
  bool always_sync_clock = false;
  TransportChoice transport;
  // Makes the transport; empty = the one `transport.kind` names. Tests pass
  // net::FaultyTransport::Wrap(...) to inject failures.
  net::TransportFactory transport_factory;
  // The OS: the clock every time here is read from, the rendezvous' files; nullptr =
  // env::Env::Default(). Borrowed: must outlive the backend.
  env::Env* env = nullptr;
};

// This rank's clock against rank 0's: rank 0 time = local time + offset_ns.
struct ClockOffset {
  TimeNs offset_ns = 0;
  TimeNs rtt_ns = 0;  // of the sample used; the offset is good to about rtt / 2
  int samples = 0;
};

// Where Create() spent its time (CLOCK_MONOTONIC ns).
struct StartupTimes {
  TimeNs created = 0;     // Create() entered
  TimeNs rendezvous = 0;  // the address exchange took
  TimeNs connect = 0;     // Connect() took
  TimeNs clock_sync = 0;  // the clock estimate took
  TimeNs ready = 0;       // Create() returned
};

// Traffic to one peer, split by what crossed the real network and what was modelled.
struct PeerTraffic {
  uint64_t network_bytes_sent = 0;
  uint64_t network_messages_sent = 0;
  uint64_t modelled_bytes_sent = 0;
  uint64_t modelled_messages_sent = 0;
};

class RealBackend final : public Backend, private net::TransportEvents {
 public:
  // Ping-pongs with rank 0 per rank on another machine (zero-byte messages on channel 0).
  static constexpr int kClockPings = 16;

  static Result<std::unique_ptr<RealBackend>> Create(const RealBackendOptions& options);
  ~RealBackend() override;

  int rank() const override { return options_.rank; }
  int world_size() const override { return options_.world_size; }
  TimeNs Now() const override { return loop_->Now(); }
  void After(TimeNs delay, Callback fn) override;
  void Send(const Message& msg, Callback done) override;
  void Recv(const Message& msg, Callback done) override;
  bool modelled() const override { return false; }

  // Runs the loop until Stop() or a fatal transport error (then status() says which peer).
  void Run();
  // Any thread. The current (or next) Run() returns after the current callback.
  void Stop() { loop_->Quit(); }
  // OK, or the first fatal error; the message names the peer rank.
  const Status& status() const { return status_; }
  // Orderly end after Run(): goodbye on every connection and wait for every peer's (at most
  // peer_timeout). A final barrier: returns when all peers have finished too.
  Status Shutdown();
  // Failure end instead of Shutdown(): every peer is told why this rank gives up (so they
  // report the cause, not just this rank's exit); waits at most 1 s for that to leave.
  void Abort(const Status& why);

  const net::PeerCounters& counters(int peer) const { return transport_->counters(peer); }
  const PeerTraffic& traffic(int peer) const { return traffic_[static_cast<size_t>(peer)]; }
  const ClockOffset& clock() const { return clock_; }
  // The ranks connected to (ascending) and the connections (sockets) to them right now.
  const std::vector<int>& peers() const { return peers_; }
  int connections() const;
  const StartupTimes& startup() const { return startup_; }
  // Host id of every rank (the kernel's boot id: ranks with the same one share a clock).
  const std::vector<std::string>& host_ids() const { return host_ids_; }
  // Identical on every rank of this run and different for every run (hash of the address
  // table): tells this run's result files from a previous run's in the same folder.
  const std::string& run_id() const { return run_id_; }
  // "ip:port" this rank listens on (what it published in the rendezvous).
  const std::string& listen_address() const { return listen_address_; }
  // Every rank's listen address (index = rank), from the rendezvous.
  const std::vector<std::string>& addresses() const { return addresses_; }
  // Ops posted whose completion has not run yet (tests and leak checks).
  size_t pending_ops() const { return callbacks_.size() - free_.size(); }
  loop::EventLoop& loop() { return *loop_; }
  net::Transport& transport() { return *transport_; }
  const RealBackendOptions& options() const { return options_; }

 private:
  RealBackend(const RealBackendOptions& options, std::unique_ptr<loop::EventLoop> loop);
  // What to do when a posted operation completes.
  struct Pending {
    Callback fn;
    TimeNs not_before = 0;           // modelled delivery time: complete no earlier
    bool deadline_from_peer = false;  // a modelled receive: the sender's remote_data is it
    uint64_t* remote_data = nullptr;  // where to store the sender's remote_data
  };
  uint64_t Store(Pending p);
  void Fire(uint64_t cookie);
  bool Modelled(int peer) const {
    return intra_ && peer != options_.rank && intra_->SameHost(options_.rank, peer);
  }
  Status CheckHosts(const std::vector<std::string>& published);
  // Rank r reads rank 0's CLOCK_MONOTONIC (same machine, and no --clock-sync always).
  bool SameClock(int r) const;
  void Withdraw();  // takes this rank's address out of the rendezvous, once
  Status EstimateClock();

  void OnSendDone(uint64_t cookie) override { Fire(cookie); }
  void OnRecvDone(uint64_t cookie, Bytes, uint64_t remote_data) override;
  void OnWriteDone(uint64_t cookie) override { Fire(cookie); }
  void OnRemoteWrite(int, uint16_t, uint64_t, Bytes, Bytes, uint32_t) override {}
  void OnFatal(const Status& status) override;

  RealBackendOptions options_;
  std::unique_ptr<loop::EventLoop> loop_;               // declared before transport_: outlives it
  std::unique_ptr<net::Transport> transport_;
  std::vector<Pending> callbacks_;  // slot per in-flight op; cookie = slot index
  std::vector<uint64_t> free_;
  Status status_;
  std::optional<IntraHostModel> intra_;
  std::vector<PeerTraffic> traffic_;
  std::vector<std::string> host_ids_;
  std::vector<std::string> addresses_;
  std::string run_id_;
  std::string listen_address_;
  ClockOffset clock_;
  std::vector<int> peers_;
  StartupTimes startup_;
  std::optional<net::RendezvousRequest> rendezvous_;  // until withdrawn
  bool aborting_ = false;
};

}  // namespace genie::real_backend
