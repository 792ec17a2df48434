#include "genie/report/network_settings.h"

#include <fmt/format.h>

#include "genie/common/units.h"

namespace genie::report {

using json = nlohmann::json;

namespace {

std::string Str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// A count or size; `queues` is written signed.
uint64_t U(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return 0;
  const json& v = j[key];
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  const bool positive = v.is_number_integer() && v.get<int64_t>() > 0;
  return positive ? static_cast<uint64_t>(v.get<int64_t>()) : 0;
}

// One value per distinct setting over the entries ("a" when all agree, else "a (x, y); b (z)").
std::string Agreed(const std::vector<std::pair<std::string, std::string>>& who_value) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // first-seen order
  for (const auto& [who, value] : who_value) {
    auto it = groups.begin();
    while (it != groups.end() && it->first != value) ++it;
    if (it == groups.end()) {
      groups.push_back({value, {who}});
    } else {
      it->second.push_back(who);
    }
  }
  if (groups.size() == 1) return groups.front().first;
  std::string out;
  for (const auto& [value, whom] : groups) {
    out += (out.empty() ? "" : "; ") + value + " (";
    for (size_t i = 0; i < whom.size(); ++i) out += (i ? ", " : "") + whom[i];
    out += ")";
  }
  return out;
}

// How a link end's egress is set, as the summary says it.
std::string QdiscText(const json& l) {
  const std::string kind = Str(l, "qdisc");
  if (kind.empty()) return "no qdisc";
  const std::string scheduling = Str(l, "scheduling");
  std::string out = kind;
  if (scheduling == "ack-first") {
    out += ", small TCP packets (ACKs) first";
  } else if (kind == "htb") {
    out += " (a FIFO per sending host)";
  }
  if (U(l, "rate_bps") > 0) out += ", " + FormatBitRate(U(l, "rate_bps"));
  if (U(l, "limit_bytes") > 0) {
    const bool several = kind == "htb" || U(l, "queues") > 1;
    out += fmt::format(", queue {} B{}", U(l, "limit_bytes"), several ? " each" : "");
  }
  return out;
}

}  // namespace

json NetworkSettingsOf(json hosts, json links) {
  if (!hosts.is_array()) hosts = json::array();
  if (!links.is_array()) links = json::array();
  json summary = json::object();
  std::vector<std::pair<std::string, std::string>> cc, ecn, host_nics, host_links, switch_links;
  for (const auto& h : hosts) {
    const std::string who = Str(h, "host");
    if (!Str(h, "tcp_congestion").empty()) cc.push_back({who, Str(h, "tcp_congestion")});
    if (!Str(h, "tcp_ecn").empty()) ecn.push_back({who, Str(h, "tcp_ecn")});
  }
  for (const auto& l : links) {
    const std::string who = Str(l, "link") + " " + Str(l, "node");
    // A host's NIC link is named after the host (h3, h3:1), and so is its host end's node; a
    // switch-to-switch link l0-s1. A host's own egress and the switch port toward it are set
    // apart (ack-first and fifo), so each gets its setting.
    const bool host_link = Str(l, "link").rfind('h', 0) == 0;
    const bool host_end = host_link && Str(l, "node").rfind('h', 0) == 0;
    (host_end ? host_nics : host_link ? host_links : switch_links).push_back({who, QdiscText(l)});
  }
  if (!cc.empty()) summary["tcp_congestion"] = Agreed(cc);
  if (!ecn.empty()) summary["tcp_ecn"] = Agreed(ecn);
  if (!host_nics.empty()) summary["host_nics"] = Agreed(host_nics);
  if (!host_links.empty()) summary["host_links"] = Agreed(host_links);
  if (!switch_links.empty()) summary["switch_links"] = Agreed(switch_links);
  return {
      {"hosts", std::move(hosts)}, {"links", std::move(links)}, {"summary", std::move(summary)}};
}

json NetworkSettingsFromProvenance(const json& provenance) {
  if (!provenance.is_object()) return json();
  json hosts = json::array();
  std::map<std::string, size_t> index;  // host -> its entry
  const json headers = provenance.value("headers", json::array());
  for (size_t i = 0; headers.is_array() && i < headers.size(); ++i) {
    const json& h = headers[i];
    if (!h.is_object()) continue;
    json entry;
    if (h.contains("host_settings") && h["host_settings"].is_object()) {
      entry = h["host_settings"];
    } else if (h.contains("sysctls") && h["sysctls"].is_object()) {
      // Recorded before host_settings: the machine's sysctls as the rank read them, and the
      // socket option from its transport settings.
      const json& s = h["sysctls"];
      const std::string socket = Str(h.value("transport", json::object()), "tcp_congestion");
      const std::string def = Str(s, "net.ipv4.tcp_congestion_control");
      entry = {{"host", Str(h, "hostname")},
               {"tcp_congestion", socket.empty() ? def : socket},
               {"tcp_congestion_source", socket.empty() ? "host default" : "socket option"},
               {"tcp_congestion_default", def},
               {"tcp_ecn", Str(s, "net.ipv4.tcp_ecn")}};
    } else {
      continue;
    }
    const std::string host = Str(entry, "host");
    auto it = index.find(host);
    if (it == index.end()) {
      entry["ranks"] = json::array();
      index[host] = hosts.size();
      hosts.push_back(entry);
      it = index.find(host);
    }
    if (h.contains("rank") && h["rank"].is_number_integer()) {
      hosts[it->second]["ranks"].push_back(h["rank"]);
    }
  }
  json links = json::array();
  if (provenance.contains("testbed") && provenance["testbed"].is_object()) {
    links = provenance["testbed"].value("links", json::array());
  }
  if (hosts.empty() && (!links.is_array() || links.empty())) return json();
  return NetworkSettingsOf(std::move(hosts), std::move(links));
}

SettingsSummary SummaryOf(const json& network_settings) {
  SettingsSummary out;
  if (!network_settings.is_object() || !network_settings.contains("summary")) return out;
  const json& s = network_settings["summary"];
  if (!s.is_object()) return out;
  for (const auto& [k, v] : s.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

std::vector<SettingDifference> SettingDifferences(const SettingsSummary& a,
                                                  const SettingsSummary& b) {
  std::vector<SettingDifference> out;
  SettingsSummary names = a;
  names.insert(b.begin(), b.end());
  for (const auto& [name, unused] : names) {
    auto ia = a.find(name);
    auto ib = b.find(name);
    const std::string va = ia == a.end() ? "" : ia->second, vb = ib == b.end() ? "" : ib->second;
    if (va != vb) out.push_back({name, va, vb});
  }
  return out;
}

std::string DescribeDifferences(const std::vector<SettingDifference>& differences,
                                const std::string& a_label, const std::string& b_label) {
  std::string out;
  for (const auto& d : differences) {
    out += fmt::format("{}{} {} {}, {} {}", out.empty() ? "" : "; ", a_label, d.name,
                       d.a.empty() ? "not recorded" : d.a, b_label,
                       d.b.empty() ? "not recorded" : d.b);
  }
  return out;
}

std::string CalibrationNote(const std::string& testbed, const SettingsSummary& calibrated,
                            const SettingsSummary& run, const std::string& measured, bool matched,
                            int kept) {
  if (matched) return "";
  if (calibrated.empty()) {
    std::string run_text;
    for (const auto& [name, value] : run) {
      run_text += (run_text.empty() ? "" : ", ") + name + " " + value;
    }
    return fmt::format(
        "the calibration ({}) predates genie recording a calibration's network settings: "
        "whether it was measured under this run's ({}) is unknown; calibrate again to know",
        measured, run_text.empty() ? "not recorded either" : run_text);
  }
  if (run.empty()) {
    return "this run's network settings were not recorded: whether the calibration was "
           "measured under them is unknown";
  }
  const auto differ = SettingDifferences(calibrated, run);
  if (differ.empty()) return "";
  std::string how = "genie testbed calibrate " + testbed;
  for (const auto& d : differ) {
    if (d.name == "tcp_congestion" && !d.b.empty() && d.b.find(' ') == std::string::npos) {
      how += " --tcp-congestion " + d.b;
    }
  }
  return fmt::format(
      "{}: the prediction's shares and per-message costs were measured under other settings "
      "and may not hold; `{}` with the run's settings in place measures them (kept beside the "
      "{} calibration(s) there now)",
      DescribeDifferences(differ, "calibrated with", "run with"), how, kept);
}

std::string FormatNetworkSettings(const json& network_settings) {
  const SettingsSummary s = SummaryOf(network_settings);
  if (s.empty()) return "";
  std::string out = "# network settings (as the run's hosts and links had them)\n";
  for (const auto& [name, value] : s) out += fmt::format("#   {:<15} {}\n", name, value);
  std::vector<std::pair<std::string, std::string>> socket;
  for (const auto& h : network_settings.value("hosts", json::array())) {
    if (Str(h, "tcp_congestion_source") == "socket option" &&
        Str(h, "tcp_congestion") != Str(h, "tcp_congestion_default")) {
      socket.push_back({Str(h, "host"), Str(h, "tcp_congestion_default")});
    }
  }
  if (!socket.empty()) {
    out += fmt::format("#   (genie's --tcp-congestion on {} host(s), over their default {})\n",
                       socket.size(), Agreed(socket));
  }
  return out;
}

}  // namespace genie::report
