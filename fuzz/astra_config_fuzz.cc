// libFuzzer target for ASTRA-sim's configuration files, the readers behind --system-configuration,
// --network-configuration and --remote-memory-configuration (config/system_config.h,
// network_config.h, memory_config.h). Each input is given to all three parsers — JSON is also
// YAML, so one corpus of system.json, network.yml and memory.json serves them all — and what a
// parser accepts is used as genie uses it: printed into the provenance (ToJson), the network
// built into the simulator's topology (sim/topology.h) and routed over, memory access times
// computed. Any input must give a Status, never a crash, hang, leak or sanitizer report.
//   build/fuzz/fuzz/astra_config_fuzz -dict=fuzz/dicts/astra_config.dict
//       fuzz/corpus/astra_config_fuzz
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "genie/config/memory_config.h"
#include "genie/config/network_config.h"
#include "genie/config/system_config.h"
#include "genie/sim/topology.h"

namespace {

void UseNetwork(const genie::config::NetworkConfig& c) {
  (void)c.ToJson().dump();
  auto topology = genie::sim::Topology::Create(c);
  if (!topology.ok()) return;
  const genie::sim::Topology& t = *topology;
  // A few messages between the first, a middle and the last rank, as the simulator sends them.
  const int last = t.npus() - 1;
  const int pairs[][2] = {{0, last}, {last, 0}, {0, last / 2}, {last / 2, last}};
  std::vector<int> links;
  for (const auto& p : pairs) {
    (void)t.UnawareDelay(p[0], p[1], genie::Bytes{1} << 20);
    t.Route(p[0], p[1], &links);
    for (int id : links) (void)t.LinkName(id);
  }
}

void UseMemory(const genie::config::MemoryConfig& c) {
  (void)c.ToJson().dump();
  for (genie::Bytes size : {genie::Bytes{0}, genie::Bytes{4096}, genie::Bytes{1} << 40}) {
    (void)c.AccessTimeNs(size);
  }
  for (int rank : {0, 7, 1 << 20}) (void)c.QueueOf(rank);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (auto s = genie::config::ParseSystemConfig(text, "system.json"); s.ok()) {
    (void)s->ToJson().dump();
  }
  if (auto n = genie::config::ParseNetworkConfig(text, "network.yml"); n.ok()) UseNetwork(*n);
  if (auto m = genie::config::ParseMemoryConfig(text, "memory.json"); m.ok()) UseMemory(*m);
  return 0;
}
