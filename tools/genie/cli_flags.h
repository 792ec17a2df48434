// Command-line flags shared by the commands that execute a workload (simulate, run): the
// workload and its ASTRA-sim configuration files, under genie's short names and ASTRA-sim's
// long ones, so an ASTRA-sim command line works as it is. Also the validators every numeric
// flag of run, launch and netcheck goes through, so that nonsense (--peer-timeout 0,
// --spin-us -5, --iterations 0) is refused while parsing, with exit 2 and the flag's name.
// Main thread only.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "genie/common/units.h"
#include "genie/real_backend/real_backend.h"
#include "genie/runtime/run_setup.h"

namespace genie::cli {

// An integer from `min` to `max`; the message gives the range in words, not float limits.
inline CLI::Validator IntIn(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        long long v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "'" + text + "' is not a whole number";
        if (v < min || v > max) {
          return "got " + text + "; use " + std::to_string(min) + " to " + std::to_string(max);
        }
        return "";
      },
      "INT in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
}

// A duration such as 30s, 500ms or 2m: above zero unless `zero_ok`.
inline CLI::Validator Duration(bool zero_ok) {
  return CLI::Validator(
      [zero_ok](std::string& text) -> std::string {
        auto d = ParseDuration(text);
        if (!d.ok()) return d.status().message();
        if (*d < 0 || (*d == 0 && !zero_ok)) {
          return "got " + text + "; use a duration above " + (zero_ok ? "or at 0" : "0") +
                 ", e.g. 30s or 500ms";
        }
        return "";
      },
      zero_ok ? "DURATION>=0" : "DURATION>0");
}

// A byte count such as 1MiB or 4096: above zero unless `zero_ok`.
inline CLI::Validator ByteCount(bool zero_ok) {
  return CLI::Validator(
      [zero_ok](std::string& text) -> std::string {
        auto b = ParseBytes(text);
        if (!b.ok()) return b.status().message();
        if (*b == 0 && !zero_ok) return "got " + text + "; use a size above 0, e.g. 1MiB";
        return "";
      },
      zero_ok ? "BYTES>=0" : "BYTES>0");
}

// --transport and the libfabric transport's flags (run, netcheck, launch's pass-through).
inline void AddTransportFlags(CLI::App& app, real_backend::TransportChoice& t) {
  app.add_option("--transport", t.kind,
                 "tcp (kernel sockets) or fabric (libfabric: RoCE/IB, EFA, Slingshot; "
                 "docs/transports.md)")
      ->check(CLI::IsMember({"tcp", "fabric"}));
  app.add_option("--fabric-provider", t.fabric_provider,
                 "libfabric provider for --transport fabric, as fi_info names it: tcp;ofi_rxm "
                 "(default), verbs;ofi_rxm, efa, cxi, ...");
  app.add_option("--fabric-domain", t.fabric_domain,
                 "libfabric domain (NIC, e.g. mlx5_0); a comma list is mapped by local rank like "
                 "--iface; default: the provider's (socket providers: the --bind interface)");
  app.add_flag("--fabric-rma", t.fabric_rma,
               "--transport fabric: payloads as one-sided writes with remote CQ data into the "
               "receiver's registered buffer (NCCL's RDMA path) instead of tagged messages");
}

// Channels per peer pair: the TCP transport opens 1 to 64 connections.
inline constexpr int kMaxChannels = 64;

inline void AddWorkloadFlags(CLI::App& app, runtime::SetupFlags& f) {
  app.add_option("workload", f.workload, "Workload: a folder or <prefix> of <prefix>.<rank>.et files");
  app.add_option("--workload,--workload-configuration", f.workload, "Same as the positional workload");
  app.add_option("--system,--system-configuration", f.system_path, "ASTRA-sim system.json");
  app.add_option("--memory,--remote-memory-configuration", f.memory_path, "ASTRA-sim memory.json");
  app.add_option("--comm-group,--comm-group-configuration", f.comm_group,
                 "Comm-group JSON {\"<group>\": [ranks]} (default: workload.json / "
                 "comm_group.json beside the traces)");
  app.add_option("--ctrl-deps", f.ctrl_deps, "Count ctrl_deps: on, off or auto")
      ->check(CLI::IsMember({"on", "off", "auto"}));
  app.add_option("--default-comm-size", f.default_comm_size,
                 "Size for collectives whose trace has no comm_size (e.g. 1MiB)")
      ->check(ByteCount(/*zero_ok=*/false));
  app.add_option("--channels", f.channels, "Parallel flows per peer pair (NCCL channels)")
      ->check(IntIn(1, kMaxChannels));
  app.add_option("--slice", f.slice, "Largest message on the wire (e.g. 512KiB; default none)")
      ->check(ByteCount(/*zero_ok=*/false));
}

// The network model a prediction uses, and the flow model's parameters (docs/simulation.md).
inline void AddNetworkModelFlags(CLI::App& app, std::string& model, runtime::SetupFlags& f,
                                 const std::string& default_note) {
  app.add_option("--network-model", model,
                 "unaware (no contention, ASTRA-sim), aware (store-and-forward FIFO links, "
                 "ASTRA-sim) or flow (cut-through, links shared max-min fairly); " +
                     default_note)
      ->check(CLI::IsMember({"unaware", "aware", "flow"}));
  app.add_option("--goodput", f.goodput,
                 "Flow model: fraction of each link's bandwidth a transfer gets (default: the "
                 "network.yml's `goodput`, else 0.94)")
      ->check(CLI::Range(1e-6, 1.0));
  app.add_option("--message-overhead", f.message_overhead_ns,
                 "Flow model: software cost per message in ns (default: the network.yml's "
                 "`message_overhead`, else 5000)")
      ->check(CLI::Range(0.0, 1e12));
}

}  // namespace genie::cli
