// Calibration: what a testbed's links really give, measured (`genie testbed calibrate NAME`
// runs `genie doctor` on it, one rank per host) and kept beside its description
// (StateDir()/NAME.calibration.json, removed by Down), so the network description the flow
// model predicts with (ToNetworkYml, `genie run --predict` on the testbed) carries the measured
// goodput and per-message cost instead of defaults:
//  * goodput = the median pair's goodput (one direction, alone on its path) / the host links'
//    rate: what TCP and genie's transport get of a link (on a leaf-spine, the median of the
//    pairs within a leaf: pairs across leaves may be held by slower leaf-spine links);
//  * message_overhead = half the median small-message round trip: the per-message cost of the
//    kernel stack, the namespaces' veth and bridge and genie's event loop, which on a testbed
//    is all software (the per-link latency is left at 1 ns; a leaf-spine's extra hops are not
//    separated from it).
// Those are one pair's figures, alone on the fabric: what a host pays when it has a CPU of its
// own, as on a real cluster. On a testbed every host's stack shares this machine's few cores,
// and with every host sending at once a step costs more; the doctor's `ring_steps` (every host
// at once, ring neighbour to ring neighbour, 10 message sizes 8 KiB - 4 MiB, fit step time =
// alpha + bytes / rate) give the all-hosts figures:
//  * all_hosts.goodput = the bulk steps' rate (sizes of at least 1/8 of the largest: the rate
//    of a link kept busy) / the host links' rate;
//  * all_hosts.message_overhead_ns = alpha, the fixed cost of a step with every host busy;
//  * the step time of each size (ring_steps), which the description carries as the flow
//    model's message_times (a shaper's burst and the shared CPUs make the step time of a size
//    bend away from any one line; the table is what was measured, per size, but for its lower
//    envelope: no size costs more than a larger one did).
// Both sets are recorded; `basis` says which one the network description carries: all-hosts
// (the default, the only one right for namespaces sharing a machine's CPUs) or one-pair (`genie
// testbed calibrate --basis one-pair`; a cluster with a CPU per host, where the two agree).
// A scan with findings (a slow host, loss) is refused: calibrating on a fault would teach the
// model the fault.
// Each calibration records the network settings it was measured under (`settings`: the hosts'
// congestion control and ECN, the links' qdiscs and queues, as report/network_settings.h
// summarises them), and the file keeps one calibration per distinct settings, the latest at
// its top: a run's prediction takes the one measured under the run's own settings
// (LoadCalibrationFor), and says so when there is none. Pure but for the file; main thread of
// the CLI.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/env/env.h"
#include "genie/testbed/layout.h"

namespace genie::testbed {

inline constexpr const char* kBasisAllHosts = "all-hosts";
inline constexpr const char* kBasisOnePair = "one-pair";

struct Calibration {
  // One pair alone.
  double goodput = 0;              // fraction of the host links' rate
  double message_overhead_ns = 0;  // per message, added once
  double median_gbps = 0;          // what goodput was derived from (GB/s = 1e9 B/s)
  double median_rtt_us = 0;
  // Every host at once (ring steps); 0 when the scan had none (an older genie).
  double all_hosts_goodput = 0;
  double all_hosts_overhead_ns = 0;
  double all_hosts_gbps = 0;          // the bulk steps' rate (else the doctor's fit)
  nlohmann::json ring_steps;          // the doctor's figures the fit came from
  std::string basis = kBasisOnePair;  // which set Costs() gives
  // A leaf-spine with a known hash: [[src host, dst host, spine], ...] as its leaves answered
  // when calibrated (a record; network-yml asks them again, ecmp.h). Null: none.
  nlohmann::json ecmp_routes;
  // TCP retransmission timeouts the hosts counted during the scan (TcpExtTCPTimeouts; its
  // incast and all-to-all share every link); -1: not read (an older genie).
  int64_t scan_timeouts = -1;
  // A host's sending while the others send into it over its sending alone (the doctor's
  // incast_send_share): below 0.45 its connections' windows do not cover the round trip
  // through the switch's queue toward it (bbr's bounded ones; cubic's while small); -1: not
  // measured (an older genie, or fewer than 3 hosts).
  double incast_send = -1;
  // How contended this machine's CPUs were during the scan (record/cpu_pressure.h's JSON);
  // null: not recorded (an older genie).
  nlohmann::json cpu_pressure;
  std::string measured;  // when (ISO 8601 UTC)
  // The network settings it was measured under, by name (report/network_settings.h's summary:
  // tcp_congestion, tcp_ecn, host_nics, host_links, switch_links); empty: not recorded (an
  // older genie).
  std::map<std::string, std::string> settings;
  // The figures the network description carries (basis).
  MeasuredCosts Costs() const;
  // How many hosts the scan ran on, all sending at once in the ring steps (`genie testbed
  // calibrate --hosts`, else every host of the testbed; a leaf-spine's rings are a leaf each,
  // all leaves at once); 0 when not recorded.
  int scanned_hosts = 0;
  // scanned_hosts, or for an older calibration its ring's size (a star's hosts); 0: unknown.
  int ScannedHosts() const;
  nlohmann::json ToJson() const;
};

// What a prediction on testbed `name` should say when its all-hosts calibration was measured
// with another number of hosts sending than the run's `used_hosts`: on hosts sharing this
// machine's cores its goodput and per-message cost follow how many send. "" when they agree,
// or the calibration is one-pair or does not record it.
std::string HostCountNote(const Calibration& c, int used_hosts, const std::string& name);

// What calibrate says when its scan saw retransmission timeouts: the testbed's queues drop
// when connections share a link. "" when it saw none or did not count them.
std::string TimeoutNote(const Calibration& c, const std::string& name);

// What calibrate says when a host receiving from the others kept less than `share` (the
// doctor's report::kIncastSendShare) of its link for its own sending: runs with such hosts
// will be slower than predicted. "" otherwise, or when not measured.
std::string IncastSendNote(const Calibration& c, const std::string& name, double share);

// Every note above that a run predicted from `c` carries (`genie run --predict` prints them
// beside its iterations, as calibrate did): the host count's, the timeouts', the incast's.
std::vector<std::string> RunNotes(const Calibration& c, const std::string& name, int used_hosts,
                                  double incast_share);

// From `genie doctor --json`'s document for testbed `layout`. Fails when the scan found
// anomalies (named in the message) unless `accept_findings`. `basis`: kBasisAllHosts (falls
// back to one-pair, and says so in the basis, when the scan has no ring steps) or kBasisOnePair.
Result<Calibration> CalibrationFromDoctor(const Layout& layout, const nlohmann::json& doctor,
                                          bool accept_findings = false,
                                          const std::string& basis = kBasisAllHosts);

// The calibration file's path and its I/O go through `env` (nullptr: the real one).
std::string CalibrationPath(const std::string& name, env::Env* env = nullptr);
Status SaveCalibration(const std::string& name, const Calibration& c, env::Env* env = nullptr);
// Saving keeps the file's calibrations under other settings (up to kCalibrationsKept, the most
// recent) and replaces one under the same settings.
inline constexpr size_t kCalibrationsKept = 8;
// The latest calibration; nullopt when testbed `name` was never calibrated; an error when the
// file is unreadable.
Result<std::optional<Calibration>> LoadCalibration(const std::string& name,
                                                   env::Env* env = nullptr);

// The calibration a run with network settings `want` should be predicted with: the latest one
// measured under exactly those settings, else the latest one (`matched` false). nullopt: never
// calibrated.
struct ChosenCalibration {
  Calibration calibration;
  bool matched = false;
  int kept = 0;  // calibrations in the file
};
Result<std::optional<ChosenCalibration>> LoadCalibrationFor(
    const std::string& name, const std::map<std::string, std::string>& want,
    env::Env* env = nullptr);

// bbr's PROBE_RTT on a testbed's hosts (network.yml probe_rtt, sim/flow_model.h): every 10 s
// for 200 ms each connection holds 4 packets in flight. What one moved meanwhile, measured on
// this 2-core machine kind at 1 Gbit/s (2026-12-07, net/tcp/probe_rtt_watch.h): 8-16 MB/s
// sharing its link with another connection, ~40 MB/s alone (~120 before); the cost a step
// showed, 150-300 ms a probe, is nearer the lower figure (the probe's small segments also take
// the cores). Its 4 packets go round through the queues the others keep, whose delay is their
// bytes over the link's rate, so what it moves is a share of that rate: 0.015 GB/s of 1 Gbit/s
// (at 100 Mbit/s 0.015 GB/s would be more than the link and the probe would cost nothing).
inline constexpr double kProbeRttIntervalNs = 10e9;
inline constexpr double kProbeRttDurationNs = 200e6;
inline constexpr double kProbeRttGbps = 0.015;  // GB/s of 2^30 B, per connection, at 1 Gbit/s

// The network.yml lines that model bbr's PROBE_RTT when the run's congestion control (`want`'s
// tcp_congestion; without one, the calibration's) is bbr; "" otherwise. The probe's bandwidth
// is kProbeRttGbps scaled from 1 Gbit/s to `host_rate_bps` (the hosts' links; 0: unknown,
// kProbeRttGbps as it is).
std::string ProbeRttYml(const std::map<std::string, std::string>* want,
                        const std::optional<Calibration>& cal, uint64_t host_rate_bps);

// Testbed `name` as the network.yml the models read (ToNetworkYml), its calibration's
// goodput and message overhead included when it has one. `one_way_latency_ns` < 0: the
// default, 30 µs per link uncalibrated (the bridge's hops, order of magnitude), 1 ns calibrated
// (the measured overhead holds the whole small-message time). `note`, when given, says which.
// `want`: the settings of the run to predict (nullptr: the latest calibration, whatever its
// settings); `chosen`, when given, gets the calibration used (nullopt: uncalibrated).
Result<std::string> TestbedNetworkYml(const std::string& name, int ranks_per_host,
                                      double one_way_latency_ns = -1, std::string* note = nullptr,
                                      const std::map<std::string, std::string>* want = nullptr,
                                      std::optional<ChosenCalibration>* chosen = nullptr);

}  // namespace genie::testbed
