// Running `genie simulate` (and `genie gen collective`) from e2e tests and reading what it
// prints: shared by the simulate_*_e2e_test files. Test-only; any thread may call.
#pragma once

#include <map>
#include <string>
#include <utility>

namespace genie::testing {

// The `sys[r] finished, T cycles, exposed communication E cycles.` lines ASTRA-sim prints too:
// rank -> (T, E).
std::map<int, std::pair<long long, long long>> SysLines(const std::string& out);
// The command line `genie simulate ARGS`.
std::string Simulate(const std::string& args);
// Runs `genie simulate ARGS` and expects `ranks` ranks, each finished at `cycles` with all of
// it exposed communication (a workload with no compute).
void ExpectEveryRank(const std::string& args, int ranks, long long cycles);
// `genie simulate ARGS`: the one figure every rank reports (sys[r] finished, T cycles); -1 when
// the ranks disagree, -2 when none reports (and a test failure when genie fails).
long long SimulatedCycles(const std::string& args);
// ASTRA-sim's shipped 8-NPU 1 MB all-reduce microbenchmark (workload prefix).
std::string AllReduce8();
// A one-dimensional Switch network file for `ranks` NPUs (50 GB/s, 500 ns), in a fresh folder.
std::string SwitchNetwork(int ranks);
// `genie gen collective` into `dir`; returns the workload prefix (a failure fails the test).
std::string GenCollective(const std::string& dir, const std::string& name, const char* type,
                          const std::string& size, int ranks);
bool Has(const std::string& text, const std::string& what);

}  // namespace genie::testing
