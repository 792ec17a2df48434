#include "genie/driver/probe_placement.h"

#include <algorithm>
#include <cmath>

namespace genie::driver {

std::vector<TimeNs> ConnectedBeforeFirstOp(int n, const nlohmann::json& run_info) {
  std::vector<TimeNs> out(n, 0);
  if (!run_info.is_object() || !run_info.contains("traffic") || !run_info["traffic"].is_array()) {
    return out;
  }
  for (const auto& t : run_info["traffic"]) {
    if (!t.is_object() || !t.contains("startup") || !t["startup"].is_object()) continue;
    const int r = t.value("rank", -1);
    const auto& up = t["startup"];
    if (r >= 0 && r < n && up.contains("ready_to_first_op_ns") &&
        up["ready_to_first_op_ns"].is_number_integer()) {
      out[r] = std::max<TimeNs>(0, up["ready_to_first_op_ns"].get<TimeNs>());
    }
  }
  return out;
}

std::optional<double> ProbeAt(const config::NetworkConfig& net, const MeasuredIteration& m,
                              TimeNs measured_ns, TimeNs predicted_ns) {
  const double interval = net.probe_rtt.interval_ns;
  if (!(interval > 0) || measured_ns <= 0 || predicted_ns <= 0 || m.since_open_ns.empty()) {
    return std::nullopt;
  }
  // The connections' age when the iteration's first rank started.
  TimeNs age = m.since_open_ns.front();
  for (size_t r = 0; r < m.since_open_ns.size(); ++r) {
    if (m.start_ns.empty() || m.start_ns[r] == 0) {
      age = m.since_open_ns[r];
      break;
    }
  }
  const double period = interval + net.probe_rtt.duration_ns;
  double due = interval;
  if (static_cast<double>(age) > due) {
    due += std::ceil((static_cast<double>(age) - due) / period) * period;
  }
  const double offset = due - static_cast<double>(age);
  if (offset >= static_cast<double>(std::max(measured_ns, predicted_ns))) return std::nullopt;
  return offset * static_cast<double>(predicted_ns) / static_cast<double>(measured_ns);
}

MeasuredIteration WithRecordedProbes(const config::NetworkConfig& net, const MeasuredIteration& m,
                                     TimeNs measured_ns, TimeNs predicted_ns) {
  MeasuredIteration out = m;
  const int n = static_cast<int>(m.start_ns.size());
  const double interval = net.probe_rtt.interval_ns;
  out.since_open_ns.assign(n, 0);
  for (int r = 0; r < n; ++r) {
    const TimeNs at = r < static_cast<int>(m.probe_at_ns.size()) ? m.probe_at_ns[r] : -1;
    // Due at `due` in the simulation: opened an interval before (far ahead: never).
    const double due = at >= 0 && measured_ns > 0
                           ? static_cast<double>(at) * static_cast<double>(predicted_ns) /
                                 static_cast<double>(measured_ns)
                           : 20 * interval;
    out.since_open_ns[r] = static_cast<TimeNs>(static_cast<double>(m.start_ns[r]) - due + interval);
  }
  return out;
}

}  // namespace genie::driver
