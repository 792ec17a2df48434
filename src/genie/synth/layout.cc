#include "genie/synth/layout.h"

#include <algorithm>

namespace genie::synth {

const char* DimName(Dim d) {
  switch (d) {
    case Dim::kDp:
      return "dp";
    case Dim::kTp:
      return "tp";
    case Dim::kSp:
      return "sp";
    case Dim::kEp:
      return "ep";
    case Dim::kPp:
      return "pp";
  }
  return "?";
}

int Layout::degree(Dim d) const {
  switch (d) {
    case Dim::kDp:
      return dp;
    case Dim::kTp:
      return tp;
    case Dim::kSp:
      return sp;
    case Dim::kEp:
      return ep;
    case Dim::kPp:
      return pp;
  }
  return 1;
}

Result<std::vector<Dim>> ParseOrder(std::string_view text) {
  std::vector<Dim> order;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view word = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    bool found = false;
    for (int i = 0; i < kNumDims; ++i) {
      Dim d = static_cast<Dim>(i);
      if (word == DimName(d) || (d == Dim::kSp && word == "cp")) {
        if (std::find(order.begin(), order.end(), d) != order.end()) break;
        order.push_back(d);
        found = true;
      }
    }
    if (!found) {
      return Status::InvalidArgument("--rank-order '" + std::string(text) + "': '" +
                                     std::string(word) +
                                     "' is not a dimension or is repeated (want a permutation "
                                     "of dp,tp,sp,ep,pp)");
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (order.size() != kNumDims) {
    return Status::InvalidArgument("--rank-order '" + std::string(text) +
                                   "': name all five of dp,tp,sp,ep,pp");
  }
  return order;
}

Placement::Placement(const Layout& layout, const std::vector<Dim>& order) : order_(order) {
  int stride = 1;
  for (Dim d : order_) {
    degree_[Index(d)] = layout.degree(d);
    stride_[Index(d)] = stride;
    stride *= layout.degree(d);
  }
  world_ = stride;
  int64_t next = 1;
  for (int k = 0; k < kNumGroupKinds; ++k) {
    base_[k] = next;
    int size = GroupSize(static_cast<GroupKind>(k));
    if (size > 1) next += world_ / size;
  }
}

std::vector<Dim> Placement::Varying(GroupKind kind) const {
  switch (kind) {
    case GroupKind::kDp:
      return {Dim::kDp};
    case GroupKind::kTp:
      return {Dim::kTp};
    case GroupKind::kSp:
      return {Dim::kSp};
    case GroupKind::kEp:
      return {Dim::kEp};
    case GroupKind::kDpSp:
      return {Dim::kDp, Dim::kSp};
  }
  return {};
}

int Placement::GroupSize(GroupKind kind) const {
  // Data x sequence parallel exists only when both are > 1 (else it is the dp or the sp group).
  if (kind == GroupKind::kDpSp &&
      (degree_[Index(Dim::kDp)] == 1 || degree_[Index(Dim::kSp)] == 1)) {
    return 1;
  }
  int size = 1;
  for (Dim d : Varying(kind)) size *= degree_[Index(d)];
  return size;
}

int64_t Placement::GroupId(GroupKind kind, int rank) const {
  if (GroupSize(kind) <= 1) return 0;
  std::vector<Dim> varying = Varying(kind);
  int64_t index = 0, mult = 1;
  for (Dim d : order_) {
    if (std::find(varying.begin(), varying.end(), d) != varying.end()) continue;
    index += Coord(rank, d) * mult;
    mult *= degree_[Index(d)];
  }
  return base_[static_cast<int>(kind)] + index;
}

std::vector<int> Placement::Members(GroupKind kind, int rank) const {
  std::vector<int> members = {rank};
  for (Dim d : Varying(kind)) {
    std::vector<int> next;
    for (int r : members) {
      for (int c = 0; c < degree_[Index(d)]; ++c) next.push_back(WithCoord(r, d, c));
    }
    members = std::move(next);
  }
  std::sort(members.begin(), members.end());
  return members;
}

void Placement::WriteCommGroups(std::ostream& out) const {
  out << "{";
  bool first = true;
  for (int k = 0; k < kNumGroupKinds; ++k) {
    auto kind = static_cast<GroupKind>(k);
    if (GroupSize(kind) <= 1) continue;
    std::vector<Dim> varying = Varying(kind);
    // Ranks whose varying coordinates are all 0 lead one group each, in id order.
    std::vector<std::pair<int64_t, int>> leaders;
    for (int r = 0; r < world_; ++r) {
      bool leader = true;
      for (Dim d : varying) leader = leader && Coord(r, d) == 0;
      if (leader) leaders.emplace_back(GroupId(kind, r), r);
    }
    std::sort(leaders.begin(), leaders.end());
    for (const auto& [id, r] : leaders) {
      out << (first ? "" : ", ") << "\"" << id << "\": [";
      first = false;
      std::vector<int> members = Members(kind, r);
      for (size_t i = 0; i < members.size(); ++i) out << (i ? ", " : "") << members[i];
      out << "]";
    }
  }
  out << "}\n";
}

}  // namespace genie::synth
