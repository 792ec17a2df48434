// A small Chakra workload written by hand for a test (the same nodes on every rank), and that
// workload prepared on one switch as the simulations replay it: the setup of the unit tests of
// the conditioned and counterfactual simulations (driver/simulation_test.cc,
// driver/attribution_inputs_test.cc) and of the jobs simulation (driver/jobs_*_test.cc). Links the trace and runtime libraries, so it is part of
// genie_test_traces (tests/CMakeLists.txt), apart from the light test support. Test-only; any
// thread may call.
#pragma once

#include <string>
#include <vector>

#include "et_def.pb.h"
#include "genie/runtime/run_setup.h"

namespace genie::testing {

// <prefix>.<rank>.et for ranks 0..ranks-1, each holding `nodes` in order. A write error is a
// test failure.
void WriteEveryRank(const std::string& prefix, int ranks,
                    const std::vector<ChakraProtoMsg::Node>& nodes);

// <dir>/w.<rank>.et (WriteEveryRank) and <dir>/net.yml, one switch of `ranks` NPUs at 1 GB/s
// with 1 µs per link, prepared into *setup with the comm streams concurrent (as the flow model
// replays a measured run). A failure is a fatal test failure (ASSERT_NO_FATAL_FAILURE).
void PrepareOnSwitch(const std::string& dir, int ranks,
                     const std::vector<ChakraProtoMsg::Node>& nodes, runtime::RunSetup* setup);

}  // namespace genie::testing
