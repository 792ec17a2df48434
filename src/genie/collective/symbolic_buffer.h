// SymbolicBuffer: one rank's buffer as the schedule checker sees it — not bytes but, for every
// run of bytes, which ranks' initial data (rank, offset) has been summed into it, or that it is
// undefined. Reading, writing and summing such runs lets the checker prove a schedule leaves
// every rank's buffer holding exactly what the collective promises, for all ranks at once and
// for any size, without moving a byte. Value types; any thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "genie/collective/buffer_layout.h"
#include "genie/common/units.h"

namespace genie::collective {

// Contents of a run of bytes: byte i holds the sum of terms' (rank, offset + i).
struct Piece {
  Bytes length = 0;
  bool defined = true;
  std::vector<Source> terms;  // sorted
};

// The same terms `d` bytes further on.
std::vector<Source> Shift(const std::vector<Source>& t, Bytes d);
// "{rank 0@0, rank 1@0}" or "undefined data", for error messages.
std::string Terms(const Piece& p);
// Splits two piece lists of equal total length at each other's boundaries and sums them.
std::vector<Piece> Sum(const std::vector<Piece>& a, const std::vector<Piece>& b);

// One rank's buffer as segments of uniform symbolic content; starts undefined.
class SymbolicBuffer {
 public:
  explicit SymbolicBuffer(Bytes size);
  std::vector<Piece> Read(ByteRange r);
  void Write(ByteRange r, const std::vector<Piece>& pieces);

 private:
  struct Seg {
    Bytes end;
    bool defined;
    std::vector<Source> terms;  // source offsets of the segment's first byte
  };
  void SplitAt(Bytes x);
  std::map<Bytes, Seg> segs_;
};

}  // namespace genie::collective
