// FabricTransport: the Transport over libfabric reliable-datagram endpoints (FI_EP_RDM), so
// the same rank code runs on RDMA fabrics — verbs;ofi_rxm (RoCE, InfiniBand), efa, cxi
// (Slingshot) — and, here, on tcp;ofi_rxm over the kernel's TCP.
//
// One endpoint per rank, one address vector with every rank, one completion queue
// (FI_CQ_FORMAT_TAGGED) driven from the rank's EventLoop: through the CQ's wait fd
// (FI_WAIT_FD + fi_trywait) when the provider has one, else by polling it every loop turn
// (one core per rank; see docs/fabric.md). While operations are in flight the CQ is also
// read 1 ms after the loop went to sleep, since ofi_rxm does not signal all the progress it
// needs (connection setup) on that fd; and when the loop may spin (the machine's ranks fit on
// its cores) the CQ is polled for a while after each completion instead of blocking.
//
// Messages. Every message starts with a small control message (untagged fi_send into a ring
// of pre-posted receive slots) carrying (channel, tag, bytes, remote_data, sequence number),
// the job id hash and the sender's rank. Matching a receive to a message is done here, in
// software, by net::MessageMatcher on that header — so unexpected messages are counted, and a
// size mismatch is found before any payload lands and worded as over TCP (both ranks, tag,
// channel, both sizes). Payloads up to kInlineBytes travel inside the header; larger ones
// travel separately, straight into a buffer the receiver offered with a clear-to-send (a
// receive slot: address, key, slot id), as NCCL's network transports do:
//  * the receive was posted first (the common case): the receiver offers its buffer at once
//    (kCtsAhead, keyed by channel and tag); the sender, finding an offer for its message's key,
//    sends the header and the payload back to back — one way, no round trip. Offers and
//    messages pair up in order per (peer, channel, tag) on both sides, as the matcher does.
//  * the message came first: the header waits in the matcher; the receiver answers it with a
//    clear-to-send (kCts, keyed by the message's sequence number) when its receive is posted
//    — or, if none is posted once the loop ran its queued work, into a pooled buffer (filler:
//    scratch) while such buffers hold under 64 MiB, so that the sender's send completes as
//    over TCP, then copied when the receive comes.
//  * credits (what NCCL's receiver-posted step buffers do): once a peer's message came first,
//    the receiver keeps a window of slots on offer to that peer (kCredit, at most 4, sized to
//    its messages; real-data slots within 32 MiB of pooled buffers, filler-only ones in
//    scratch), so that its next messages without an offer go one way at once, header and
//    payload, into a credit: matched like an early payload, copied into the receive when it
//    is posted, and the credit renewed if its message did come first; a sender uses credits
//    only while that receiver's offers do not keep crossing its messages (crossings_). An
//    offer that such a message crossed is withdrawn by
//    the receiver and dropped by the sender, which tells which message an offer is for from
//    the count of its headers the receiver had (in every offer).
//  Two-sided mode (default): the slot is a posted fi_trecv with tag (sender rank, slot id) and
//  the payload an fi_tsend; the receive is always posted before the payload leaves, so ofi_rxm
//  over tcp moves it eagerly into the caller's buffer (genie raises rxm's eager limit there,
//  FI_OFI_RXM_EAGER_LIMIT, unless set) instead of its read rendezvous (three more trips).
//  RMA mode (--fabric-rma, what NCCL's RDMA transport does): the slot is a registered buffer;
//  the sender fi_writedata()s the payload with the slot id as remote CQ data, and the receive
//  completes on that FI_REMOTE_CQ_DATA completion (and its header).
// Channels are part of the match key only (one endpoint per rank; the provider decides how
// many connections it opens underneath).
//
// One-sided: RegisterRegion registers memory for remote writes (FI_REMOTE_WRITE) and returns
// its key; PostWrite fi_writedata()s into (key, offset) and then sends a write notice, which
// the provider orders after the write (FI_ORDER_SAW is required); OnRemoteWrite fires on the
// notice. Providers without FI_ORDER_SAW (efa, shm) refuse PostWrite; --fabric-rma, whose
// receives complete on the write's own remote CQ data, works without it.
//
// A crashed rank is named at once through a watch connection (fabric_watch.cc): one idle TCP
// connection per peer pair that ends with the peer's process, since ofi_rxm reconnects to a
// dead peer forever without an error on the CQ. Listen() returns "<hex fi_getname>/<ip:port of
// the watch listener>".
//
// Liveness, job id, abort and goodbye are control messages too: a hello to every peer named in
// Connect() (job id hash and world size checked; Connect returns when every peer's hello came;
// a message from a rank outside the peers is rejected),
// heartbeats from PeerLiveness (net/liveness.h) to peers nothing was sent to recently, a peer
// silent for peer_timeout is fatal, and a send error on the CQ (fi_cq_readerr) names the
// peer as lost. Abort sends the reason; Shutdown sends a goodbye and waits for every peer's.
//
// Memory registration follows the provider's mr_mode: with FI_MR_LOCAL every buffer handed
// to the provider is registered for the operation's lifetime (slots once, at start); with
// FI_MR_VIRT_ADDR remote addresses are virtual addresses; with FI_MR_PROV_KEY keys come from
// the provider. Filler payloads (no data) are sent from a read-only zero mapping; discarded
// payloads land in a scratch range: one small memfd tile mapped over and over, so that the
// provider's copy into it stays in cache.
//
// Threading: loop thread only. The EventLoop must outlive the transport.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "genie/loop/event_loop.h"
#include "genie/net/completion_queue.h"
#include "genie/net/heartbeats.h"
#include "genie/net/matcher.h"
#include "genie/net/transport.h"

struct fi_info;
struct fid_fabric;
struct fid_domain;
struct fid_ep;
struct fid_av;
struct fid_cq;
struct fid_mr;
struct fi_cq_tagged_entry;

namespace genie::net {

class FabricTransport final : public Transport {
 public:
  // Payloads up to this size travel inside their header message (one message, one copy).
  static constexpr Bytes kInlineBytes = 4096;

  // Opens the fabric, domain, endpoint, address vector and completion queue; a provider that
  // lacks something needed is an error naming it (e.g. "lacks FI_RMA, needed by --fabric-rma").
  static Result<std::unique_ptr<FabricTransport>> Create(loop::EventLoop* loop,
                                                         const TransportOptions& options);
  ~FabricTransport() override;

  std::string name() const override;
  void SetEvents(TransportEvents* events) override { completions_.SetEvents(events); }
  Result<std::string> Listen() override;
  Status Connect(const std::vector<std::string>& addresses, const std::vector<int>& peers) override;
  void PostSend(const SendOp& op) override;
  void PostRecv(const RecvOp& op) override;
  Result<uint64_t> RegisterRegion(void* base, Bytes bytes) override;
  void PostWrite(const WriteOp& op) override;
  Status Shutdown(TimeNs timeout) override;
  void Abort(const std::string& reason, TimeNs linger) override;
  const PeerCounters& counters(int peer) const override { return counters_.at(peer); }
  size_t unexpected_messages() const override { return matcher_.arrived_count(); }

  // True when the CQ is waited on through its fd; false when it is polled every loop turn.
  bool uses_wait_fd() const { return cq_fd_ >= 0; }
  const std::string& provider() const { return provider_; }
  // Control messages refused because their header was wrong (another job, garbage).
  uint64_t rejected_messages() const { return rejected_; }
  // How the CQ was driven (for measurements; GENIE_FABRIC_STATS=1 logs them at the end).
  struct DriveStats {
    uint64_t drains = 0;          // Drain() calls
    uint64_t cq_reads = 0;        // fi_cq_read calls
    uint64_t empty_reads = 0;     // ... that returned nothing
    uint64_t completions = 0;     // CQ entries handled
    uint64_t fd_wakeups = 0;      // Drain() from the CQ's wait fd
    uint64_t timer_wakeups = 0;   // Drain() from the progress timer
    uint64_t timer_useful = 0;    // ... that found completions
    uint64_t trywait_busy = 0;    // fi_trywait said: read again before blocking
    uint64_t spins = 0;           // Drain() that polled on instead of blocking (spin_ns_)
    uint64_t offers = 0;          // receives offered ahead of their header (kCtsAhead)
    uint64_t sent_on_offer = 0;   // payloads sent at once into an offer
    uint64_t sent_crossed = 0;    // ... into an offer that crossed the header
    uint64_t cts_replies = 0;     // clear-to-sends answering a header (the message came first)
    uint64_t credits = 0;         // credit slots offered (kCredit)
    uint64_t sent_on_credit = 0;  // payloads sent at once into a credit
    uint64_t offers_dropped = 0;  // offers crossed by a message sent into a credit
  };
  const DriveStats& drive_stats() const { return stats_; }

  // Private parts shared with fabric_*.cc (defined in fabric_internal.h).
  struct Ctx;
  struct Header;
  struct RecvSlot;
  struct AheadCts;
  struct PendingRma;
  struct PayloadSend;
  struct Early;

 private:
  FabricTransport(loop::EventLoop* loop, const TransportOptions& options);

  // fabric_setup.cc: getinfo, open, address exchange, hello.
  Status Open();
  Status PostCtrlRecvs();
  void CloseAll();

  // fabric_progress.cc, fabric_post.cc, fabric_match.cc: the CQ, posting, matching.
  Ctx* NewCtx(int kind);
  // A payload send's or write's context with its local descriptor for `src`; nullptr (after
  // ReportFatal) when the buffer cannot be registered.
  Ctx* NewPayloadCtx(int kind, int peer, int channel, uint64_t cookie, const void* src, Bytes bytes,
                     uint64_t access, void** desc);
  void FreeCtx(Ctx* c);
  Ctx* NewSlotCtx();  // a control send slot (header + inline payload)
  void SendCtrl(int peer, Ctx* slot, Bytes payload_bytes);
  void SendSimpleCtrl(int peer, int type, const void* text, Bytes text_bytes);
  // Calls `post` now, or queues it when the provider is busy (-FI_EAGAIN) or others wait.
  template <typename F>
  void Submit(F post, int peer, const char* what);
  bool CheckPeer(int peer, const char* op);  // a peer to send to; else reports why not
  void RetryBacklog();
  void Kick();  // makes sure the CQ is read on the next loop turn
  void Drain();
  bool Busy() const;        // operations in flight that need the CQ read
  void ArmProgressTimer();  // re-read the CQ in 1 ms (see progress_fd_)
  void OnCompletion(const fi_cq_tagged_entry& e);
  void OnCqError();
  void OnCtrl(Ctx* slot, Bytes len);
  void OnData(int peer, const Header& h, const unsigned char* inline_data);
  // Receives payload `seq` of `peer` into `into` (nullptr: scratch): offers a slot with a
  // clear-to-send; completes the caller's receive `cookie`, or, with early >= 0, lands Early
  // entry `early`.
  void StartPayloadRecv(int peer, uint16_t channel, uint64_t seq, void* into, Bytes bytes,
                        uint64_t cookie, uint64_t remote_data, int early = -1);
  // A receive slot for `into` (nullptr: scratch) with its fi_trecv posted or its buffer
  // registered; -1 after ReportFatal. *addr and *key go into the clear-to-send.
  int OpenSlot(int peer, uint16_t channel, void* into, Bytes bytes, uint64_t cookie,
               uint64_t remote_data, int early, bool ahead, uint64_t* addr, uint64_t* key);
  // A receive posted before its header: offer its buffer now (kCtsAhead); false: not offered.
  bool OfferAhead(const MatchKey& k, void* into, Bytes bytes, uint64_t cookie);
  void SlotLanded(uint32_t id);  // its payload is in
  void PayloadLanded(int peer, uint16_t channel, uint64_t cookie, Bytes bytes, uint64_t remote_data,
                     int early);
  // A fresh Early entry (reused from the free list) for message `seq` of `peer`; its id.
  int NewEarly(int peer, uint64_t seq, uint16_t channel, Bytes bytes, uint64_t remote_data,
               bool has_data);
  void DeliverEarly(int early);  // landed and claimed: copy out, complete, free
  void TakeEarly();              // headers still unmatched: take their payloads (Early)
  void OnCts(int peer, const Header& h);
  void OnCtsAhead(int peer, const Header& h);
  // Credit window (receiver): keeps CreditSlots() slots of at least `bytes` on offer to `peer`;
  // a message sent into one is matched and handed to its receive (copied) like an Early one.
  void OfferCredits(int peer, Bytes bytes, bool data);
  void OnCreditData(int peer, const Header& h);
  void CancelSlot(uint32_t id);  // an offered slot whose message went into a credit instead
  void CancelledSegmentDone(uint32_t id);  // one of its segments withdrawn: freed after the last
  // Tagged mode: posts slot `id`'s next segment receives, up to kSegmentWindow at a time.
  void PostSegments(uint32_t id);
  // Sender: a credit offered by `peer`; forgets messages sent into credits that the receiver
  // has the headers of (`seen`: the next sequence number it expects).
  void OnCredit(int peer, const Header& h);
  // Sends a payload into the receiver's slot of `slot_bytes` (fi_tsend or fi_writedata of each
  // segment).
  void SendPayload(int peer, const PendingRma& p, uint64_t slot, Bytes slot_bytes, uint64_t addr,
                   uint64_t key);
  void PostSendSegments(int send);  // its next segments, up to kSegmentWindow in flight
  void OnPayloadSent(Ctx* c);       // one segment sent
  // A segment of receive slot `id` landed: `len` bytes (0: unknown, RMA mode).
  void SegmentLanded(uint32_t id, Bytes len);
  void OnRemoteCqData(uint64_t data, Bytes len);
  void DeliverToSelf(const SendOp& op, uint16_t channel);
  const void* Zeros(Bytes bytes);
  void* Scratch(Bytes bytes);
  // A descriptor for `buf` when the provider needs local registration (FI_MR_LOCAL), stored in
  // the context to close at completion; nullptr otherwise.
  Status LocalDesc(Ctx* c, const void* buf, Bytes bytes, uint64_t access, void** desc);

  // fabric_watch.cc: one idle TCP connection per peer pair that ends with the peer's process.
  Result<std::string> ListenWatch();
  Status ConnectWatches(const std::vector<std::string>& watch, TimeNs deadline);  // peers_
  void OnWatchEnded(int peer);
  void CloseWatches();

  // fabric_teardown.cc: liveness hooks, lost peers, Shutdown, Abort (net/heartbeats.h and
  // net/teardown.h: the parts shared with TCP).
  PeerLiveness::Link LinkTo(int peer) const;
  void GiveUp(int peer);  // found silent
  void PeerLost(int peer, const std::string& why);
  void ReportFatal(Status status) { completions_.ReportFatal(std::move(status)); }
  void Flush();  // drives the loop until every posted send completed (bounded by the caller)
  std::string AddrName(int peer) const;

  // Completions and errors, delivered from the loop (net/completion_queue.h).
  void Complete(const Completion& c) { completions_.Complete(c); }

  loop::EventLoop* loop_;
  TransportOptions options_;
  uint64_t job_hash_;
  std::string provider_;

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_ep* ep_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  int cq_fd_ = -1;
  bool mr_local_ = false, mr_virt_addr_ = false, mr_prov_key_ = false;
  bool has_rma_ = false;
  bool saw_order_ = false;  // a send after a write arrives after it (PostWrite's notice)
  size_t cq_data_size_ = 0;
  uint64_t next_key_ = 1;

  std::vector<uint64_t> fi_addr_;  // fi_addr_t by rank
  std::vector<std::string> addresses_;
  std::vector<PeerCounters> counters_;
  std::vector<uint64_t> send_seq_;  // per peer: sequence number of the next message
  std::vector<char> hello_from_, bye_from_, lost_;
  int hellos_ = 0;
  // Connect()'s peers (ascending) and, by rank, whether one is: only they get an address
  // vector entry, a watch connection, hellos, heartbeats, goodbyes.
  std::vector<int> peers_;
  std::vector<char> is_peer_;

  // Contexts: stable addresses, reused through a free list.
  std::vector<std::unique_ptr<Ctx>> ctx_store_;
  std::vector<Ctx*> free_ctx_;
  std::vector<std::unique_ptr<Ctx>> slot_store_;  // control send slots
  std::vector<Ctx*> free_slots_;
  std::vector<std::unique_ptr<unsigned char[]>> slot_mem_;
  std::vector<fid_mr*> slot_mrs_;
  int recv_slots_posted_ = 0;
  int sends_in_flight_ = 0;
  int aborts_in_flight_ = 0;
  int recvs_in_flight_ = 0;  // payload receives posted (tagged or RMA), not landed yet
  // A one-shot timerfd re-reading the CQ 1 ms after the loop was allowed to block while
  // operations are in flight: ofi_rxm does not signal every event it needs progress for
  // (connection setup, rendezvous) on the CQ's wait fd.
  int progress_fd_ = -1;
  bool progress_armed_ = false;
  uint64_t rejected_ = 0;  // control messages from strangers (another job, garbage)
  DriveStats stats_;
  // Polling the CQ after a completion instead of blocking (Drain): for how long (0: never;
  // CqSpinNs when the loop may spin), and when a completion was last seen.
  TimeNs spin_ns_ = 0;
  TimeNs last_completion_ = 0;
  uint64_t completions_seen_ = 0;

  std::deque<std::pair<std::function<long()>, int>> backlog_;  // (post, peer)
  bool kick_posted_ = false;

  MessageMatcher matcher_;
  std::vector<std::unique_ptr<Early>> early_;  // by id, reused via free list
  std::vector<int> free_early_;
  Bytes unexpected_bytes_ = 0;  // real-data payloads held in Early buffers (kUnexpectedCap)
  Bytes credit_bytes_ = 0;      // credit buffers on offer or holding a payload (kCreditCap)
  // Unmatched headers whose payload TakeEarly may take, and which it took: RmaKey(peer, seq).
  struct EarlyCandidate {
    int peer;
    uint16_t channel;
    uint64_t seq;
    Bytes bytes;
    uint64_t remote_data;
    bool has_data;
  };
  std::vector<EarlyCandidate> early_candidates_;
  std::unordered_map<uint64_t, int> early_pending_;  // candidate -> 1 while unclaimed
  std::unordered_map<uint64_t, int> early_by_seq_;   // taken -> Early id
  bool early_task_posted_ = false;
  std::vector<RecvSlot> rx_slots_;  // by slot id, reused via free list
  std::vector<uint32_t> free_rx_slots_;
  std::unordered_map<uint64_t, PendingRma> pending_rma_;  // (peer, seq) -> send awaiting CTS
  std::vector<PayloadSend> sends_;                         // by id, reused via free list
  std::vector<int> free_sends_;
  // Receiver: receives offered ahead (kCtsAhead) whose header has not come, per key in post
  // order: (cookie, slot id). Sender: offers not used yet, and messages sent without an offer
  // (awaiting a clear-to-send, or sent into a credit; their sequence numbers) that an offer
  // may still be for, per (receiver, channel, tag) in order.
  std::unordered_map<MatchKey, std::deque<std::pair<uint64_t, uint32_t>>, MatchKeyHash>
      ahead_recvs_;
  std::unordered_map<MatchKey, std::deque<AheadCts>, MatchKeyHash> ahead_cts_;
  std::unordered_map<MatchKey, std::deque<uint64_t>, MatchKeyHash> unresolved_;
  // Credit window. Receiver, by peer: data headers seen (next sequence number expected), the
  // credit slots on offer, and their buffers by slot id. Sender, by receiver: its credits
  // not used yet, and the messages sent into credits, in order (pruned from unresolved_ once
  // the receiver has their headers).
  std::vector<uint64_t> headers_seen_;
  std::vector<std::vector<uint32_t>> credit_slots_;
  std::unordered_map<uint32_t, MessageMatcher::Buffer> credit_bufs_;
  std::vector<std::deque<AheadCts>> credits_;
  // Sender, by receiver: offers that crossed a message (the receiver posts in time, so a
  // credit would only add a copy) minus clear-to-sends answering one (it does not); credits
  // are used while this is not positive.
  std::vector<int> crossings_;
  std::vector<std::deque<std::pair<MatchKey, uint64_t>>> credit_sent_;
  struct Region {
    unsigned char* base;
    Bytes bytes;
    fid_mr* mr;
  };
  std::vector<Region> regions_;
  std::vector<std::pair<void*, Bytes>> zero_maps_, scratch_maps_;  // the last is current

  bool shutting_down_ = false;

  CompletionQueue completions_;
  Heartbeats heartbeats_;  // after completions_, which it reports to
  int watch_listen_fd_ = -1;
  std::vector<int> watch_fd_;    // by peer rank
  std::shared_ptr<bool> alive_;  // tasks posted to the loop check it: the transport may be gone
};

}  // namespace genie::net
