#include "genie/net/matcher.h"

namespace genie::net {

namespace {
constexpr size_t kMaxPooledBuffers = 64;
}

std::vector<unsigned char> MessageMatcher::TakeBuffer(Bytes bytes) {
  // Best fit among pooled buffers whose capacity suffices, so one large buffer is not spent
  // on a small message.
  size_t best = pool_.size();
  for (size_t i = 0; i < pool_.size(); ++i) {
    if (pool_[i].capacity() >= bytes &&
        (best == pool_.size() || pool_[i].capacity() < pool_[best].capacity())) {
      best = i;
    }
  }
  std::vector<unsigned char> buf;
  if (best != pool_.size()) {
    buf = std::move(pool_[best]);
    pool_[best] = std::move(pool_.back());
    pool_.pop_back();
  }
  buf.resize(bytes);
  return buf;
}

void MessageMatcher::ReturnBuffer(std::vector<unsigned char> buf) {
  if (buf.capacity() == 0) return;
  if (pool_.size() >= kMaxPooledBuffers) return;  // bounded; the rest are freed
  pool_.push_back(std::move(buf));
}

}  // namespace genie::net
