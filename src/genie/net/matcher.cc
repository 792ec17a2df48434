#include "genie/net/matcher.h"

#include <fmt/format.h>

#include <cstring>

namespace genie::net {

namespace {
constexpr size_t kMaxPooledBuffers = 256;
}

MessageMatcher::Buffer MessageMatcher::TakeBuffer(Bytes bytes) {
  // Best fit among pooled buffers whose capacity suffices, so one large buffer is not spent
  // on a small message.
  size_t best = pool_.size();
  for (size_t i = 0; i < pool_.size(); ++i) {
    if (pool_[i].capacity >= bytes &&
        (best == pool_.size() || pool_[i].capacity < pool_[best].capacity)) {
      best = i;
    }
  }
  if (best == pool_.size()) {
    Buffer b;
    b.data.reset(new unsigned char[bytes > 0 ? bytes : 1]);  // default-initialised: no memset
    b.capacity = bytes;
    return b;
  }
  Buffer b = std::move(pool_[best]);
  pool_[best] = std::move(pool_.back());
  pool_.pop_back();
  return b;
}

void MessageMatcher::ReturnBuffer(Buffer buf) {
  if (buf.capacity == 0 || buf.data == nullptr) return;
  if (pool_.size() >= kMaxPooledBuffers) return;  // bounded; the rest are freed
  pool_.push_back(std::move(buf));
}

std::optional<MessageMatcher::Posted> MessageMatcher::TakePosted(const MatchKey& k) {
  auto p = Take(posted_, k);
  if (p) {
    auto it = posted_per_flow_.find(FlowOf(k));
    if (--it->second == 0) posted_per_flow_.erase(it);
  }
  return p;
}

int MessageMatcher::PostedOn(int peer, uint16_t channel) const {
  auto it = posted_per_flow_.find(FlowOf({peer, channel, 0}));
  return it == posted_per_flow_.end() ? 0 : it->second;
}

Status MessageMatcher::SizeMismatch(int self, const MatchKey& k, Bytes sent, Bytes posted) {
  if (k.peer == self) {
    return Status::InvalidArgument(fmt::format(
        "rank {} sent itself {} bytes with tag {} on channel {} but posted a receive of {} "
        "bytes; the schedule is inconsistent",
        self, sent, k.tag, k.channel, posted));
  }
  return Status::InvalidArgument(fmt::format(
      "rank {} sent {} bytes with tag {} on channel {} but rank {} posted a receive of {} bytes; "
      "the ranks' traces or schedules disagree",
      k.peer, sent, k.tag, k.channel, self, posted));
}

Result<std::optional<MessageMatcher::Posted>> MessageMatcher::MatchArrival(int self,
                                                                           const MatchKey& k,
                                                                           Bytes bytes) {
  auto p = TakePosted(k);
  if (p && p->bytes != bytes) return SizeMismatch(self, k, bytes, p->bytes);
  return p;
}

Result<std::optional<MessageMatcher::Arrived>> MessageMatcher::MatchPost(int self,
                                                                         const MatchKey& k,
                                                                         Bytes bytes) {
  auto a = TakeArrived(k);
  if (a && a->bytes != bytes) {
    const Bytes sent = a->bytes;
    ReturnBuffer(std::move(a->buf));
    return SizeMismatch(self, k, sent, bytes);
  }
  return a;
}

Result<std::optional<MessageMatcher::Posted>> MessageMatcher::ArriveWhole(
    int self, const MatchKey& k, const void* data, Bytes bytes, uint64_t remote_data,
    uint64_t handle) {
  auto posted = MatchArrival(self, k, bytes);
  if (!posted.ok()) return posted;
  if (const auto& p = *posted) {
    if (p->into != nullptr && bytes > 0) {
      if (data != nullptr) {
        std::memcpy(p->into, data, bytes);
      } else {
        std::memset(p->into, 0, bytes);
      }
    }
    return posted;
  }
  Arrived a{bytes, data != nullptr, {}, remote_data, handle};
  if (data != nullptr && bytes > 0) {
    a.buf = TakeBuffer(bytes);
    std::memcpy(a.buf.get(), data, bytes);
  }
  AddArrived(k, std::move(a));
  return posted;
}

void MessageMatcher::Deliver(Arrived a, void* into, Bytes bytes) {
  if (into != nullptr && bytes > 0) {
    if (a.has_data) {
      std::memcpy(into, a.buf.get(), bytes);
    } else {
      std::memset(into, 0, bytes);
    }
  }
  ReturnBuffer(std::move(a.buf));
}

}  // namespace genie::net
