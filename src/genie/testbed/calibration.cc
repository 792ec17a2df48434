#include "genie/testbed/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "genie/common/usable_cores.h"
#include "genie/testbed/control.h"
#include "genie/testbed/ecmp.h"
#include "genie/testbed/shell.h"

namespace genie::testbed {
namespace {

// On a leaf-spine, the median goodput of the pairs of hosts on one leaf (their path is two
// host links, what `goodput` is relative to; a pair across leaves may be held by slower
// leaf-spine links); 0 when it cannot be had (a star, one host per leaf, no matrix).
double IntraLeafMedianGbps(const Layout& layout, const nlohmann::json& doctor) {
  const TestbedSpec& s = layout.spec;
  if (s.kind != TopologyKind::kLeafSpine || s.hosts_per_leaf < 2) return 0;
  if (!doctor.contains("hosts") || !doctor.contains("pairwise")) return 0;
  const nlohmann::json& hosts = doctor["hosts"];
  const nlohmann::json gbps = doctor["pairwise"].value("gbps", nlohmann::json());
  if (!hosts.is_array() || !gbps.is_array() || gbps.size() != hosts.size()) return 0;
  auto leaf_of = [&](const nlohmann::json& name) {
    if (!name.is_string()) return -1;
    for (size_t i = 0; i < layout.hosts.size(); ++i) {
      if (layout.hosts[i].name == name.get<std::string>()) {
        return static_cast<int>(i) / s.hosts_per_leaf;
      }
    }
    return -1;
  };
  std::vector<double> v;
  for (size_t a = 0; a < hosts.size(); ++a) {
    if (!gbps[a].is_array() || gbps[a].size() != hosts.size()) return 0;
    for (size_t b = 0; b < hosts.size(); ++b) {
      const int la = leaf_of(hosts[a]);
      if (a == b || la < 0 || la != leaf_of(hosts[b]) || !gbps[a][b].is_number()) continue;
      v.push_back(gbps[a][b].get<double>());
    }
  }
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The ring steps of a scan per size, (bytes, ns), sizes increasing: entries that are not
// positive numbers or not larger than the one before are left out. Empty without sizes.
std::vector<std::pair<double, double>> RingStepTimes(const nlohmann::json& steps) {
  std::vector<std::pair<double, double>> out;
  if (!steps.is_object()) return out;
  const nlohmann::json bytes = steps.value("message_bytes", nlohmann::json());
  const nlohmann::json ns = steps.value("step_ns", nlohmann::json());
  if (!bytes.is_array() || !ns.is_array() || bytes.size() != ns.size()) return out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (!bytes[i].is_number() || !ns[i].is_number()) continue;
    const double b = bytes[i].get<double>(), t = ns[i].get<double>();
    if (!(b >= 1 && t > 0)) continue;
    if (!out.empty() && !(b > out.back().first)) continue;
    out.emplace_back(b, t);
  }
  return out;
}

// The rate a link sustains once its burst is spent: least squares of step time on bytes over
// the ring steps of at least 1/8 of the largest size (the bandwidth-dominated ones), in GB/s
// (bytes per ns); 0 when fewer than two such sizes were measured. The doctor's own fit spans
// every size, weighted by relative error: the small steps a shaper's burst lets out at more
// than the link's rate pull it above the rate that many messages queued back to back get
// (on the testbed, 1.01 x 1 Gbit/s against 0.94 x). A link shared by several flows (chunks in
// flight, concurrent collectives) is held at this rate; one message alone still costs the
// measured time of its size (message_times).
double BulkGbps(const std::vector<std::pair<double, double>>& steps) {
  if (steps.empty()) return 0;
  const double largest = steps.back().first;
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : steps) {
    if (!(x >= largest / 8)) continue;
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double det = n * sxx - sx * sx;
  if (n < 2 || !(det > 0)) return 0;
  const double slope = (n * sxy - sx * sy) / det;  // ns per byte
  return slope > 0 ? 1 / slope : 0;
}

// Links behind a shaper (the scan's ring steps carry `burst_bytes`, `first_step_ns` and
// `early_step_ns`): the floor of each size (burst_message_times). A size whose steady step is
// slower than its bytes at the bulk rate, or whose early steps (every bucket full) are clearly
// slower than its steady ones, is held by the hosts' software, not the link: its floor is the
// early steps' time (a collective's few steps after a pause). The second test is for a
// leaf-spine, whose steady steps run in rings within a leaf and its early ones in the ring of
// every host, longer and so slower on shared cores (ring_steps.h): there an 8 KiB steady step
// can read its bytes at the rate while the job's ring pays 1.2-1.8 times that. Any other
// size: its first step with every bucket full, or, for a size a bucket lets out three or more
// at a time, its early steps when they are faster: a collective's steps are such a chain, and
// on quiet cores a chain's steps run faster than the first step after an idle spell, every
// rank waking at once (star:8 at 1 Gbit/s: 8 KiB first step 62-69 us, early steps 47-58 us,
// a 64 KiB all-reduce's 14 steps 50 us each). A floor is never
// below a smaller size's: a message does not take less time than a smaller one (the early
// steps of a small size can be slower than the very first step of a larger one).
void BurstFloors(const nlohmann::json& steps, double bulk_gbps, MeasuredCosts* c) {
  if (!steps.is_object() || !steps.contains("burst_bytes") || !steps["burst_bytes"].is_number() ||
      !(bulk_gbps > 0) || c->message_times.empty()) {
    return;
  }
  const nlohmann::json bytes = steps.value("message_bytes", nlohmann::json());
  const nlohmann::json first = steps.value("first_step_ns", nlohmann::json());
  const nlohmann::json early = steps.value("early_step_ns", nlohmann::json());
  const nlohmann::json steady = steps.value("step_ns", nlohmann::json());
  for (const auto* v : {&first, &early, &steady}) {
    if (!bytes.is_array() || !v->is_array() || v->size() != bytes.size()) return;
  }
  const double burst = steps["burst_bytes"].get<double>();
  std::vector<std::pair<double, double>> floors;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (const auto* v : {&bytes, &first, &early, &steady}) {
      if (!(*v)[i].is_number()) return;
    }
    const double b = bytes[i].get<double>(), f = first[i].get<double>(), e = early[i].get<double>(),
                 t = steady[i].get<double>();
    if (!(b >= 1 && f > 0 && e > 0 && t > 0) || (!floors.empty() && !(b > floors.back().first))) {
      return;
    }
    const bool software = t > 1.05 * b / bulk_gbps || e > 1.1 * t;
    const bool chain = 3 * b <= burst;  // ring_steps.cc times its early steps as a chain
    floors.emplace_back(b, software ? e : chain ? std::min({f, e, t}) : std::min(f, t));
  }
  for (size_t i = 1; i < floors.size(); ++i) {
    floors[i].second = std::max(floors[i].second, floors[i - 1].second);
  }
  if (floors.size() < 2) return;
  c->burst_bytes = burst;
  c->burst_message_times = std::move(floors);
}

}  // namespace

MeasuredCosts Calibration::Costs() const {
  if (basis == kBasisAllHosts && all_hosts_goodput > 0) {
    MeasuredCosts c{all_hosts_goodput, all_hosts_overhead_ns};
    // The ring steps per size: what a message of each size took with every host sending. On
    // busy cores noise only ever adds time, and a message never takes less time than a smaller
    // one: a size measured slower than a larger one (a step that waited on the scheduler) is
    // given the larger one's time, the lower envelope.
    c.message_times = RingStepTimes(ring_steps);
    for (size_t i = c.message_times.size(); i-- > 1;) {
      c.message_times[i - 1].second =
          std::min(c.message_times[i - 1].second, c.message_times[i].second);
    }
    // One size says nothing a rate and an overhead do not.
    if (c.message_times.size() < 2) c.message_times.clear();
    BurstFloors(ring_steps, all_hosts_gbps, &c);
    return c;
  }
  return {goodput, message_overhead_ns};
}

int Calibration::ScannedHosts() const {
  if (scanned_hosts > 0) return scanned_hosts;
  if (!ring_steps.is_object() || !ring_steps.contains("ring") ||
      !ring_steps["ring"].is_number_integer()) {
    return 0;
  }
  return ring_steps["ring"].get<int>();
}

std::string HostCountNote(const Calibration& c, int used_hosts, const std::string& name) {
  const int scanned = c.ScannedHosts();
  if (c.basis != kBasisAllHosts || scanned <= 0 || used_hosts < 2 || scanned == used_hosts) {
    return "";
  }
  return fmt::format(
      "calibrated with {} hosts sending at once, this run used {}: on hosts sharing this "
      "machine's cores the calibration's goodput and per-message cost follow how many send "
      "(`genie testbed calibrate {} --hosts {}` measures them for this run)",
      scanned, used_hosts, name, used_hosts);
}

std::string TimeoutNote(const Calibration& c, const std::string& name) {
  if (c.scan_timeouts <= 0) return "";
  return fmt::format(
      "testbed {}: its queues drop: {} TCP retransmission timeout(s) during the scan (its incast "
      "and all-to-all put every host's connections on one link); each stalls a connection for "
      "200 ms or more, which the flow model (no losses) does not predict. A run whose "
      "connections share links that much will meet them: its prediction counts them and says "
      "so (a star of 1 Gbit/s links: 40-51 with 256 KB queues, 13-14 with 512 KB, 1-2 with 1 "
      "MB, 0 with the default)",
      name, c.scan_timeouts);
}

std::vector<std::string> RunNotes(const Calibration& c, const std::string& name, int used_hosts,
                                  double incast_share) {
  std::vector<std::string> notes;
  for (std::string note : {HostCountNote(c, used_hosts, name), TimeoutNote(c, name),
                           IncastSendNote(c, name, incast_share)}) {
    if (!note.empty()) notes.push_back(std::move(note));
  }
  return notes;
}

std::string IncastSendNote(const Calibration& c, const std::string& name, double share) {
  if (c.incast_send < 0 || c.incast_send >= share) return "";
  return fmt::format(
      "testbed {}: a host receiving from the others sent {:.2f} of what it sends alone: its "
      "connections' ACKs wait in the switch's queue toward it, behind what it receives, so a "
      "window that does not grow to cover that round trip (bbr's, bounded; cubic's, small after "
      "slow start or a loss) leaves its link idle. A host of a run receiving from several peers "
      "while it sends can send slower than predicted (the flow model shares links max-min); a "
      "shallower queue keeps more (bench/incast_outbound.sh)",
      name, c.incast_send);
}

nlohmann::json Calibration::ToJson() const {
  nlohmann::json j = {{"goodput", goodput},
                      {"message_overhead_ns", message_overhead_ns},
                      {"median_gbps", median_gbps},
                      {"median_rtt_us", median_rtt_us},
                      {"basis", basis},
                      {"measured", measured}};
  if (all_hosts_goodput > 0) {
    j["all_hosts"] = {{"goodput", all_hosts_goodput},
                      {"message_overhead_ns", all_hosts_overhead_ns},
                      {"gbps", all_hosts_gbps},
                      {"ring_steps", ring_steps}};
  }
  if (!ecmp_routes.is_null()) j["ecmp_routes"] = ecmp_routes;
  if (!cpu_pressure.is_null()) j["cpu_pressure"] = cpu_pressure;
  if (scan_timeouts >= 0) j["scan_timeouts"] = scan_timeouts;
  if (incast_send >= 0) j["incast_send"] = incast_send;
  if (scanned_hosts > 0) j["scanned_hosts"] = scanned_hosts;
  if (!settings.empty()) j["settings"] = settings;
  return j;
}

Result<Calibration> CalibrationFromDoctor(const Layout& layout, const nlohmann::json& doctor,
                                          bool accept_findings, const std::string& basis) {
  if (basis != kBasisAllHosts && basis != kBasisOnePair) {
    return Status::InvalidArgument("calibration basis \"" + basis + "\" is unknown; give " +
                                   kBasisAllHosts + " or " + kBasisOnePair);
  }
  const uint64_t rate = layout.HostLinkRate();
  if (rate == 0) return Status::InvalidArgument("testbed " + layout.name() + " has no host links");
  if (!doctor.is_object() || !doctor.contains("reference_gbps") ||
      !doctor.contains("reference_rtt_us") || !doctor.contains("findings")) {
    return Status::InvalidArgument(
        "the doctor's scan has no reference_gbps, reference_rtt_us or "
        "findings: was it written by another genie version?");
  }
  if (!accept_findings && !doctor["findings"].empty()) {
    std::string found;
    for (const auto& f : doctor["findings"]) found += "\n  " + f.value("text", std::string("?"));
    return Status::InvalidArgument("testbed " + layout.name() +
                                   " is not healthy, calibrating on it would teach the model "
                                   "the fault:" +
                                   found + "\nclear its faults (genie testbed fault " +
                                   layout.name() +
                                   " clear) and calibrate again, or pass --accept-findings");
  }
  Calibration c;
  c.median_gbps = doctor["reference_gbps"].get<double>();
  const double leaf_median = IntraLeafMedianGbps(layout, doctor);
  if (leaf_median > 0) c.median_gbps = leaf_median;
  c.median_rtt_us = doctor["reference_rtt_us"].get<double>();
  if (!(c.median_gbps > 0) || !(c.median_rtt_us > 0)) {
    return Status::InvalidArgument("the doctor's scan measured no transfer or round trip");
  }
  c.goodput = c.median_gbps * 1e9 / (static_cast<double>(rate) / 8);
  c.message_overhead_ns = c.median_rtt_us * 1e3 / 2;
  const nlohmann::json steps = doctor.value("ring_steps", nlohmann::json());
  if (steps.is_object() && steps.contains("gbps") && steps.contains("alpha_ns") &&
      steps["gbps"].is_number() && steps["alpha_ns"].is_number() &&
      steps["gbps"].get<double>() > 0) {
    // The bulk steps' rate when the scan has them per size, else the doctor's fit.
    const double bulk = BulkGbps(RingStepTimes(steps));
    c.all_hosts_gbps = bulk > 0 ? bulk : steps["gbps"].get<double>();
    c.all_hosts_goodput = c.all_hosts_gbps * 1e9 / (static_cast<double>(rate) / 8);
    c.all_hosts_overhead_ns = std::max(0.0, steps["alpha_ns"].get<double>());
    c.ring_steps = steps;
    if (doctor.contains("hosts") && doctor["hosts"].is_array()) {
      c.scanned_hosts = static_cast<int>(doctor["hosts"].size());
    }
  }
  if (doctor.contains("incast_send_share") && doctor["incast_send_share"].is_number()) {
    c.incast_send = doctor["incast_send_share"].get<double>();
  }
  // The model's goodput is at most 1; a fit above it (noise, tbf's burst) is clipped there.
  c.all_hosts_goodput = std::min(c.all_hosts_goodput, 1.0);
  c.basis = basis == kBasisAllHosts && c.all_hosts_goodput > 0 ? kBasisAllHosts : kBasisOnePair;
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  c.measured = when;
  return c;
}

std::string CalibrationPath(const std::string& name, env::Env* env) {
  return StateDir(env) + "/" + name + ".calibration.json";
}

namespace {

// Every calibration in the file, the latest (its top level) first; an error when unreadable.
Result<std::vector<Calibration>> LoadAll(const std::string& name, env::Env* env);

}  // namespace

Status SaveCalibration(const std::string& name, const Calibration& c, env::Env* env) {
  if (env == nullptr) env = env::Env::Default();
  const std::string path = CalibrationPath(name, env), tmp = path + ".tmp";
  // The calibrations under other settings stay beside it (an unreadable file is replaced).
  nlohmann::json doc = c.ToJson();
  nlohmann::json others = nlohmann::json::array();
  if (auto all = LoadAll(name, env); all.ok()) {
    for (const Calibration& old : *all) {
      if (old.settings == c.settings || others.size() + 1 >= kCalibrationsKept) continue;
      others.push_back(old.ToJson());
    }
  }
  if (!others.empty()) doc["others"] = std::move(others);
  if (!env->WriteFile(tmp, doc.dump(1) + "\n").ok()) {
    return Status::IoError("cannot write " + tmp + ": check that the folder is writable");
  }
  // Readers see the old file or the new, never half.
  if (Status st = env->RenameFile(tmp, path); !st.ok()) {
    return Status::IoError("cannot rename " + tmp + " to " + path + ": " + st.message());
  }
  return Status::Ok();
}

namespace {

// One calibration object of the file (its top level, or one of "others").
Result<Calibration> ParseCalibration(const nlohmann::json& j, const std::string& path,
                                     const std::string& name) {
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
  c.basis = j.value("basis", std::string(kBasisOnePair));
  if (j.contains("cpu_pressure")) c.cpu_pressure = j["cpu_pressure"];
  if (j.contains("ecmp_routes")) c.ecmp_routes = j["ecmp_routes"];
  c.scan_timeouts = j.value("scan_timeouts", int64_t{-1});
  c.incast_send = j.value("incast_send", -1.0);
  c.scanned_hosts = j.value("scanned_hosts", 0);
  if (j.contains("settings") && j["settings"].is_object()) {
    for (const auto& [k, v] : j["settings"].items()) {
      if (v.is_string()) c.settings[k] = v.get<std::string>();
    }
  }
  if (j.contains("all_hosts") && j["all_hosts"].is_object()) {
    const nlohmann::json& a = j["all_hosts"];
    c.all_hosts_goodput = a.value("goodput", 0.0);
    c.all_hosts_overhead_ns = a.value("message_overhead_ns", 0.0);
    c.all_hosts_gbps = a.value("gbps", 0.0);
    c.ring_steps = a.value("ring_steps", nlohmann::json());
  }
  if (c.basis != kBasisAllHosts && c.basis != kBasisOnePair) {
    return Status::InvalidArgument(path + ": basis \"" + c.basis +
                                   "\" is unknown; run genie "
                                   "testbed calibrate " +
                                   name + " again");
  }
  if (c.basis == kBasisAllHosts &&
      !(c.all_hosts_goodput > 0 && c.all_hosts_goodput <= 1.5 && c.all_hosts_overhead_ns >= 0)) {
    return Status::InvalidArgument(path +
                                   ": basis all-hosts without its figures; run genie "
                                   "testbed calibrate " +
                                   name + " again");
  }
  if (!(c.goodput > 0 && c.goodput <= 1.5) || !(c.message_overhead_ns >= 0)) {
    return Status::InvalidArgument(fmt::format(
        "{}: goodput {} or message_overhead_ns {} out of range; run genie testbed calibrate {} "
        "again",
        path, c.goodput, c.message_overhead_ns, name));
  }
  return c;
}

Result<std::vector<Calibration>> LoadAll(const std::string& name, env::Env* env) {
  const std::string path = CalibrationPath(name, env);
  std::vector<Calibration> out;
  if (!env->FileExists(path)) return out;
  const auto text = env->ReadFile(path);
  const auto j = text.ok() ? nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false)
                           : nlohmann::json();
  GENIE_ASSIGN_OR_RETURN(Calibration latest, ParseCalibration(j, path, name));
  out.push_back(std::move(latest));
  if (j.contains("others") && j["others"].is_array()) {
    for (const auto& o : j["others"]) {
      GENIE_ASSIGN_OR_RETURN(Calibration c, ParseCalibration(o, path, name));
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace

Result<std::optional<Calibration>> LoadCalibration(const std::string& name, env::Env* env) {
  if (env == nullptr) env = env::Env::Default();
  GENIE_ASSIGN_OR_RETURN(std::vector<Calibration> all, LoadAll(name, env));
  if (all.empty()) return std::optional<Calibration>();
  return std::optional<Calibration>(std::move(all.front()));
}

Result<std::optional<ChosenCalibration>> LoadCalibrationFor(
    const std::string& name, const std::map<std::string, std::string>& want, env::Env* env) {
  if (env == nullptr) env = env::Env::Default();
  GENIE_ASSIGN_OR_RETURN(std::vector<Calibration> all, LoadAll(name, env));
  if (all.empty()) return std::optional<ChosenCalibration>();
  ChosenCalibration chosen{all.front(), false, static_cast<int>(all.size())};
  for (const Calibration& c : all) {  // the latest first
    if (!want.empty() && c.settings == want) {
      chosen.calibration = c;
      chosen.matched = true;
      break;
    }
  }
  return std::optional<ChosenCalibration>(std::move(chosen));
}

std::string ProbeRttYml(const std::map<std::string, std::string>* want,
                        const std::optional<Calibration>& cal, uint64_t host_rate_bps) {
  std::string cc;
  if (want != nullptr) {
    if (auto it = want->find("tcp_congestion"); it != want->end()) cc = it->second;
  }
  if (cc.empty() && cal) {
    if (auto it = cal->settings.find("tcp_congestion"); it != cal->settings.end()) cc = it->second;
  }
  if (cc != "bbr") return "";
  const double gbps =
      host_rate_bps > 0 ? kProbeRttGbps * static_cast<double>(host_rate_bps) / 1e9 : kProbeRttGbps;
  return fmt::format(
      "# The hosts' TCP is bbr: each connection's PROBE_RTT (sim/flow_model.h), measured here; its "
      "bandwidth a share of the host links' rate.\n"
      "probe_rtt: {{interval: {}, duration: {}, bandwidth: {:.6g}}}\n",
      kProbeRttIntervalNs, kProbeRttDurationNs, gbps);
}

Result<std::string> TestbedNetworkYml(const std::string& name, int ranks_per_host,
                                      double one_way_latency_ns, std::string* note,
                                      const std::map<std::string, std::string>* want,
                                      std::optional<ChosenCalibration>* chosen) {
  GENIE_ASSIGN_OR_RETURN(Layout layout, Load(name));
  GENIE_ASSIGN_OR_RETURN(
      std::optional<ChosenCalibration> picked,
      LoadCalibrationFor(name, want ? *want : std::map<std::string, std::string>()));
  if (chosen) *chosen = picked;
  std::optional<Calibration> cal;
  if (picked) cal = picked->calibration;
  // A leaf-spine hashing on addresses: ask its leaves which spine each pair takes (ecmp.h).
  std::vector<config::EcmpRoute> routes;
  std::string ecmp_note;
  if (EcmpKnown(layout)) {
    SystemShell shell;
    auto asked = QueryEcmpRoutes(layout, shell);
    if (asked.ok()) {
      routes = std::move(*asked);
      ecmp_note = fmt::format("; ECMP l3: {} pairs on their known spine", routes.size());
    } else {
      ecmp_note = "; ECMP l3 but its spines unknown (split): " + asked.status().message();
    }
  }
  if (!cal) {
    if (note) {
      *note =
          "uncalibrated (defaults; genie testbed calibrate " + name + " measures them)" + ecmp_note;
    }
    return ToNetworkYml(layout, ranks_per_host,
                        one_way_latency_ns < 0 ? 30'000.0 : one_way_latency_ns, nullptr, &routes,
                        UsableCores()) +
           ProbeRttYml(want, cal, layout.HostLinkRate());
  }
  const MeasuredCosts costs = cal->Costs();
  if (note) {
    const int scanned = cal->ScannedHosts();
    const int all = static_cast<int>(layout.hosts.size());
    *note = fmt::format("calibrated {} ({}{}): goodput {:.3f}, message overhead {:.1f} us{}",
                        cal->measured, cal->basis,
                        cal->basis == kBasisAllHosts && scanned > 0 && scanned < all
                            ? fmt::format(", {} of {} hosts", scanned, all)
                            : "",
                        costs.goodput, costs.message_overhead_ns / 1e3, ecmp_note);
  }
  return ToNetworkYml(layout, ranks_per_host, one_way_latency_ns < 0 ? 1.0 : one_way_latency_ns,
                      &costs, &routes, UsableCores()) +
         ProbeRttYml(want, cal, layout.HostLinkRate());
}

}  // namespace genie::testbed
