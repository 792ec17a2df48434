#include "genie/trace/comm_groups.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "genie/common/input_file.h"

namespace genie::trace {

Result<int64_t> ParsePgName(std::string_view pg_name) {
  std::string_view s = pg_name;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return kWorldGroupId;
  // Digits, optionally followed by ".0..." (PyTorch writes "1.0").
  size_t i = 0;
  int64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (v > (INT64_MAX - 9) / 10) break;
    v = v * 10 + (s[i] - '0');
    ++i;
  }
  bool ok = i > 0;
  if (ok && i < s.size()) {
    ok = s[i] == '.' && i + 1 < s.size();
    for (size_t j = i + 1; ok && j < s.size(); ++j) ok = s[j] == '0';
  }
  if (!ok) {
    return Status::InvalidArgument("pg_name '" + std::string(pg_name) +
                                   "' is not a process-group number (expected e.g. \"1\", "
                                   "\"1.0\", or \"\" for the world)");
  }
  return v;
}

Result<CommGroups> CommGroups::Parse(std::string_view json_text, const std::string& source) {
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::InvalidArgument(source + ": not valid JSON (a comm-group file is "
                                   "{\"<group id>\": [ranks...]})");
  }
  if (!j.is_object()) {
    return Status::InvalidArgument(source + ": top level must be an object "
                                   "{\"<group id>\": [ranks...]}");
  }
  CommGroups groups;
  for (auto it = j.begin(); it != j.end(); ++it) {
    auto id = ParsePgName(it.key());
    if (!id.ok() || *id == kWorldGroupId) {
      return Status::InvalidArgument(source + ": group key '" + it.key() +
                                     "' is not a group number");
    }
    if (!it.value().is_array()) {
      return Status::InvalidArgument(source + ": group " + it.key() + " must be a list of ranks");
    }
    std::vector<int> ranks;
    for (const auto& r : it.value()) {
      if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > INT32_MAX) {
        // A list or object is named, not printed: printing recurses once per nesting level.
        const std::string what = r.is_array()    ? "a list"
                                 : r.is_object() ? "an object"
                                                 : "'" + r.dump() + "'";
        return Status::InvalidArgument(source + ": group " + it.key() + " has " + what +
                                       ", which is not a rank number");
      }
      ranks.push_back(r.get<int>());
    }
    if (ranks.empty()) {
      return Status::InvalidArgument(source + ": group " + it.key() + " has no ranks");
    }
    groups.Add(*id, std::move(ranks));
  }
  return groups;
}

Result<CommGroups> CommGroups::Load(const std::string& path) {
  GENIE_RETURN_IF_ERROR(CheckInputFile(path, "comm-group file"));
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot open comm-group file");
  std::stringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), path);
}

const std::vector<int>* CommGroups::Find(int64_t group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? nullptr : &it->second;
}

void CommGroups::Add(int64_t group, std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  groups_[group] = std::move(ranks);
}

Result<std::vector<int>> CommGroups::Resolve(int64_t group, int world_size) const {
  if (const auto* members = Find(group)) {
    for (int r : *members) {
      if (r >= world_size) {
        return Status::InvalidArgument("comm group " + std::to_string(group) + " names rank " +
                                       std::to_string(r) + " but the workload has only " +
                                       std::to_string(world_size) + " ranks");
      }
    }
    return *members;
  }
  if (group == kWorldGroupId || group == 0) {
    std::vector<int> all(static_cast<size_t>(world_size));
    for (int i = 0; i < world_size; ++i) all[static_cast<size_t>(i)] = i;
    return all;
  }
  return Status::NotFound("comm group " + std::to_string(group) +
                          " is not defined; pass --comm-group FILE (JSON {\"<group id>\": "
                          "[ranks...]}) or put a workload.json beside the traces");
}

}  // namespace genie::trace
