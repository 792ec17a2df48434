// CommGroups: the process groups collectives refer to by `pg_name`, as group id -> sorted member
// ranks. Sources: an ASTRA-sim comm-group JSON file (`{"<group id>": [ranks...]}`, e.g. the
// `workload.json` beside generated traces) or PyTorch METADATA nodes. `pg_name` strings are
// normalised by ParsePgName ("1" and "1.0" are group 1, "" is the world). Value type; any
// thread may read a const instance.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "genie/common/status.h"

namespace genie::trace {

// The id a node uses for "every rank of the workload" (same value as genie::kWorldGroup).
inline constexpr int64_t kWorldGroupId = -1;

// "" -> kWorldGroupId; "3", "3.0", " 3 " -> 3. Anything else is an error that says so.
Result<int64_t> ParsePgName(std::string_view pg_name);

class CommGroups {
 public:
  // Reads a comm-group JSON file; errors name the file and the offending entry.
  static Result<CommGroups> Load(const std::string& path);
  // Parses the JSON text of a comm-group file; `source` names it in errors.
  static Result<CommGroups> Parse(std::string_view json_text, const std::string& source);

  const std::vector<int>* Find(int64_t group) const;  // nullptr if unknown
  // Replaces the group's members (sorted, duplicates removed).
  void Add(int64_t group, std::vector<int> ranks);
  const std::map<int64_t, std::vector<int>>& all() const { return groups_; }
  bool empty() const { return groups_.empty(); }

  // Members of `group` in a workload of `world_size` ranks: the world group is 0..N-1; a known
  // group its members; group 0 when undefined is PyTorch's default group, the world. Otherwise an
  // error telling the user to pass --comm-group.
  Result<std::vector<int>> Resolve(int64_t group, int world_size) const;

 private:
  std::map<int64_t, std::vector<int>> groups_;
};

}  // namespace genie::trace
