// BufferLayout: what each rank's working buffer holds before a collective and must hold after
// it, as byte ranges whose contents are sums of ranks' initial data. It is the contract between
// the planner (which lays chunks and blocks out, see geometry.h), the symbolic checker, and the
// runtime's real-data verification (--verify), which fills every rank's buffer with
// InitialElement() values and compares the result with ExpectedElement(). Value types; any
// thread.
//
// Working buffer per collective (S = CollectiveSpec::size, N ranks, C chunks; blocks are laid
// out chunk-major so each chunk's traffic is contiguous):
//   all-reduce, reduce, broadcast: S bytes.  reduce-scatter, scatter: S bytes, N blocks per chunk.
//   all-gather, gather: N*S bytes (S per rank).  all-to-all: S bytes of input followed by the
//   output slots (member j's block for this rank); on several dimensions, per chunk, staging
//   areas and then the output slots of every member, this rank included (hierarchy.cc).
//   barrier: 0 bytes.
#pragma once

#include <array>
#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/collective/schedule.h"

namespace genie::collective {

// `rank`'s initial data, starting at byte `offset` of its buffer.
struct Source {
  int rank = -1;  // global rank
  Bytes offset = 0;
  bool operator==(const Source&) const = default;
  bool operator<(const Source& o) const {
    return rank != o.rank ? rank < o.rank : offset < o.offset;
  }
};

// Byte range.offset + i holds the sum over sources s of (s.rank's initial byte s.offset + i).
struct Region {
  ByteRange range;
  std::vector<Source> sources;  // sorted
};

struct BufferLayout {
  Bytes buffer_bytes = 0;
  std::vector<Region> initial;  // what this rank provides (always its own data); rest undefined
  std::vector<Region> final;    // what it must hold at the end; bytes not listed are don't-care
};

BufferLayout Layout(const CollectiveSpec& spec, int group_index);

// Small integers, exact in float even summed over 4,096 ranks: the runtime fills 4-byte float
// elements with InitialElement(rank, byte offset of the element) and checks each element of a
// final region against ExpectedElement. Regions of 4-byte-aligned collectives are aligned.
float InitialElement(int rank, Bytes byte_offset);
float ExpectedElement(const Region& region, Bytes byte_offset);

// InitialElement repeats every kElementPeriod elements, so a region's expected elements do
// too: pattern[k] is the element at byte range.offset + 4 * (k + j * kElementPeriod) for any
// j. Filling or checking a region with it costs one lookup per element, not one per source
// (a 4,096-rank all-reduce would otherwise sum 4,096 terms per element).
inline constexpr int kElementPeriod = 13;
std::array<float, kElementPeriod> ExpectedPattern(const Region& region);

}  // namespace genie::collective
