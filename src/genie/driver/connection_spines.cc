#include "genie/driver/connection_spines.h"

#include <fmt/format.h>

#include "genie/record/record_stream.h"
#include "genie/record/run_folder.h"
#include "genie/testbed/control.h"

namespace genie::driver {

std::vector<testbed::ConnectionFlow> RecordedFlows(const nlohmann::json& records) {
  std::vector<testbed::ConnectionFlow> flows;
  if (!records.is_array()) return flows;
  for (const nlohmann::json& r : records) {
    if (!r.is_object() || !r.contains("rank") || !r["rank"].is_number_integer() ||
        !r.contains("connections") || !r["connections"].is_array()) {
      continue;
    }
    const int rank = r["rank"].get<int>();
    for (const nlohmann::json& c : r["connections"]) {
      if (!c.is_object() || !c.value("peer", nlohmann::json()).is_number_integer() ||
          !c.value("channel", nlohmann::json()).is_number_integer() ||
          !c.value("local", nlohmann::json()).is_string() ||
          !c.value("remote", nlohmann::json()).is_string()) {
        continue;
      }
      flows.push_back({rank, c["peer"].get<int>(), c["channel"].get<int>(),
                       c["local"].get<std::string>(), c["remote"].get<std::string>()});
    }
  }
  return flows;
}

nlohmann::json ConnectionRecordsIn(const std::string& folder) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& line : record::FirstRecordLines(folder, "connections")) {
    auto parsed = record::ParseRecordStream(line, folder);
    if (parsed.ok() && !parsed->connections.is_null()) out.push_back(parsed->connections);
  }
  return out;
}

std::vector<config::EcmpConnection> ConnectionSpines(const std::string& testbed_name,
                                                     const nlohmann::json& records,
                                                     std::string* note, testbed::Shell* shell) {
  std::vector<config::EcmpConnection> spines;
  if (testbed_name.empty()) return spines;
  auto layout = testbed::Load(testbed_name);
  if (!layout.ok() || !testbed::EcmpPerConnection(*layout)) return spines;
  const std::vector<testbed::ConnectionFlow> flows = RecordedFlows(records);
  if (flows.empty()) {
    if (note) *note = "ECMP l4 but no connections recorded: split over the spines";
    return spines;
  }
  testbed::SystemShell system;
  auto asked = testbed::QueryConnectionSpines(*layout, flows, shell ? *shell : system);
  if (!asked.ok()) {
    if (note) *note = "ECMP l4 but its spines unknown (split): " + asked.status().message();
    return spines;
  }
  if (note) {
    *note = fmt::format(
        "ECMP l4: {} connection direction(s) across leaves on the spine their "
        "leaf names for their ports",
        asked->size());
  }
  return std::move(*asked);
}

}  // namespace genie::driver
