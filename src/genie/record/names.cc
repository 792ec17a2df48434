#include "genie/record/names.h"

#include <array>
#include <utility>

namespace genie::record {
namespace {

constexpr std::array<std::pair<OpKind, const char*>, 8> kKinds{{
    {OpKind::kInvalid, "invalid"},
    {OpKind::kMetadata, "metadata"},
    {OpKind::kMemLoad, "mem_load"},
    {OpKind::kMemStore, "mem_store"},
    {OpKind::kCompute, "compute"},
    {OpKind::kCollective, "collective"},
    {OpKind::kSend, "send"},
    {OpKind::kRecv, "recv"},
}};

// Indexed by the Chakra CollectiveCommType value.
constexpr std::array<const char*, 10> kCollectives{
    "all_reduce", "reduce",         "all_gather",           "gather",  "scatter",
    "broadcast",  "all_to_all",     "reduce_scatter",       "reduce_scatter_block", "barrier"};

}  // namespace

const char* KindName(OpKind kind) {
  for (const auto& [k, name] : kKinds) {
    if (k == kind) return name;
  }
  return "unknown";
}

const char* CollectiveName(CollectiveType type) {
  auto i = static_cast<size_t>(type);
  return i < kCollectives.size() ? kCollectives[i] : "unknown";
}

std::optional<OpKind> ParseKind(std::string_view name) {
  for (const auto& [k, n] : kKinds) {
    if (name == n) return k;
  }
  return std::nullopt;
}

std::optional<CollectiveType> ParseCollective(std::string_view name) {
  for (size_t i = 0; i < kCollectives.size(); ++i) {
    if (name == kCollectives[i]) return static_cast<CollectiveType>(i);
  }
  return std::nullopt;
}

}  // namespace genie::record
