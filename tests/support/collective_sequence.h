// Writing a Chakra workload of several collectives in a row, one after another on every rank,
// for the e2e tests that verify each (collective, algorithm) pair: one launch checks every
// collective type an algorithm implements, since starting the ranks is most of a launch.
// Links the trace library, so it is its own library (genie_test_traces, tests/CMakeLists.txt),
// apart from the light test support. Test-only; any thread may call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "genie/spec/collective_type.h"

namespace genie::testing {

// <prefix>.<rank>.et for `ranks` ranks: one collective of each of `types`, `size` bytes each,
// node i depending on node i-1 (each alone on the wire, as in a workload of one). A write
// error is a test failure.
void WriteCollectiveSequence(const std::string& prefix, int ranks,
                             const std::vector<CollectiveType>& types, uint64_t size);

// "all_reduce, all_gather" for failure messages and test names' printouts.
std::string TypeNames(const std::vector<CollectiveType>& types);

// The system.json that names `algorithm` for each of `types` (and 2 dataset splits).
std::string SystemNaming(const std::string& algorithm, const std::vector<CollectiveType>& types);

// The collective types each algorithm implements, in the order they run.
struct AlgorithmTypes {
  std::string algorithm;
  std::vector<CollectiveType> types;
};
std::vector<AlgorithmTypes> EveryAlgorithmsTypes();

// Each rank's op records under `out` (rank-R.jsonl) name `types` in order, each carried by
// `algorithm`; a failure names the rank.
void ExpectEachRankRan(const std::string& out, int ranks, const std::string& algorithm,
                       const std::vector<CollectiveType>& types);

}  // namespace genie::testing
