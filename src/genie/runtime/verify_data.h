// --verify's real data, one collective buffer at a time: the values each rank's initial regions
// start with, the check that the final regions hold exactly the sums the collective promises
// (collective/buffer_layout.h says which), and the memory a buffer needs — asked of the machine
// before a byte is allocated, so a buffer it cannot hold is refused with a message, never a
// std::bad_alloc or the OOM killer mid-run. Used by the Executor; pure functions but for
// AvailableMemory (reads /proc); any thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "genie/collective/buffer_layout.h"
#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::runtime {

// Memory this process may still take, and where that figure comes from.
std::pair<Bytes, std::string> AvailableMemory();

// Reserves `bytes` in `buffer`, unless `need` (what the collective uses in all) beside `held`
// (other buffers in flight) is more than the machine has; `what` names the collective.
Status ReserveVerifyData(std::vector<uint8_t>& buffer, Bytes bytes, Bytes need, Bytes held,
                         const std::string& what);

// Sizes `buffer` to the layout and writes its initial regions. The rest is left as it is: a
// reused buffer is not cleared, so stale bytes make a planner bug fail, not hide.
void FillInitial(const collective::BufferLayout& layout, std::vector<uint8_t>& buffer);

// OK when every final region holds its expected values; otherwise the first wrong byte, after
// `what`.
Status CheckFinal(const std::vector<collective::Region>& expected,
                  const std::vector<uint8_t>& buffer, const std::string& what);

// How many 4-byte elements of the final regions differ from their expected values (what
// `genie bench` reports as #wrong, where --verify stops at the first).
uint64_t CountWrong(const std::vector<collective::Region>& expected,
                    const std::vector<uint8_t>& buffer);

}  // namespace genie::runtime
