// The largest message genie puts on the wire as one frame. A receiver treats a longer frame as
// corruption (a garbage length must not make it wait for, or allocate, terabytes), so nothing
// larger is ever sent: the collective planner cuts longer transfers into slices of at most this
// size (as --slice does), and a point-to-point SEND/RECV above it is refused before it is sent
// (genie inspect lists it as a problem). Constants only; any thread.
#pragma once

#include "genie/common/units.h"

namespace genie {

inline constexpr Bytes kMaxWireMessageBytes = Bytes{1} << 36;  // 64 GiB

}  // namespace genie
