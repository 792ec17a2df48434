// TcpTransport: creation and posting operations. The rest lives beside it by concept (see
// tcp_conn.h).
#include "genie/net/tcp/tcp_transport.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "genie/net/tcp/tcp_conn.h"

namespace genie::net {

Result<std::unique_ptr<TcpTransport>> TcpTransport::Create(loop::EventLoop* loop,
                                                           const TransportOptions& options) {
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size) {
    return Status::InvalidArgument(
        fmt::format("rank {} is outside a world of {} ranks", options.rank, options.world_size));
  }
  if (options.channels < 1 || options.channels > 64) {
    return Status::InvalidArgument(
        fmt::format("channels = {}: use 1 to 64 connections per peer pair", options.channels));
  }
  if (options.job_id.size() > kMaxJobIdBytes) {
    return Status::InvalidArgument(fmt::format("job id is {} bytes; at most {} allowed",
                                               options.job_id.size(), kMaxJobIdBytes));
  }
  TransportOptions o = options;
  if (o.clock == nullptr) o.clock = env::Env::Default();
  return std::unique_ptr<TcpTransport>(new TcpTransport(loop, o));
}

TcpTransport::TcpTransport(loop::EventLoop* loop, const TransportOptions& options)
    : loop_(loop),
      options_(options),
      job_hash_(JobHash(options.job_id)),
      by_peer_(static_cast<size_t>(options.world_size),
               std::vector<Conn*>(static_cast<size_t>(options.channels), nullptr)),
      counters_(static_cast<size_t>(options.world_size)),
      scratch_(tcp_internal::kScratchBytes),
      completions_(loop),
      heartbeats_(loop, options, &completions_,
                  {[this](int p) { return LinkTo(p); },
                   [this](int p) {
                     Enqueue(by_peer_[static_cast<size_t>(p)][0], FrameType::kHeartbeat, 0, 0, 0,
                             nullptr, 0, 0, 0, tcp_internal::kControl, 0);
                   },
                   [this](int p) { return addresses_[static_cast<size_t>(p)]; },
                   [this](int p) { GiveUp(p); }}) {}

TcpTransport::~TcpTransport() {
  heartbeats_.Stop();
  StopProbeRttWatch();
  for (auto& [fd, c] : conns_) {
    loop_->RemoveFd(fd);
    close(fd);
  }
  if (listen_fd_ >= 0) {
    loop_->RemoveFd(listen_fd_);
    close(listen_fd_);
  }
}


TcpTransport::Conn* TcpTransport::ConnFor(int peer, uint16_t channel, const char* op) {
  if (peer < 0 || peer >= options_.world_size || peer == options_.rank) {
    ReportFatal(Status::InvalidArgument(
        fmt::format("rank {}: {} to rank {}, which is not a peer in a world of {} ranks",
                    options_.rank, op, peer, options_.world_size)));
    return nullptr;
  }
  if (!is_peer_.empty() && !is_peer_[static_cast<size_t>(peer)]) {
    ReportFatal(Status::Internal(fmt::format(
        "rank {}: {} to rank {}, which is not among the peers this rank connected to (its "
        "plans did not name it; a bug in the peer set, runtime/peer_set.h)",
        options_.rank, op, peer)));
    return nullptr;
  }
  Conn* c = by_peer_[static_cast<size_t>(peer)][channel];
  if (c == nullptr || c->bye_queued) {
    ReportFatal(Status::Unavailable(
        fmt::format("rank {}: {} to rank {} channel {}, but that connection is closed",
                    options_.rank, op, peer, channel)));
    return nullptr;
  }
  return c;
}

void TcpTransport::PostSend(const SendOp& op) {
  uint16_t ch = static_cast<uint16_t>(op.channel % options_.channels);
  if (op.peer == options_.rank) {
    DeliverToSelf(op, ch);  // a schedule may address its own rank; no socket involved
    return;
  }
  Conn* c = ConnFor(op.peer, ch, "send");
  if (c == nullptr) return;
  Enqueue(c, FrameType::kData, op.data != nullptr ? kFlagHasData : 0, ch, op.tag, op.data, op.bytes,
          op.remote_data, 0, tcp_internal::kSendKind, op.cookie);
}

Result<uint64_t> TcpTransport::RegisterRegion(void* base, Bytes bytes) {
  regions_.emplace_back(static_cast<unsigned char*>(base), bytes);
  return static_cast<uint64_t>(regions_.size());
}

void TcpTransport::PostWrite(const WriteOp& op) {
  uint16_t ch = static_cast<uint16_t>(op.channel % options_.channels);
  Conn* c = ConnFor(op.peer, ch, "one-sided write");
  if (c == nullptr) return;
  Enqueue(c, FrameType::kWrite, op.data != nullptr ? kFlagHasData : 0, ch, op.remote_key, op.data,
          op.bytes, op.remote_offset, op.imm, tcp_internal::kWriteKind, op.cookie);
}

void TcpTransport::StartProbeRttWatch() {
  if (probe_rtt_timer_ != 0) return;
  bool bbr = false;
  for (const auto& [fd, c] : conns_) {
    bbr = bbr || (c->state == Conn::State::kOpen && ProbeRttWatch::InProbeRtt(fd).has_value());
  }
  if (!bbr) return;  // no other congestion control has the mode
  ProbeRttTick();
}

void TcpTransport::StopProbeRttWatch() {
  if (probe_rtt_timer_ == 0) return;
  loop_->Cancel(probe_rtt_timer_);
  probe_rtt_timer_ = 0;
}

void TcpTransport::ProbeRttTick() {
  const TimeNs now = loop_->Now();
  for (const auto& [fd, c] : conns_) {
    if (c->state != Conn::State::kOpen) continue;
    if (const auto in = ProbeRttWatch::InProbeRtt(fd)) {
      probe_rtt_.Sample(fd, *in, *in ? ProbeRttWatch::Backlog(fd) : 0, now);
    }
  }
  probe_rtt_timer_ = loop_->RunAtCoarse(now + ProbeRttWatch::kInterval, [this] { ProbeRttTick(); });
}

}  // namespace genie::net
