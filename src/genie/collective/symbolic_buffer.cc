#include "genie/collective/symbolic_buffer.h"

#include <algorithm>
#include <iterator>

namespace genie::collective {

std::vector<Source> Shift(const std::vector<Source>& t, Bytes d) {
  std::vector<Source> out = t;
  for (Source& s : out) s.offset += d;
  return out;
}

std::string Terms(const Piece& p) {
  if (!p.defined) return "undefined data";
  std::string s = "{";
  for (size_t i = 0; i < p.terms.size(); ++i) {
    if (i == 6) {
      s += ", ... (" + std::to_string(p.terms.size()) + " terms)";
      break;
    }
    if (i > 0) s += ", ";
    s += "rank " + std::to_string(p.terms[i].rank) + "@" + std::to_string(p.terms[i].offset);
  }
  return s + "}";
}

SymbolicBuffer::SymbolicBuffer(Bytes size) {
  if (size > 0) segs_[0] = {size, false, {}};
}

std::vector<Piece> SymbolicBuffer::Read(ByteRange r) {
  std::vector<Piece> out;
  if (r.length == 0) return out;
  SplitAt(r.offset);
  SplitAt(r.offset + r.length);
  for (auto it = segs_.find(r.offset); it != segs_.end() && it->first < r.offset + r.length;
       ++it) {
    out.push_back({it->second.end - it->first, it->second.defined, it->second.terms});
  }
  return out;
}

void SymbolicBuffer::Write(ByteRange r, const std::vector<Piece>& pieces) {
  if (r.length == 0) return;
  SplitAt(r.offset);
  SplitAt(r.offset + r.length);
  segs_.erase(segs_.find(r.offset), segs_.lower_bound(r.offset + r.length));
  Bytes at = r.offset;
  for (const Piece& p : pieces) {
    segs_[at] = {at + p.length, p.defined, p.terms};
    at += p.length;
  }
}

void SymbolicBuffer::SplitAt(Bytes x) {
  auto it = segs_.upper_bound(x);
  if (it == segs_.begin()) return;
  --it;
  if (it->first == x || it->second.end <= x) return;
  Seg right{it->second.end, it->second.defined, Shift(it->second.terms, x - it->first)};
  it->second.end = x;
  segs_[x] = std::move(right);
}

std::vector<Piece> Sum(const std::vector<Piece>& a, const std::vector<Piece>& b) {
  std::vector<Piece> out;
  size_t i = 0, j = 0;
  Bytes ia = 0, jb = 0;  // bytes already consumed of a[i], b[j]
  while (i < a.size() && j < b.size()) {
    const Bytes len = std::min(a[i].length - ia, b[j].length - jb);
    Piece p;
    p.length = len;
    p.defined = a[i].defined && b[j].defined;
    if (p.defined) {
      std::vector<Source> x = Shift(a[i].terms, ia), y = Shift(b[j].terms, jb);
      std::merge(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(p.terms));
    }
    out.push_back(std::move(p));
    ia += len;
    jb += len;
    if (ia == a[i].length) { ++i; ia = 0; }
    if (j < b.size() && jb == b[j].length) { ++j; jb = 0; }
  }
  return out;
}

}  // namespace genie::collective
