#include "genie/sim/host_slots.h"

namespace genie::sim {

config::NetworkConfig WithHostSlots(const config::NetworkConfig& hosts, int slots) {
  if (slots <= 1) return hosts;
  config::NetworkConfig out = hosts;
  const int dims = hosts.dims();
  // Per-dimension lists spelled out, so the loopback gets its own values.
  out.goodput.clear();
  out.message_overhead_ns.clear();
  out.burst_bytes.clear();
  for (int d = 0; d < dims; ++d) {
    out.goodput.push_back(hosts.GoodputOf(d));
    out.message_overhead_ns.push_back(hosts.MessageOverheadNsOf(d));
    out.burst_bytes.push_back(hosts.BurstBytesOf(d));
  }
  out.topology.push_back(config::TopologyKind::kSwitch);
  out.npus_count.push_back(slots);
  out.bandwidth_gbps.push_back(config::kHostLoopbackGbps);
  out.latency_ns.push_back(config::kHostLoopbackLatencyNs);
  out.loopback_dimension = dims;
  out.goodput.push_back(config::kHostLoopbackGoodput);
  out.message_overhead_ns.push_back(config::kDefaultMessageOverheadNs);
  out.burst_bytes.push_back(0);
  return out;
}

std::vector<int> HostSlotLinkFold(const Topology& t, int hosts) {
  std::vector<int> fold(static_cast<size_t>(t.num_links()));
  for (int id = 0; id < t.num_links(); ++id) fold[id] = id;
  if (hosts <= 0 || t.npus() <= hosts) return fold;
  // Slot k's route to a neighbour on one hosts' dimension crosses that dimension's links only,
  // link for link where slot 0's same route does: a Switch's up- and down-link, a Ring's hops
  // (both directions: +1 and -1), a FullyConnected's link per pair (every coordinate).
  std::vector<int> mine, host0;
  for (int npu = hosts; npu < t.npus(); ++npu) {
    const int base = npu % hosts;  // slot 0 of the same host
    for (int d = 0; d + 1 < t.dims(); ++d) {
      const int size = t.size(d);
      const int own = t.Coordinate(npu, d);
      const int stride = t.RankOf([&] {
        std::vector<int> a(static_cast<size_t>(t.dims()), 0);
        a[d] = 1;
        return a;
      }());
      auto map_to = [&](int c) {
        if (c == own) return;
        const int delta = (c - own) * stride;
        t.Route(npu, npu + delta, &mine);
        t.Route(base, base + delta, &host0);
        for (size_t i = 0; i < mine.size() && i < host0.size(); ++i) fold[mine[i]] = host0[i];
      };
      if (t.kind(d) == config::TopologyKind::kFullyConnected) {
        for (int c = 0; c < size; ++c) map_to(c);
      } else {
        map_to((own + 1) % size);
        map_to((own + size - 1) % size);
      }
    }
  }
  return fold;
}

}  // namespace genie::sim
