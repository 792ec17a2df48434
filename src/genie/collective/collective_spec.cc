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
    case Algorithm::kNcclDoubleBinaryTree: return "ncclDoubleBinaryTree";
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
      {"nccldoublebinarytree", Algorithm::kNcclDoubleBinaryTree},
      {"nccldbt", Algorithm::kNcclDoubleBinaryTree},
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

const char* CollectiveOpName(CollectiveType type) { return CollectiveTypeName(type); }

bool ParseCollectiveOp(const std::string& text, CollectiveType* out) {
  if (auto type = ParseCollectiveType(text)) {
    *out = *type;
    return true;
  }
  if (Lower(text) == "alltoallv") {  // PyTorch's name for the uneven all-to-all
    *out = CollectiveType::kAllToAll;
    return true;
  }
  return false;
}

}  // namespace genie::collective
