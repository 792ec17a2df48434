// FabricTransport: opening the provider (fi_getinfo with the capabilities genie needs, a
// clear error naming any that is missing), the endpoint's address for the rendezvous, the
// address vector, and the hello exchange that checks job id and world size.
#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "genie/net/fabric/fabric_internal.h"
#include "genie/net/fabric/fabric_library.h"
#include "genie/net/fabric/fabric_transport.h"
#include "genie/net/frame.h"
#include "genie/net/interface_address.h"

namespace genie::net {

using namespace fabric_internal;

namespace {

// Capabilities by name, for the error that names the one a provider lacks.
struct CapName {
  uint64_t bit;
  const char* name;
  const char* why;
};
constexpr CapName kCaps[] = {
    {FI_MSG, "FI_MSG", "control messages"},
    {FI_TAGGED, "FI_TAGGED", "tagged payload messages"},
    {FI_RMA, "FI_RMA", "--fabric-rma and one-sided writes"},
    {FI_WRITE, "FI_WRITE", "--fabric-rma and one-sided writes"},
    {FI_REMOTE_WRITE, "FI_REMOTE_WRITE", "--fabric-rma and one-sided writes"},
};

std::string HexEncode(const unsigned char* p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    s += kHex[p[i] >> 4];
    s += kHex[p[i] & 15];
  }
  return s;
}

Result<std::vector<unsigned char>> HexDecode(const std::string& s) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (s.size() % 2 != 0) return Status::InvalidArgument("odd length");
  std::vector<unsigned char> out(s.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return Status::InvalidArgument("not hexadecimal");
    out[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return out;
}

// Providers whose domains are IP interfaces: there bind_addr selects the interface.
bool IsSocketProvider(const std::string& prov) {
  return prov.rfind("tcp", 0) == 0 || prov.rfind("udp", 0) == 0 || prov.rfind("sockets", 0) == 0;
}

}  // namespace

const char* fabric_internal::TypeName(int type) {
  switch (type) {
    case kHello:
      return "hello";
    case kData:
      return "data";
    case kCts:
      return "clear-to-send";
    case kCtsAhead:
      return "clear-to-send ahead";
    case kCredit:
      return "credit";
    case kNotice:
      return "write notice";
    case kBye:
      return "goodbye";
    case kHeartbeat:
      return "heartbeat";
    case kAbort:
      return "abort";
    default:
      return "unknown";
  }
}

Result<std::unique_ptr<FabricTransport>> FabricTransport::Create(loop::EventLoop* loop,
                                                                 const TransportOptions& options) {
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size) {
    return Status::InvalidArgument(
        fmt::format("rank {} is outside a world of {} ranks", options.rank, options.world_size));
  }
  if (options.world_size >= (1 << 23)) {
    return Status::InvalidArgument("the fabric transport supports up to 8388607 ranks");
  }
  if (options.channels < 1 || options.channels > 64) {
    return Status::InvalidArgument(
        fmt::format("channels = {}: use 1 to 64 channels per peer pair", options.channels));
  }
  if (options.job_id.size() > kMaxJobIdBytes) {
    return Status::InvalidArgument(fmt::format("job id is {} bytes; at most {} allowed",
                                               options.job_id.size(), kMaxJobIdBytes));
  }
  TransportOptions o = options;
  if (o.clock == nullptr) o.clock = env::Env::Default();
  std::unique_ptr<FabricTransport> t(new FabricTransport(loop, o));
  GENIE_RETURN_IF_ERROR(t->Open());
  return t;
}

FabricTransport::FabricTransport(loop::EventLoop* loop, const TransportOptions& options)
    : loop_(loop),
      options_(options),
      job_hash_(JobHash(options.job_id)),
      fi_addr_(static_cast<size_t>(options.world_size), FI_ADDR_UNSPEC),
      counters_(static_cast<size_t>(options.world_size)),
      send_seq_(static_cast<size_t>(options.world_size), 0),
      hello_from_(static_cast<size_t>(options.world_size), 0),
      bye_from_(static_cast<size_t>(options.world_size), 0),
      lost_(static_cast<size_t>(options.world_size), 0),
      headers_seen_(static_cast<size_t>(options.world_size), 0),
      credit_slots_(static_cast<size_t>(options.world_size)),
      credits_(static_cast<size_t>(options.world_size)),
      crossings_(static_cast<size_t>(options.world_size), 0),
      credit_sent_(static_cast<size_t>(options.world_size)),
      completions_(loop),
      heartbeats_(loop, options, &completions_,
                  {[this](int p) { return LinkTo(p); },
                   [this](int p) { SendSimpleCtrl(p, kHeartbeat, nullptr, 0); },
                   [this](int p) { return AddrName(p); }, [this](int p) { GiveUp(p); }}),
      alive_(std::make_shared<bool>(true)) {
  spin_ns_ = CqSpinNs(loop->policy().spin);
}

FabricTransport::~FabricTransport() {
  *alive_ = false;
  if (const char* e = getenv("GENIE_FABRIC_STATS"); e != nullptr && e[0] == '1') {
    spdlog::warn(
        "rank {}: fabric CQ drive: {} drains ({} from the wait fd, {} from the progress timer, "
        "{} of which found completions), {} fi_cq_read ({} empty), {} completions, fi_trywait "
        "busy {}, {} polls instead of blocking; {} receives offered ahead, {} payloads sent into "
        "an offer ({} crossed), {} "
        "clear-to-sends answering a header; {} credits offered, {} payloads sent into a credit, "
        "{} offers crossed by one",
        options_.rank, stats_.drains, stats_.fd_wakeups, stats_.timer_wakeups, stats_.timer_useful,
        stats_.cq_reads, stats_.empty_reads, stats_.completions, stats_.trywait_busy, stats_.spins,
        stats_.offers, stats_.sent_on_offer, stats_.sent_crossed, stats_.cts_replies,
        stats_.credits, stats_.sent_on_credit, stats_.offers_dropped);
  }
  heartbeats_.Stop();
  CloseAll();
}

std::string FabricTransport::name() const {
  return options_.fabric_rma ? "fabric (" + provider_ + ", rma)" : "fabric (" + provider_ + ")";
}

Status FabricTransport::Open() {
  const std::string& prov = options_.fabric_provider;
  const bool rma = options_.fabric_rma;
  GENIE_RETURN_IF_ERROR(fabric_library::Load());
  if (getenv("FI_PROVIDER") == nullptr) {
    // libfabric initialises every provider it was built with on the first fi_getinfo (psm2,
    // psm, ... probe for their hardware: ~1 s per process here); restrict it to the layers of
    // the one asked for, unless the user chose. "tcp;ofi_rxm" -> "tcp,ofi_rxm".
    std::string only = prov;
    for (char& ch : only) {
      if (ch == ';') ch = ',';
    }
    setenv("FI_PROVIDER", only.c_str(), 0);
  }
  if (prov.find("ofi_rxm") != std::string::npos) {
    // ofi_rxm's default pre-posts so many receive buffers per connection that fi_enable takes
    // 0.23 s; 128 take 0.06 s and streamed as fast on loopback (docs/fabric.md).
    setenv("FI_OFI_RXM_MSG_RX_SIZE", "128", 0);
  }
  if (prov.rfind("tcp", 0) == 0 && prov.find("ofi_rxm") != std::string::npos) {
    // Every payload's fi_trecv is posted before its sender sends it (fabric_match.cc), so over
    // tcp ofi_rxm can move any size eagerly into the caller's buffer: one trip instead of its
    // read rendezvous (request, read, response, done), which cost ~0.6x genie TCP at >= 1 MiB
    // under load. (Over verbs the eager limit must stay rxm's buffer size: not set there.)
    setenv("FI_OFI_RXM_EAGER_LIMIT", "1073741824", 0);
  }
  fi_info* hints = fabric_library::AllocInfo();
  if (hints == nullptr) return Status::Internal("fi_allocinfo failed");
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_WRITE | FI_REMOTE_WRITE;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  // What genie can cope with; the provider says which of them it needs (info->domain_attr).
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  // Headers of one peer must arrive in order (matching is FIFO per key), and a write notice
  // after its write.
  hints->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_SAW;
  hints->rx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_SAW;
  hints->fabric_attr->prov_name = strdup(prov.c_str());
  if (!options_.fabric_domain.empty()) {
    hints->domain_attr->name = strdup(options_.fabric_domain.c_str());
  }
  const char* node = nullptr;
  uint64_t flags = 0;
  if (options_.fabric_domain.empty() && IsSocketProvider(prov)) {
    node = options_.bind_addr.c_str();  // the interface with this address
    flags = FI_SOURCE;
    // Not this host's: say so (fi_getinfo would only find no provider there).
    GENIE_RETURN_IF_ERROR(CheckBindable(options_.rank, options_.bind_addr, "open the fabric"));
  }
  const std::string where =
      options_.fabric_domain.empty()
          ? (node != nullptr ? fmt::format("on {}", node) : std::string("on any domain"))
          : fmt::format("on domain {}", options_.fabric_domain);
  int rc = fabric_library::GetInfo(FI_VERSION(1, 9), node, nullptr, flags, hints, &info_);
  if (rc == -FI_ENODATA) {
    // FI_ORDER_SAW is only for PostWrite's notice (EFA, shm order sends after sends only):
    // without it one-sided PostWrite is refused, the rest works.
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    rc = fabric_library::GetInfo(FI_VERSION(1, 9), node, nullptr, flags, hints, &info_);
  }
  if (rc == -FI_ENODATA && !rma) {
    // Two-sided mode does without RMA; one-sided writes then report the provider lacks it.
    hints->caps = FI_MSG | FI_TAGGED;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    rc = fabric_library::GetInfo(FI_VERSION(1, 9), node, nullptr, flags, hints, &info_);
  }
  if (rc != 0) {
    // Find what is missing: ask again for the provider alone and compare.
    std::string missing;
    fi_info* bare_hints = fabric_library::AllocInfo();
    bare_hints->fabric_attr->prov_name = strdup(prov.c_str());
    fi_info* bare = nullptr;
    int brc = fabric_library::GetInfo(FI_VERSION(1, 9), nullptr, nullptr, 0, bare_hints, &bare);
    if (brc != 0) {
      missing =
          fmt::format("provider '{}' is not available on this host (fi_info -l lists them)", prov);
    } else {
      bool rdm = false;
      uint64_t caps = 0, order = 0;
      for (fi_info* i = bare; i != nullptr; i = i->next) {
        if (i->ep_attr->type != FI_EP_RDM) continue;
        rdm = true;
        caps |= i->caps;
        order |= i->tx_attr->msg_order;
      }
      if (!rdm) missing = "it offers no reliable-datagram endpoint (FI_EP_RDM)";
      for (const CapName& c : kCaps) {
        if (!rdm || (caps & c.bit) != 0) continue;
        if (!rma && (c.bit & (FI_RMA | FI_WRITE | FI_REMOTE_WRITE)) != 0) continue;
        missing +=
            fmt::format("{}it lacks {}, needed for {}", missing.empty() ? "" : "; ", c.name, c.why);
      }
      if (rdm && (order & FI_ORDER_SAS) == 0) {
        missing += fmt::format("{}it lacks FI_ORDER_SAS (messages of a peer in order)",
                               missing.empty() ? "" : "; ");
      }
      if (missing.empty()) {
        missing = fmt::format(
            "no domain matches {} (check --fabric-domain / --bind with fi_info "
            "-p '{}')",
            where, prov);
      }
      fabric_library::FreeInfo(bare);
    }
    fabric_library::FreeInfo(bare_hints);
    fabric_library::FreeInfo(hints);
    return Status::Unavailable(fmt::format("rank {}: libfabric provider '{}' {}: {}: {}",
                                           options_.rank, prov, where, FiError(rc), missing));
  }
  fabric_library::FreeInfo(hints);
  if (!options_.fabric_domain.empty()) {
    // Some providers (ofi_rxm over tcp) do not filter by the domain hint: pick it here.
    fi_info* match = nullptr;
    std::string offered;
    for (fi_info* i = info_; i != nullptr; i = i->next) {
      const char* name = i->domain_attr->name != nullptr ? i->domain_attr->name : "";
      if (match == nullptr && options_.fabric_domain == name) match = i;
      if (offered.find(name) == std::string::npos) {
        offered += fmt::format("{}{}", offered.empty() ? "" : ", ", name);
      }
    }
    if (match == nullptr) {
      fabric_library::FreeInfo(info_);
      info_ = nullptr;
      return Status::InvalidArgument(fmt::format(
          "rank {}: libfabric provider '{}' has no domain '{}' (--fabric-domain); it offers: {} "
          "(fi_info -p '{}' lists them)",
          options_.rank, prov, options_.fabric_domain, offered, prov));
    }
    fi_info* chosen = fabric_library::DupInfo(match);
    fabric_library::FreeInfo(info_);
    info_ = chosen;
  }
  provider_ = info_->fabric_attr->prov_name;
  has_rma_ = (info_->caps & FI_RMA) != 0;
  saw_order_ = (info_->tx_attr->msg_order & FI_ORDER_SAW) != 0;
  mr_local_ = (info_->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
  mr_virt_addr_ = (info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
  mr_prov_key_ = (info_->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
  cq_data_size_ = info_->domain_attr->cq_data_size;
  if (rma && cq_data_size_ < 4) {
    return Status::Unavailable(fmt::format(
        "rank {}: provider '{}' carries {} bytes of remote CQ data; --fabric-rma needs 4",
        options_.rank, provider_, cq_data_size_));
  }

  auto check = [&](int r, const char* what) -> Status {
    if (r == 0) return Status::Ok();
    return Status::IoError(fmt::format("rank {}: {} on provider '{}' domain {}: {}", options_.rank,
                                       what, provider_, info_->domain_attr->name, FiError(r)));
  };
  GENIE_RETURN_IF_ERROR(
      check(fabric_library::Fabric(info_->fabric_attr, &fabric_, nullptr), "fi_fabric"));
  GENIE_RETURN_IF_ERROR(check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain"));
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.size = 4096;
  // GENIE_FABRIC_POLL=1 polls even where a wait fd exists (to compare the two; bench/).
  const char* force_poll = getenv("GENIE_FABRIC_POLL");
  const bool poll = force_poll != nullptr && std::string(force_poll) == "1";
  cq_attr.wait_obj = FI_WAIT_FD;
  rc = poll ? -FI_ENOSYS : fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
  if (rc == 0) {
    int fd = -1;
    if (fi_control(&cq_->fid, FI_GETWAIT, &fd) == 0 && fd >= 0) {
      cq_fd_ = fd;
    } else {
      fi_close(&cq_->fid);
      cq_ = nullptr;
    }
  }
  if (cq_ == nullptr) {
    // No wait fd: the CQ is polled every loop turn instead.
    cq_attr.wait_obj = FI_WAIT_NONE;
    GENIE_RETURN_IF_ERROR(check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), "fi_cq_open"));
    if (!poll) {
      spdlog::info("rank {}: provider '{}' has no CQ wait fd; polling it (one core per rank)",
                   options_.rank, provider_);
    }
  }
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = static_cast<size_t>(options_.world_size);
  GENIE_RETURN_IF_ERROR(check(fi_av_open(domain_, &av_attr, &av_, nullptr), "fi_av_open"));
  GENIE_RETURN_IF_ERROR(check(fi_endpoint(domain_, info_, &ep_, nullptr), "fi_endpoint"));
  GENIE_RETURN_IF_ERROR(check(fi_ep_bind(ep_, &av_->fid, 0), "fi_ep_bind(av)"));
  GENIE_RETURN_IF_ERROR(check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)"));
  GENIE_RETURN_IF_ERROR(check(fi_enable(ep_), "fi_enable"));
  if (cq_fd_ >= 0) {
    GENIE_RETURN_IF_ERROR(loop_->AddFd(cq_fd_, EPOLLIN, [this](uint32_t) {
      ++stats_.fd_wakeups;
      Drain();
    }));
  }
  GENIE_RETURN_IF_ERROR(PostCtrlRecvs());
  spdlog::debug("rank {}: fabric provider {} domain {} mr_mode {:#x} cq {}", options_.rank,
                provider_, info_->domain_attr->name, info_->domain_attr->mr_mode,
                cq_fd_ >= 0 ? "wait fd" : "polled");
  Kick();
  return Status::Ok();
}

Status FabricTransport::PostCtrlRecvs() {
  for (int i = 0; i < kRecvSlots; ++i) {
    Ctx* s = NewSlotCtx();
    if (s == nullptr) return Status::IoError("cannot register control buffers");
    s->kind = kCtrlRecv;
    long rc = fi_recv(ep_, s->buf, sizeof(Header) + kInlineBytes, s->desc, FI_ADDR_UNSPEC, s);
    if (rc != 0) {
      return Status::IoError(fmt::format("rank {}: fi_recv: {}", options_.rank, FiError(rc)));
    }
    ++recv_slots_posted_;
  }
  return Status::Ok();
}

Result<std::string> FabricTransport::Listen() {
  unsigned char addr[256];
  size_t len = sizeof(addr);
  int rc = fi_getname(&ep_->fid, addr, &len);
  if (rc != 0) {
    return Status::IoError(fmt::format("rank {}: fi_getname: {}", options_.rank, FiError(rc)));
  }
  std::string hex = HexEncode(addr, len);
  char text[256];
  size_t tlen = sizeof(text);
  fi_av_straddr(av_, addr, text, &tlen);
  GENIE_ASSIGN_OR_RETURN(std::string watch, ListenWatch());
  spdlog::debug("rank {}: fabric endpoint {} ({}), watch {}", options_.rank, text, hex, watch);
  return hex + "/" + watch;
}

std::string FabricTransport::AddrName(int peer) const {
  if (peer < 0 || static_cast<size_t>(peer) >= addresses_.size()) return "?";
  auto raw = HexDecode(addresses_[static_cast<size_t>(peer)]);
  if (!raw.ok() || av_ == nullptr) return addresses_[static_cast<size_t>(peer)];
  char text[256];
  size_t tlen = sizeof(text);
  fi_av_straddr(av_, raw->data(), text, &tlen);
  return text;
}

Status FabricTransport::Connect(const std::vector<std::string>& addresses,
                                const std::vector<int>& peers) {
  const int n = options_.world_size;
  if (static_cast<int>(addresses.size()) != n) {
    return Status::InvalidArgument(
        fmt::format("{} addresses for a world of {} ranks", addresses.size(), n));
  }
  GENIE_ASSIGN_OR_RETURN(peers_, NormalizePeers(peers, options_.rank, n));
  is_peer_.assign(static_cast<size_t>(n), 0);
  for (int p : peers_) is_peer_[static_cast<size_t>(p)] = 1;
  heartbeats_.liveness().SetPeers(peers_);
  std::vector<std::string> watch;
  for (int p = 0; p < n; ++p) {
    const std::string& a = addresses[static_cast<size_t>(p)];
    const size_t slash = a.find('/');
    addresses_.push_back(a.substr(0, slash));
    watch.push_back(slash == std::string::npos ? "" : a.substr(slash + 1));
  }
  for (int p : peers_) {
    auto raw = HexDecode(addresses_[static_cast<size_t>(p)]);
    if (!raw.ok() || watch[static_cast<size_t>(p)].empty()) {
      return Status::InvalidArgument(fmt::format(
          "rank {}: rank {} published '{}', not a fabric address ({}); are all ranks run with "
          "--transport fabric?",
          options_.rank, p, addresses[static_cast<size_t>(p)],
          raw.ok() ? "no watch address" : raw.status().message()));
    }
    fi_addr_t a = FI_ADDR_UNSPEC;
    int rc = fi_av_insert(av_, raw->data(), 1, &a, 0, nullptr);
    if (rc != 1) {
      return Status::InvalidArgument(
          fmt::format("rank {}: cannot insert rank {}'s address into the address vector: {}",
                      options_.rank, p, rc < 0 ? FiError(rc) : "rejected"));
    }
    fi_addr_[static_cast<size_t>(p)] = a;
  }
  const TimeNs deadline = loop_->Now() + options_.peer_timeout;
  GENIE_RETURN_IF_ERROR(ConnectWatches(watch, deadline));
  heartbeats_.Start();
  for (int p : peers_) SendSimpleCtrl(p, kHello, nullptr, 0);
  const int expected = static_cast<int>(peers_.size());
  while (hellos_ < expected && !completions_.fatal_seen() && loop_->Now() < deadline) {
    loop_->RunOnce(std::min(deadline, loop_->Now() + 10 * kNsPerMs));
  }
  if (completions_.fatal_seen()) {
    heartbeats_.Stop();
    return completions_.first_fatal();
  }
  if (hellos_ < expected) {
    heartbeats_.Stop();
    std::string missing;
    for (int p : peers_) {
      if (!hello_from_[static_cast<size_t>(p)]) {
        missing += fmt::format("{}rank {} ({})", missing.empty() ? "" : ", ", p, AddrName(p));
      }
    }
    return Status::Timeout(fmt::format("rank {}: no hello within {} from {} over fabric '{}'",
                                       options_.rank, FormatDuration(options_.peer_timeout),
                                       missing, provider_));
  }
  for (int p : peers_) counters_[static_cast<size_t>(p)].connections = 1;
  heartbeats_.liveness().StartChecking();
  return Status::Ok();
}

void FabricTransport::CloseAll() {
  CloseWatches();
  if (progress_fd_ >= 0) {
    loop_->RemoveFd(progress_fd_);
    close(progress_fd_);
    progress_fd_ = -1;
  }
  if (cq_fd_ >= 0) {
    loop_->RemoveFd(cq_fd_);
    cq_fd_ = -1;  // owned by the CQ
  }
  if (ep_ != nullptr) fi_close(&ep_->fid);
  ep_ = nullptr;
  for (auto& c : ctx_store_) {
    if (c->mr != nullptr) fi_close(&c->mr->fid);
    c->mr = nullptr;
  }
  for (RecvSlot& r : rx_slots_) {
    if (r.mr != nullptr) fi_close(&r.mr->fid);
    r.mr = nullptr;
  }
  for (Region& r : regions_) {
    if (r.mr != nullptr) fi_close(&r.mr->fid);
    r.mr = nullptr;
  }
  for (fid_mr* mr : slot_mrs_) fi_close(&mr->fid);
  slot_mrs_.clear();
  if (av_ != nullptr) fi_close(&av_->fid);
  av_ = nullptr;
  if (cq_ != nullptr) fi_close(&cq_->fid);
  cq_ = nullptr;
  if (domain_ != nullptr) fi_close(&domain_->fid);
  domain_ = nullptr;
  if (fabric_ != nullptr) fi_close(&fabric_->fid);
  fabric_ = nullptr;
  if (info_ != nullptr) fabric_library::FreeInfo(info_);
  info_ = nullptr;
  for (auto& [p, n] : zero_maps_) munmap(p, n);
  zero_maps_.clear();
  for (auto& [p, n] : scratch_maps_) munmap(p, n);
  scratch_maps_.clear();
}

}  // namespace genie::net
