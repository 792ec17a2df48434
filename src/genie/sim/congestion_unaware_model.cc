#include "genie/sim/congestion_unaware_model.h"

namespace genie::sim {

void CongestionUnawareModel::Transmit(int src, int dst, Bytes bytes,
                                      std::function<void()> delivered) {
  queue_->After(topology_->UnawareDelay(src, dst, bytes), std::move(delivered));
}

}  // namespace genie::sim
