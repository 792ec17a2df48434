#include "genie/net/matcher.h"

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

}  // namespace genie::net
