// libFuzzer target for the frame parser: arbitrary bytes as a stream of frame headers, parsed
// the way a TCP connection does (expectations advance with each accepted frame). The parser
// must reject garbage with a Status — never crash, never accept a frame that breaks the
// connection's expectations.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "genie/net/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace genie::net;
  FrameExpectation e;
  e.job = JobHash("fuzz");
  e.dst = 1;
  e.world_size = 4;
  e.channels = 2;
  e.max_length = 1 << 20;
  // The first byte picks a mode: odd = patch magic, version and job hash to valid values so
  // the fuzzer explores the later checks (a 64-bit hash is beyond its reach otherwise).
  if (size == 0) return 0;
  const bool patch = data[0] & 1;
  ++data;
  --size;
  for (size_t off = 0; off + kFrameHeaderBytes <= size; off += kFrameHeaderBytes) {
    unsigned char frame[kFrameHeaderBytes];
    std::memcpy(frame, data + off, kFrameHeaderBytes);
    if (patch) {
      FrameHeader valid;
      valid.job = e.job;
      unsigned char enc[kFrameHeaderBytes];
      EncodeFrame(valid, enc);
      std::memcpy(frame, enc, 6);        // magic, version
      std::memcpy(frame + 8, enc + 8, 8);  // job
    }
    auto r = ParseFrame(frame, e);
    if (!r.ok()) break;  // the connection would be closed here
    const FrameHeader& h = *r;
    if (h.job != e.job || h.dst != e.dst || h.src >= e.world_size || h.channel >= e.channels ||
        h.seq != e.seq || (h.type != FrameType::kHello && h.length > e.max_length)) {
      __builtin_trap();  // accepted something it must not
    }
    e.src = h.src;  // after the first frame the connection knows its peer and channel
    e.channel = h.channel;
    ++e.seq;
  }
  return 0;
}
