#include "genie/testbed/calibration.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "genie/testbed/control.h"

namespace genie::testbed {

nlohmann::json Calibration::ToJson() const {
  return {{"goodput", goodput},
          {"message_overhead_ns", message_overhead_ns},
          {"median_gbps", median_gbps},
          {"median_rtt_us", median_rtt_us},
          {"measured", measured}};
}

Result<Calibration> CalibrationFromDoctor(const Layout& layout, const nlohmann::json& doctor,
                                          bool accept_findings) {
  const uint64_t rate = layout.HostLinkRate();
  if (rate == 0) return Status::InvalidArgument("testbed " + layout.name() + " has no host links");
  if (!doctor.is_object() || !doctor.contains("reference_gbps") ||
      !doctor.contains("reference_rtt_us") || !doctor.contains("findings")) {
    return Status::InvalidArgument("the doctor's scan has no reference_gbps, reference_rtt_us or "
                                   "findings: was it written by another genie version?");
  }
  if (!accept_findings && !doctor["findings"].empty()) {
    std::string found;
    for (const auto& f : doctor["findings"]) found += "\n  " + f.value("text", std::string("?"));
    return Status::InvalidArgument(
        "testbed " + layout.name() + " is not healthy, calibrating on it would teach the model "
        "the fault:" + found + "\nclear its faults (genie testbed fault " + layout.name() +
        " clear) and calibrate again, or pass --accept-findings");
  }
  Calibration c;
  c.median_gbps = doctor["reference_gbps"].get<double>();
  c.median_rtt_us = doctor["reference_rtt_us"].get<double>();
  if (!(c.median_gbps > 0) || !(c.median_rtt_us > 0)) {
    return Status::InvalidArgument("the doctor's scan measured no transfer or round trip");
  }
  c.goodput = c.median_gbps * 1e9 / (static_cast<double>(rate) / 8);
  c.message_overhead_ns = c.median_rtt_us * 1e3 / 2;
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  c.measured = when;
  return c;
}

std::string CalibrationPath(const std::string& name) {
  return StateDir() + "/" + name + ".calibration.json";
}

Status SaveCalibration(const std::string& name, const Calibration& c) {
  const std::string path = CalibrationPath(name), tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << c.ToJson().dump(1) << "\n";
    if (!out) return Status::IoError("cannot write " + tmp + ": check that the folder is writable");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);  // readers see the old file or the new, never half
  if (ec) return Status::IoError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return Status::Ok();
}

Result<std::optional<Calibration>> LoadCalibration(const std::string& name) {
  const std::string path = CalibrationPath(name);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<Calibration>();
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("goodput") || !j.contains("message_overhead_ns") ||
      !j["goodput"].is_number() || !j["message_overhead_ns"].is_number()) {
    return Status::InvalidArgument(path + ": not a calibration; run genie testbed calibrate " +
                                   name + " again");
  }
  Calibration c;
  c.goodput = j["goodput"].get<double>();
  c.message_overhead_ns = j["message_overhead_ns"].get<double>();
  c.median_gbps = j.value("median_gbps", 0.0);
  c.median_rtt_us = j.value("median_rtt_us", 0.0);
  c.measured = j.value("measured", std::string());
  if (!(c.goodput > 0 && c.goodput <= 1.5) || !(c.message_overhead_ns >= 0)) {
    return Status::InvalidArgument(fmt::format(
        "{}: goodput {} or message_overhead_ns {} out of range; run genie testbed calibrate {} "
        "again",
        path, c.goodput, c.message_overhead_ns, name));
  }
  return std::optional<Calibration>(c);
}

Result<std::string> TestbedNetworkYml(const std::string& name, int ranks_per_host,
                                      double one_way_latency_ns, std::string* note) {
  GENIE_ASSIGN_OR_RETURN(Layout layout, Load(name));
  GENIE_ASSIGN_OR_RETURN(std::optional<Calibration> cal, LoadCalibration(name));
  if (!cal) {
    if (note) *note = "uncalibrated (defaults; genie testbed calibrate " + name + " measures them)";
    return ToNetworkYml(layout, ranks_per_host, one_way_latency_ns < 0 ? 30'000.0 : one_way_latency_ns);
  }
  const MeasuredCosts costs{cal->goodput, cal->message_overhead_ns};
  if (note) {
    *note = fmt::format("calibrated {}: goodput {:.3f}, message overhead {:.1f} us", cal->measured,
                        cal->goodput, cal->message_overhead_ns / 1e3);
  }
  return ToNetworkYml(layout, ranks_per_host, one_way_latency_ns < 0 ? 1.0 : one_way_latency_ns,
                      &costs);
}

}  // namespace genie::testbed
