#include "genie/collective/collective_spec.h"

#include <cctype>
#include <cstdlib>

namespace genie::collective {

const char* AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kRing: return "ring";
    case Algorithm::kDirect: return "direct";
    case Algorithm::kHalvingDoubling: return "halvingDoubling";
    case Algorithm::kDoubleBinaryTree: return "doubleBinaryTree";
    case Algorithm::kPairwise: return "pairwise";
    case Algorithm::kTree: return "tree";
    case Algorithm::kOneRing: return "oneRing";
    case Algorithm::kOneDirect: return "oneDirect";
    case Algorithm::kOneHalvingDoubling: return "oneHalvingDoubling";
    case Algorithm::kCustom: return "custom";
  }
  return "?";
}

namespace {
std::string Lower(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '_' || c == '-') continue;  // "halving_doubling", "double-binary-tree"
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}
}  // namespace

bool ParseAlgorithm(const std::string& text, Algorithm* out, int* direct_window) {
  const std::string t = Lower(text);
  if (direct_window != nullptr) *direct_window = 0;
  struct Entry { const char* name; Algorithm a; };
  static const Entry kNames[] = {
      {"ring", Algorithm::kRing},
      {"halvingdoubling", Algorithm::kHalvingDoubling},
      {"hd", Algorithm::kHalvingDoubling},
      {"doublebinarytree", Algorithm::kDoubleBinaryTree},
      {"dbt", Algorithm::kDoubleBinaryTree},
      {"pairwise", Algorithm::kPairwise},
      {"pairwiseexchange", Algorithm::kPairwise},
      {"tree", Algorithm::kTree},
      {"onering", Algorithm::kOneRing},
      {"onedirect", Algorithm::kOneDirect},
      {"onehalvingdoubling", Algorithm::kOneHalvingDoubling},
      {"custom", Algorithm::kCustom},
      {"direct", Algorithm::kDirect},
  };
  for (const auto& e : kNames) {
    if (t == e.name) {
      *out = e.a;
      return true;
    }
  }
  // ASTRA-sim's "directK": direct with at most K peers in flight.
  if (t.rfind("direct", 0) == 0 && t.size() > 6) {
    const std::string k = t.substr(6);
    for (char c : k) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
    const int w = std::atoi(k.c_str());
    if (w <= 0) return false;
    *out = Algorithm::kDirect;
    if (direct_window != nullptr) *direct_window = w;
    return true;
  }
  return false;
}

const char* CollectiveOpName(CollectiveType type) {
  switch (type) {
    case CollectiveType::kAllReduce: return "all_reduce";
    case CollectiveType::kReduce: return "reduce";
    case CollectiveType::kAllGather: return "all_gather";
    case CollectiveType::kGather: return "gather";
    case CollectiveType::kScatter: return "scatter";
    case CollectiveType::kBroadcast: return "broadcast";
    case CollectiveType::kAllToAll: return "all_to_all";
    case CollectiveType::kReduceScatter: return "reduce_scatter";
    case CollectiveType::kReduceScatterBlock: return "reduce_scatter_block";
    case CollectiveType::kBarrier: return "barrier";
  }
  return "?";
}

bool ParseCollectiveOp(const std::string& text, CollectiveType* out) {
  const std::string t = Lower(text);
  static const CollectiveType kAll[] = {
      CollectiveType::kAllReduce, CollectiveType::kReduce, CollectiveType::kAllGather,
      CollectiveType::kGather, CollectiveType::kScatter, CollectiveType::kBroadcast,
      CollectiveType::kAllToAll, CollectiveType::kReduceScatter,
      CollectiveType::kReduceScatterBlock, CollectiveType::kBarrier};
  for (CollectiveType c : kAll) {
    if (t == Lower(CollectiveOpName(c))) {
      *out = c;
      return true;
    }
  }
  if (t == "alltoallv") {
    *out = CollectiveType::kAllToAll;
    return true;
  }
  return false;
}

}  // namespace genie::collective
