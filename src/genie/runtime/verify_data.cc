#include "genie/runtime/verify_data.h"

#include <sys/resource.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <new>

namespace genie::runtime {

// Memory this process may still take: MemAvailable (what the kernel can give without
// swapping), and no more than the address-space limit (ulimit -v) leaves. Where it says so.
std::pair<Bytes, std::string> AvailableMemory() {
  Bytes avail = std::numeric_limits<Bytes>::max();
  std::string source = "no limit known";
  std::ifstream in("/proc/meminfo");
  std::string key;
  Bytes kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") {
      avail = kib * 1024;
      source = "MemAvailable in /proc/meminfo";
      break;
    }
  }
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
      static_cast<Bytes>(as.rlim_cur) < avail) {
    avail = static_cast<Bytes>(as.rlim_cur);
    source = "ulimit -v (RLIMIT_AS)";
  }
  return {avail, source};
}

Status ReserveVerifyData(std::vector<uint8_t>& buffer, Bytes bytes, Bytes need, Bytes held,
                         const std::string& what) {
  auto [avail, source] = AvailableMemory();
  // Unsupported, not InvalidArgument: the workload is fine, this machine cannot hold its data —
  // the rank's own failure (exit 1, docs/cli.md), not bad input (2).
  auto refuse = [&, &avail = avail, &source = source] {
    return Status::Unsupported(
        what + ": --verify needs " + FormatBytes(need) + " of memory for its data and receive "
        "buffers" + (held > 0 ? " (beside " + FormatBytes(held) + " held by collectives in flight)"
                              : std::string()) +
        ", but " + (avail == std::numeric_limits<Bytes>::max()
                        ? std::string("it could not be allocated")
                        : "only " + FormatBytes(avail) + " is available (" + source + ")") +
        "; run without --verify (sizes and timing need no data), or verify a smaller size");
  };
  if (avail != std::numeric_limits<Bytes>::max() && need + held > avail) return refuse();
  try {
    buffer.reserve(bytes);
  } catch (const std::bad_alloc&) {
    avail = std::numeric_limits<Bytes>::max();
    return refuse();
  } catch (const std::length_error&) {
    avail = std::numeric_limits<Bytes>::max();
    return refuse();
  }
  return Status::Ok();
}

void FillInitial(const collective::BufferLayout& layout, std::vector<uint8_t>& buffer) {
  buffer.resize(layout.buffer_bytes);
  for (const auto& region : layout.initial) {
    const auto pattern = collective::ExpectedPattern(region);
    size_t k = 0;
    for (Bytes i = 0; i + 4 <= region.range.length; i += 4) {
      std::memcpy(buffer.data() + region.range.offset + i, &pattern[k], 4);
      if (++k == pattern.size()) k = 0;
    }
  }
}

Status CheckFinal(const std::vector<collective::Region>& expected,
                  const std::vector<uint8_t>& buffer, const std::string& what) {
  for (const auto& region : expected) {
    const auto pattern = collective::ExpectedPattern(region);
    size_t k = 0;
    for (Bytes i = 0; i + 4 <= region.range.length;
         i += 4, k = k + 1 == pattern.size() ? 0 : k + 1) {
      const Bytes at = region.range.offset + i;
      float got;
      std::memcpy(&got, buffer.data() + at, 4);
      const float want = pattern[k];
      if (got != want) {
        return Status::Internal(what + ": byte " + std::to_string(at) + " holds " +
                                std::to_string(got) + ", expected " + std::to_string(want) +
                                " (the sum over " + std::to_string(region.sources.size()) +
                                " contributions)");
      }
    }
  }
  return Status::Ok();
}

uint64_t CountWrong(const std::vector<collective::Region>& expected,
                    const std::vector<uint8_t>& buffer) {
  uint64_t wrong = 0;
  for (const auto& region : expected) {
    const auto pattern = collective::ExpectedPattern(region);
    size_t k = 0;
    for (Bytes i = 0; i + 4 <= region.range.length;
         i += 4, k = k + 1 == pattern.size() ? 0 : k + 1) {
      float got;
      std::memcpy(&got, buffer.data() + region.range.offset + i, 4);
      if (got != pattern[k]) ++wrong;
    }
  }
  return wrong;
}

}  // namespace genie::runtime
