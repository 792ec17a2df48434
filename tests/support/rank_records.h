// Reading what a `genie run`/`simulate --output` wrote per rank (rank-R.jsonl), for e2e tests
// that check the order collectives ran in. Test-only; any thread may call.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace genie::testing {

// One collective op record and its phases grouped by chunk, each chunk's phases sorted by
// start time.
struct CollectiveRecord {
  std::string line;  // the record as written, for failure messages
  std::map<int, std::vector<nlohmann::json>> phases_by_chunk;
};

// Every collective op record of `rank` under `out`, in file order. A missing file or a record
// without phases is a test failure (and is left out).
std::vector<CollectiveRecord> CollectiveRecords(const std::string& out, int rank);

}  // namespace genie::testing
