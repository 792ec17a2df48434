#include "tests/support/rank_records.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

namespace genie::testing {

std::vector<CollectiveRecord> CollectiveRecords(const std::string& out, int rank) {
  std::vector<CollectiveRecord> records;
  const std::string path = out + "/rank-" + std::to_string(rank) + ".jsonl";
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return records;
  }
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j.value("record", "") != "op" || j.value("kind", "") != "collective") continue;
    if (!j.contains("phases")) {
      ADD_FAILURE() << path << ": a collective without phases: " << line;
      continue;
    }
    CollectiveRecord r{line, {}};
    for (const auto& p : j["phases"]) r.phases_by_chunk[p["chunk"].get<int>()].push_back(p);
    for (auto& [chunk, phases] : r.phases_by_chunk) {
      std::stable_sort(phases.begin(), phases.end(), [](const auto& a, const auto& b) {
        return a["start"].template get<long long>() < b["start"].template get<long long>();
      });
    }
    records.push_back(std::move(r));
  }
  return records;
}

}  // namespace genie::testing
