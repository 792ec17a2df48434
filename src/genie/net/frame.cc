#include "genie/net/frame.h"

#include <cstring>

#include <fmt/format.h>

namespace genie::net {

namespace {

template <typename T>
void Put(unsigned char* p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

template <typename T>
T Get(const unsigned char* p) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>(p[i]) << (8 * i));
  return v;
}

}  // namespace

uint64_t JobHash(std::string_view job_id) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : job_id) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

void EncodeFrame(const FrameHeader& h, unsigned char out[kFrameHeaderBytes]) {
  Put<uint32_t>(out + 0, h.magic);
  Put<uint16_t>(out + 4, h.version);
  out[6] = static_cast<unsigned char>(h.type);
  out[7] = h.flags;
  Put<uint64_t>(out + 8, h.job);
  Put<uint32_t>(out + 16, h.src);
  Put<uint32_t>(out + 20, h.dst);
  Put<uint16_t>(out + 24, h.channel);
  Put<uint16_t>(out + 26, 0);
  Put<uint32_t>(out + 28, h.imm);
  Put<uint64_t>(out + 32, h.tag);
  Put<uint64_t>(out + 40, h.seq);
  Put<uint64_t>(out + 48, h.length);
  Put<uint64_t>(out + 56, h.offset);
}

FrameHeader DecodeFrame(const unsigned char in[kFrameHeaderBytes]) {
  FrameHeader h;
  h.magic = Get<uint32_t>(in + 0);
  h.version = Get<uint16_t>(in + 4);
  h.type = static_cast<FrameType>(in[6]);
  h.flags = in[7];
  h.job = Get<uint64_t>(in + 8);
  h.src = Get<uint32_t>(in + 16);
  h.dst = Get<uint32_t>(in + 20);
  h.channel = Get<uint16_t>(in + 24);
  h.imm = Get<uint32_t>(in + 28);
  h.tag = Get<uint64_t>(in + 32);
  h.seq = Get<uint64_t>(in + 40);
  h.length = Get<uint64_t>(in + 48);
  h.offset = Get<uint64_t>(in + 56);
  return h;
}

Result<FrameHeader> ParseFrame(const unsigned char in[kFrameHeaderBytes],
                               const FrameExpectation& expect) {
  FrameHeader h = DecodeFrame(in);
  if (h.magic != kFrameMagic) {
    return Status::Corruption(fmt::format("bad magic 0x{:08x} (not a genie peer?)", h.magic));
  }
  if (h.version != kFrameVersion) {
    return Status::Unsupported(fmt::format(
        "frame version {} but this genie speaks {}; run the same genie build on every rank",
        h.version, kFrameVersion));
  }
  if (h.type < FrameType::kHello || h.type > FrameType::kAbort) {
    return Status::Corruption(fmt::format("unknown frame type {}", static_cast<int>(h.type)));
  }
  if (h.job != expect.job) {
    return Status::InvalidArgument(fmt::format(
        "job id hash {:016x} but this job is {:016x} (a rank of another job?)", h.job, expect.job));
  }
  if (h.dst != expect.dst) {
    return Status::Corruption(fmt::format("frame for rank {} arrived at rank {}", h.dst, expect.dst));
  }
  if (h.src >= expect.world_size) {
    return Status::Corruption(
        fmt::format("source rank {} outside the world of {} ranks", h.src, expect.world_size));
  }
  if (expect.src >= 0 && h.src != static_cast<uint64_t>(expect.src)) {
    return Status::Corruption(
        fmt::format("frame claims source rank {} on rank {}'s connection", h.src, expect.src));
  }
  if (h.channel >= expect.channels) {
    return Status::Corruption(
        fmt::format("channel {} but the job uses {} channels", h.channel, expect.channels));
  }
  if (expect.channel >= 0 && h.channel != static_cast<uint64_t>(expect.channel)) {
    return Status::Corruption(
        fmt::format("frame for channel {} on channel {}'s connection", h.channel, expect.channel));
  }
  if (h.seq != expect.seq) {
    return Status::Corruption(
        fmt::format("sequence {} but expected {} (lost or duplicated frame)", h.seq, expect.seq));
  }
  uint64_t max = h.type == FrameType::kHello   ? kMaxJobIdBytes
                 : h.type == FrameType::kAbort ? kMaxAbortBytes
                                               : expect.max_length;
  if ((h.type == FrameType::kHelloAck || h.type == FrameType::kBye ||
       h.type == FrameType::kHeartbeat) &&
      h.length != 0) {
    max = 0;
  }
  if (h.length > max) {
    return Status::Corruption(fmt::format("length {} exceeds the limit of {} bytes for this frame",
                                          h.length, max));
  }
  if (h.type == FrameType::kHello && h.offset != expect.world_size) {
    return Status::InvalidArgument(fmt::format(
        "peer believes the world has {} ranks but it has {}", h.offset, expect.world_size));
  }
  return h;
}

}  // namespace genie::net
