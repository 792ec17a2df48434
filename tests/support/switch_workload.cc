#include "tests/support/switch_workload.h"

#include <gtest/gtest.h>

#include <fstream>

#include "genie/trace/et_writer.h"

namespace genie::testing {

void WriteEveryRank(const std::string& prefix, int ranks,
                    const std::vector<ChakraProtoMsg::Node>& nodes) {
  for (int r = 0; r < ranks; ++r) {
    auto writer =
        trace::EtWriter::Create(prefix + "." + std::to_string(r) + ".et", trace::DefaultMetadata());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    for (const auto& node : nodes) {
      Status st = (*writer)->Write(node);
      ASSERT_TRUE(st.ok()) << st.message();
    }
    Status st = (*writer)->Close();
    ASSERT_TRUE(st.ok()) << st.message();
  }
}

void PrepareOnSwitch(const std::string& dir, int ranks,
                     const std::vector<ChakraProtoMsg::Node>& nodes, runtime::RunSetup* setup) {
  ASSERT_NO_FATAL_FAILURE(WriteEveryRank(dir + "/w", ranks, nodes));
  std::ofstream(dir + "/net.yml") << "topology: [ Switch ]\nnpus_count: [ " << ranks
                                  << " ]\nbandwidth: [ 1.0 ]\nlatency: [ 1000 ]\n";
  runtime::SetupFlags flags;
  flags.workload = dir + "/w";
  flags.network_path = dir + "/net.yml";
  auto prepared = runtime::PrepareRun(flags);
  ASSERT_TRUE(prepared.ok()) << prepared.status().message();
  *setup = std::move(*prepared);
  setup->exec.comm_streams = runtime::ExecutorConfig::CommStreams::kConcurrent;
}

}  // namespace genie::testing
