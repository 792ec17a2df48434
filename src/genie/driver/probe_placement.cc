#include "genie/driver/probe_placement.h"

#include <algorithm>
#include <cmath>

#include "genie/common/checked_math.h"

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

namespace {

// Rank r's connections opened so that their probe is due at `due` ns of the simulation.
TimeNs AgeFor(const config::NetworkConfig& net, const MeasuredIteration& m, int r, double due) {
  const double start = m.start_ns.empty() ? 0.0 : static_cast<double>(m.start_ns[r]);
  return SaturatingTimeNs(start - due + net.probe_rtt.interval_ns);
}

}  // namespace

MeasuredIteration WithoutProbes(const config::NetworkConfig& net, const MeasuredIteration& m) {
  MeasuredIteration out = m;
  const int n = static_cast<int>(std::max(m.start_ns.size(), m.since_open_ns.size()));
  out.since_open_ns.assign(n, 0);
  // Opened 20 intervals on: the first probe comes far past any step the model will simulate.
  const double never = 21 * net.probe_rtt.interval_ns;
  for (int r = 0; r < n; ++r) out.since_open_ns[r] = AgeFor(net, m, r, never);
  return out;
}

std::optional<MeasuredIteration> WithProbesPlaced(const config::NetworkConfig& net,
                                                  const MeasuredIteration& m, TimeNs measured_ns,
                                                  TimeNs predicted_ns, bool recorded) {
  const double interval = net.probe_rtt.interval_ns;
  const double duration = net.probe_rtt.duration_ns;
  if (!(interval > 0) || measured_ns <= 0 || predicted_ns <= 0) return std::nullopt;
  const double share = static_cast<double>(predicted_ns) / static_cast<double>(measured_ns);
  MeasuredIteration out = WithoutProbes(net, m);
  out.probe_duration_scale = std::min(1.0, share);
  if (recorded) {
    bool any = false;
    for (size_t r = 0; r < m.probe_at_ns.size() && r < out.since_open_ns.size(); ++r) {
      if (m.probe_at_ns[r] < 0) continue;
      out.since_open_ns[r] =
          AgeFor(net, m, static_cast<int>(r), static_cast<double>(m.probe_at_ns[r]) * share);
      any = true;
    }
    if (!any) return std::nullopt;
    return out;
  }
  if (m.since_open_ns.empty()) return std::nullopt;
  // The connections' age when the iteration's first rank started.
  double age = static_cast<double>(m.since_open_ns.front());
  for (size_t r = 0; r < m.since_open_ns.size() && r < m.start_ns.size(); ++r) {
    if (m.start_ns[r] == 0) {
      age = static_cast<double>(m.since_open_ns[r]);
      break;
    }
  }
  // On bbr's grid: the latest probe begun by then if it still runs, else the next one.
  const double period = interval + duration;
  double due = interval;
  if (age >= due) {
    due += std::floor((age - due) / period) * period;
    if (age >= due + duration) due += period;
  }
  const double offset = due - age;  // negative: under way as the iteration starts
  if (offset >= static_cast<double>(std::max(measured_ns, predicted_ns))) return std::nullopt;
  for (int r = 0; r < static_cast<int>(out.since_open_ns.size()); ++r) {
    out.since_open_ns[r] = AgeFor(net, m, r, offset * share);
  }
  return out;
}

}  // namespace genie::driver
