// Buffer geometry shared by the planner and Layout(): how a collective's working buffer is cut
// into chunks (preferred-dataset-splits) and, inside a chunk, into one block per group member.
// Both sides must agree byte for byte, so every cut goes through these functions. Internal to
// genie_collective. Pure functions; any thread.
#pragma once

#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/collective/schedule.h"

namespace genie::collective::internal {

// The element every reduction adds (float32): parts of a range of whole elements are whole
// elements too.
inline constexpr Bytes kElementBytes = 4;
// Part i of `parts` near-equal parts of r: in whole elements when r.length is a multiple of
// kElementBytes (the first parts get one element more), else in bytes (one byte more).
ByteRange SplitPart(ByteRange r, int parts, int i);
std::vector<ByteRange> SplitAll(ByteRange r, int parts);

// Largest power of two <= n (n >= 1).
int FloorPow2(int n);
// Halving-doubling's member order in the buffer: position -> member. For a power of two it is
// the bit reversal of the position, which makes ASTRA-sim's partner order (distance 1 first for
// reduce-scatter, distance N/2 first for all-gather) exchange contiguous halves. For other N the
// first 2r members (r = N - 2^k) pair up as (2v, 2v+1) and each pair takes one slot.
std::vector<int> HdOrder(int n);

// Places blocks of sizes[member] one after another from `base` in `order` (position -> member);
// returns the block of each member.
std::vector<ByteRange> PlaceBlocks(Bytes base, const std::vector<Bytes>& sizes,
                                   const std::vector<int>& order);

// One chunk's view of the working buffer for a one-dimensional group.
struct ChunkGeometry {
  ByteRange region;                    // all-reduce, broadcast, reduce: the chunk's bytes
  std::vector<ByteRange> blocks;       // per member: its block (RS/AG/gather/scatter) or, for
                                       // all-to-all, this rank's input block destined to it
  std::vector<ByteRange> recv_blocks;  // all-to-all: where the member's data for this rank lands
};

// The algorithm that actually runs `op` when the spec asks for `a` (defined in planner.cc).
Algorithm EffectiveAlgorithm(CollectiveType op, Algorithm a);

// The order members' blocks take in the buffer for `algorithm` (identity but for HD).
std::vector<int> BlockOrder(Algorithm algorithm, int n);

Bytes BufferBytes(const CollectiveSpec& spec, int group_index);
ChunkGeometry Geometry(const CollectiveSpec& spec, int group_index, int chunk);

}  // namespace genie::collective::internal
