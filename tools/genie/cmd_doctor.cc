// `genie doctor`: a health scan of the fabric the ranks run on, one rank per host
// (genie launch --testbed NAME -n HOSTS -- doctor; mpiexec/srun with one task per node).
// Flags only; the scan is driver/doctor.h, the verdict report/doctor_findings.h.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "genie/common/units.h"
#include "genie/driver/doctor.h"
#include "genie/launch/local_launcher.h"
#include "genie/launch/rank_env.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"

GENIE_COMMAND(doctor, "Scan the fabric: name the slow host, side, pair or lossy link") {
  struct Args {
    std::string bytes = "4MiB", message = "256KiB", peer_timeout = "30s", expect;
    std::string ring_steps = "healthy";
    genie::driver::DoctorOptions o;
  };
  auto a = std::make_shared<Args>();
  app.add_option("--bytes", a->bytes, "Bytes per direction of each pair (default 4MiB)")
      ->check(genie::cli::ByteCount(/*zero_ok=*/false));
  app.add_option("--message-size", a->message, "Size of the messages carrying them (256KiB)")
      ->check(genie::cli::ByteCount(/*zero_ok=*/false));
  app.add_option("--pings", a->o.pings, "Round trips per pair; the median is kept")
      ->check(genie::cli::IntIn(1, 100000));
  app.add_option("--expect", a->expect,
                 "The link rate every host should get (1gbit, 100gbit); default: the testbed's, "
                 "else hosts are judged against each other only");
  app.add_option("--slow", a->o.thresholds.slow,
                 "A transfer is slow below this fraction of its peers' median (0.7)")
      ->check(CLI::Range(0.05, 0.99));
  app.add_option("--json", a->o.json_path, "Write the scan and findings as JSON here (rank 0)");
  app.add_option("--report", a->o.report_path,
                 "Write the scan as one self-contained HTML page: heat map of measured / "
                 "expected, findings (rank 0; docs/report.md)");
  app.add_option("--bind,--iface", a->o.bind,
                 "Address or interface to listen and connect from; a comma list is mapped by "
                 "local rank (like NCCL_SOCKET_IFNAME)")
      ->envname("GENIE_BIND");
  app.add_option("--testbed", a->o.testbed, "The genie testbed the ranks run on (expected rate)")
      ->envname("GENIE_TESTBED");
  app.add_flag("--allow-shared-host", a->o.allow_shared_host,
               "Scan even when ranks share a host (refused otherwise): every figure is marked "
               "loopback and no verdict is given");
  app.add_option("--host", a->o.host, "This rank's host name in the report (default: hostname)")
      ->envname("GENIE_HOST");
  app.add_option("--peer-timeout", a->peer_timeout, "Give up on a silent peer after this long")
      ->check(genie::cli::Duration(/*zero_ok=*/false));
  app.add_option("--ring-steps", a->ring_steps,
                 "Time ring steps with every host active (what genie testbed calibrate fits): "
                 "healthy (only on a scan without findings), always, never")
      ->check(CLI::IsMember({"healthy", "always", "never"}));
  app.add_option("--tcp-congestion", a->o.tcp_congestion,
                 "TCP congestion control of the scan's connections (e.g. cubic, bbr; default: "
                 "the host's)");
  genie::cli::AddTransportFlags(app, a->o.transport);
  return [a]() -> int {
    auto env = genie::launch::DiscoverRankEnv();
    if (!env.ok()) {
      fmt::print(stderr, "genie doctor: {}\n", env.status().message());
      return genie::launch::kExitBadInput;
    }
    auto bytes = genie::ParseBytes(a->bytes);
    auto message = genie::ParseBytes(a->message);
    auto timeout = genie::ParseDuration(a->peer_timeout);
    if (!bytes.ok() || !message.ok() || !timeout.ok()) {
      fmt::print(stderr, "genie doctor: {}\n",
                 (!bytes.ok() ? bytes.status() : !message.ok() ? message.status() : timeout.status())
                     .message());
      return genie::launch::kExitBadInput;
    }
    a->o.bytes = *bytes;
    a->o.message = *message;
    a->o.peer_timeout = *timeout;
    using genie::driver::RingStepsMode;
    a->o.ring_steps = a->ring_steps == "always"  ? RingStepsMode::kAlways
                      : a->ring_steps == "never" ? RingStepsMode::kNever
                                                 : RingStepsMode::kHealthy;
    if (!a->expect.empty()) {
      auto rate = genie::ParseBitRate(a->expect);
      if (!rate.ok()) {
        fmt::print(stderr, "genie doctor: --expect: {}\n", rate.status().message());
        return genie::launch::kExitBadInput;
      }
      a->o.expect_bps = *rate;
    }
    return genie::driver::RunDoctorRank(a->o, *env);
  };
}
