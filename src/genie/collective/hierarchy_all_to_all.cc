// All-to-all on several dimensions (hierarchy.h).
// ASTRA-sim (Sys::generate_collective for All_to_All) runs an all-to-all of the whole chunk on
// every dimension of more than one member, dimension 0 first, each with that dimension's
// all-to-all-implementation; each phase's messages carry chunk / n_d (Ring and AllToAll keep
// final_data_size = data_size). Moving real data that way means forwarding: before the phase
// on dimension t a rank holds one block per coordinate c (a mixed-radix index like a group
// index), block (source s, destination h) with s_i = c_i, h_i = own digit for i < t and
// s_i = own digit, h_i = c_i for i >= t. The phase sends to member j of dimension t the slab
// c_t = j and receives member j's slab c_t = own digit into its own slab j, every other
// coordinate unchanged. A slab is contiguous only with c_t outermost, so each phase starts by
// copying the blocks it holds into that order (kCopy steps, free in simulation): the slabs to
// send into the staging area X, its own slab straight into the phase's receive area. The
// receive areas alternate between Y and Z, and the last phase's is the output O, which ends
// in source order. Per chunk, after the whole input: X, Y, Z, O.
#include <algorithm>

#include "genie/collective/geometry.h"
#include "genie/collective/hierarchy.h"

namespace genie::collective::internal {

// The dimensions an all-to-all runs a phase on: those of more than one member.
std::vector<size_t> AllToAllPhaseDims(const std::vector<int>& dims) {
  std::vector<size_t> out;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] > 1) out.push_back(d);
  }
  return out;
}

namespace {
// Block (., h) of a chunk of `length` bytes: part h of the chunk, as the flat all-to-all.
Bytes A2aBlock(Bytes length, int n, int h) { return SplitPart({0, length}, n, h).length; }

// Destination of coordinate idx in the blocks held before the phase on dimension t.
int A2aDest(const std::vector<int>& dims, int me, size_t t, int idx) {
  const int s = Stride(dims, t);
  return idx - idx % s + me % s;
}

struct A2aLayout {
  std::vector<ByteRange> block;  // per coordinate
  std::vector<ByteRange> slab;   // per value of the outer coordinate
  Bytes end = 0;
};

// The blocks held before the phase on dimension `stage` (stage = D: after the last), from
// `base`, coordinate `outer` outermost and the others in natural order; slab `skip` left out.
A2aLayout LayOut(const std::vector<int>& dims, int me, size_t stage, Bytes length, size_t outer,
                 int skip, Bytes base) {
  const int n = Stride(dims, dims.size());
  const int so = Stride(dims, outer), no = dims[outer];
  A2aLayout out;
  out.block.assign(static_cast<size_t>(n), {base, 0});
  out.slab.assign(static_cast<size_t>(no), {base, 0});
  Bytes at = base;
  for (int j = 0; j < no; ++j) {
    if (j == skip) continue;
    const Bytes start = at;
    for (int r = 0; r < n / no; ++r) {
      const int idx = r % so + j * so + (r / so) * so * no;
      const Bytes len = A2aBlock(length, n, A2aDest(dims, me, stage, idx));
      out.block[static_cast<size_t>(idx)] = {at, len};
      at += len;
    }
    out.slab[static_cast<size_t>(j)] = {start, at - start};
  }
  out.end = at;
  return out;
}

// Where chunk k's areas sit in member `me`'s buffer, and their sizes.
struct A2aChunk {
  ByteRange input;     // the chunk's input blocks, destination order
  Bytes x = 0;         // staging area base; areas follow back to back
  Bytes size[4] = {};  // X, Y, Z, O
  Bytes area(int a) const {
    Bytes b = x;
    for (int i = 0; i < a; ++i) b += size[i];
    return b;
  }
  Bytes end() const { return area(4); }
};

// Area (1 = Y, 2 = Z, 3 = O) receiving phase q of `phases`.
int A2aRecvArea(size_t q, size_t phases) {
  return q + 1 == phases ? 3 : 1 + static_cast<int>(q % 2);
}

A2aChunk A2aSizes(const Effective& e, int me, ByteRange input, Bytes base) {
  const std::vector<int>& dims = e.spec.options.dims;
  const std::vector<int> mine = Digits(me, dims);
  const std::vector<size_t> ph = AllToAllPhaseDims(dims);
  A2aChunk c;
  c.input = input;
  c.x = base;
  for (size_t q = 0; q < ph.size(); ++q) {
    const size_t t = ph[q];
    const Bytes x = LayOut(dims, me, t, input.length, t, mine[t], 0).end;
    const Bytes r = LayOut(dims, me, t + 1, input.length, t, -1, 0).end;
    c.size[0] = std::max(c.size[0], x);
    Bytes& area = c.size[A2aRecvArea(q, ph.size())];
    area = std::max(area, r);
  }
  return c;
}

A2aChunk A2aChunkAt(const Effective& e, int me, int chunk) {
  const int chunks = std::max(1, e.spec.options.chunks);
  // Chunks come in at most two lengths: size their areas once per length, not per chunk (a
  // lazily planned chunk would otherwise cost chunks x dims x ranks).
  Bytes base = e.spec.size;
  Bytes length[2] = {~Bytes{0}, ~Bytes{0}}, span[2] = {0, 0};
  for (int k = 0; k < chunk; ++k) {
    const ByteRange in = SplitPart({0, e.spec.size}, chunks, k);
    int i = in.length == length[0] ? 0 : in.length == length[1] ? 1 : -1;
    if (i < 0) {
      i = length[0] == ~Bytes{0} ? 0 : 1;
      length[i] = in.length;
      const A2aChunk c = A2aSizes(e, me, in, 0);
      span[i] = c.end();
    }
    base += span[i];
  }
  return A2aSizes(e, me, SplitPart({0, e.spec.size}, chunks, chunk), base);
}

bool MultiDimAllToAll(const Effective& e) {
  return e.spec.type == CollectiveType::kAllToAll && !e.flat && !e.custom;
}

}  // namespace

Bytes EffectiveBufferBytes(const Effective& e) {
  if (!MultiDimAllToAll(e)) return BufferBytes(e.spec, e.index);
  return A2aChunkAt(e, e.index, std::max(1, e.spec.options.chunks) - 1).end();
}

std::vector<AllToAllSlot> AllToAllOutput(const Effective& e, int chunk) {
  const std::vector<int>& dims = e.spec.options.dims;
  const int n = static_cast<int>(e.spec.group.size());
  const A2aChunk c = A2aChunkAt(e, e.index, chunk);
  const std::vector<size_t> ph = AllToAllPhaseDims(dims);
  const size_t last = ph.back();
  const A2aLayout out = LayOut(dims, e.index, last + 1, c.input.length, last, -1,
                               c.area(A2aRecvArea(ph.size() - 1, ph.size())));
  // Source s's block for me sits where its flat geometry puts it: part `me` of its chunk.
  const Bytes from = c.input.offset + SplitPart({0, c.input.length}, n, e.index).offset;
  std::vector<AllToAllSlot> slots;
  for (int s = 0; s < n; ++s) slots.push_back({s, out.block[static_cast<size_t>(s)], from});
  return slots;
}

std::vector<PhaseSpec> AllToAllPhases(const Effective& e, int chunk) {
  const std::vector<int>& dims = e.spec.options.dims;
  const int me = e.index;
  const std::vector<int> mine = Digits(me, dims);
  const std::vector<size_t> ph = AllToAllPhaseDims(dims);
  const A2aChunk c = A2aChunkAt(e, me, chunk);
  const Bytes length = c.input.length;
  const int n = static_cast<int>(e.spec.group.size());
  // What the previous phase left: the input (destination order), then each receive area.
  A2aLayout held;
  for (int idx = 0; idx < n; ++idx) {
    const ByteRange b = SplitPart({0, length}, n, idx);
    held.block.push_back({c.input.offset + b.offset, b.length});
  }
  std::vector<PhaseSpec> out;
  for (size_t q = 0; q < ph.size(); ++q) {
    const size_t t = ph[q];
    const int own = mine[t];
    const A2aLayout send = LayOut(dims, me, t, length, t, own, c.area(0));
    const A2aLayout recv =
        LayOut(dims, me, t + 1, length, t, -1, c.area(A2aRecvArea(q, ph.size())));
    PhaseSpec p = DimPhase(e, t, CollectiveType::kAllToAll);
    // Copies in destination order, merged where both sides run on.
    const int so = Stride(dims, t), no = dims[t];
    for (int j = 0; j < no; ++j) {
      for (int r = 0; r < n / no; ++r) {
        const size_t idx = static_cast<size_t>(r % so + j * so + (r / so) * so * no);
        const ByteRange from = held.block[idx];
        const ByteRange to = j == own ? recv.block[idx] : send.block[idx];
        if (to.length == 0) continue;
        if (!p.copies.empty()) {
          LocalCopy& l = p.copies.back();
          if (l.from.offset + l.from.length == from.offset &&
              l.to.offset + l.to.length == to.offset) {
            l.from.length += from.length;
            l.to.length += to.length;
            continue;
          }
        }
        p.copies.push_back({from, to});
      }
    }
    p.blocks = send.slab;
    p.recv_blocks = recv.slab;
    out.push_back(std::move(p));
    held = recv;
  }
  return out;
}

}  // namespace genie::collective::internal
