#include "tests/support/collective_sequence.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "et_def.pb.h"
#include "genie/trace/attributes.h"
#include "tests/support/file.h"
#include "tests/support/switch_workload.h"

namespace genie::testing {

void WriteCollectiveSequence(const std::string& prefix, int ranks,
                             const std::vector<CollectiveType>& types, uint64_t size) {
  std::vector<ChakraProtoMsg::Node> nodes;
  for (size_t i = 0; i < types.size(); ++i) {
    ChakraProtoMsg::Node& node = nodes.emplace_back();
    node.set_id(i);
    node.set_name(std::string(CollectiveTypeName(types[i])) + "_" + std::to_string(i));
    node.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    if (i > 0) node.add_data_deps(i - 1);
    trace::AddBool(&node, "is_cpu_op", false);
    trace::AddInt64(&node, "comm_type", static_cast<int64_t>(types[i]));
    trace::AddInt64(&node, "comm_size", static_cast<int64_t>(size));
  }
  WriteEveryRank(prefix, ranks, nodes);
}

std::string TypeNames(const std::vector<CollectiveType>& types) {
  std::string s;
  for (CollectiveType t : types) s += std::string(s.empty() ? "" : ", ") + CollectiveTypeName(t);
  return s;
}

std::string SystemNaming(const std::string& algorithm, const std::vector<CollectiveType>& types) {
  nlohmann::json sys = {{"preferred-dataset-splits", 2}};
  for (CollectiveType t : types) {
    std::string key = CollectiveTypeName(t);  // all_reduce -> all-reduce-implementation
    std::replace(key.begin(), key.end(), '_', '-');
    sys[key + "-implementation"] = {algorithm};
  }
  return sys.dump();
}

std::vector<AlgorithmTypes> EveryAlgorithmsTypes() {
  using T = CollectiveType;
  const std::vector<T> all = {T::kAllReduce, T::kAllGather, T::kReduceScatter, T::kAllToAll};
  return {{"ring", all},
          {"direct", all},
          {"halvingDoubling", {T::kAllReduce, T::kAllGather, T::kReduceScatter}},
          {"doubleBinaryTree", {T::kAllReduce}}};
}

void ExpectEachRankRan(const std::string& out, int ranks, const std::string& algorithm,
                       const std::vector<CollectiveType>& types) {
  std::vector<std::string> expected;
  for (CollectiveType t : types) expected.push_back(CollectiveTypeName(t));
  for (int rank = 0; rank < ranks; ++rank) {
    std::istringstream records(ReadFile(out + "/rank-" + std::to_string(rank) + ".jsonl"));
    std::vector<std::string> ran;
    for (std::string line; std::getline(records, line);) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || j.value("record", "") != "op") continue;
      EXPECT_EQ(j.value("algorithm", ""), algorithm) << "rank " << rank << ": " << line;
      ran.push_back(j.value("type", ""));
    }
    EXPECT_EQ(ran, expected) << "rank " << rank << " under " << out;
  }
}

}  // namespace genie::testing
