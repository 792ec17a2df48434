// genie traffic: the rank program of a jobs file's background traffic (`type: traffic`,
// docs/jobs.md): rank 2p sends bulk TCP to rank 2p+1, paced or not, on a schedule, recording
// what it moved. Also runs alone: genie launch -n 2 --testbed T -- traffic --duration 5s.
// The flags fill driver::TrafficOptions; driver/traffic.h does the rest.
#include <fmt/format.h>

#include "genie/common/units.h"
#include "genie/driver/traffic.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"

namespace genie::cli {

GENIE_COMMAND(traffic, "Background bulk TCP between rank pairs (a jobs file's traffic job)") {
  struct Args {
    driver::TrafficOptions o;
    std::string rate, bytes, duration, on, off, interval = "100ms", timeout = "30s";
  };
  auto a = std::make_shared<Args>();
  app.add_option("--parallel", a->o.parallel, "TCP connections per pair")->check(IntIn(1, 64));
  app.add_option("--rate", a->rate, "Per pair, e.g. 200mbit (default: as fast as TCP goes)");
  app.add_option("--bytes", a->bytes, "Per pair: stop after this many (default: no limit)")
      ->check(ByteCount(/*zero_ok=*/false));
  app.add_option("--duration", a->duration, "Stop after this long (default: when stopped)")
      ->check(Duration(/*zero_ok=*/false));
  app.add_option("--on", a->on, "Send for this long, then pause for --off, and again")
      ->check(Duration(/*zero_ok=*/false));
  app.add_option("--off", a->off, "The pause between --on periods")
      ->check(Duration(/*zero_ok=*/false));
  app.add_option("--interval", a->interval, "Between samples of the bytes moved")
      ->check(Duration(/*zero_ok=*/false));
  app.add_option("--output,-o", a->o.output, "Folder for each rank's traffic-rank-N.jsonl");
  app.add_option("--bind,--iface", a->o.bind,
                 "Address or interface to send and listen on (default: $GENIE_BIND, set by "
                 "genie launch --testbed, else 127.0.0.1)")
      ->envname("GENIE_BIND");
  app.add_option("--rendezvous", a->o.rendezvous, "tcp:HOST:PORT or dir:PATH; default: the launcher's");
  app.add_option("--job-id", a->o.job_id, "Job id (default: the launcher's)");
  app.add_option("--connect-timeout", a->timeout, "Give up on a peer that does not show")
      ->check(Duration(/*zero_ok=*/false));
  return [a]() -> int {
    driver::TrafficOptions o = a->o;
    if (a->on.empty() != a->off.empty()) {
      fmt::print(stderr, "genie traffic: give --on and --off together\n");
      return 2;
    }
    if (!a->rate.empty()) {
      auto r = ParseBitRate(a->rate);
      if (!r.ok() || *r == 0) {
        fmt::print(stderr, "genie traffic: --rate: {}\n",
                   r.ok() ? std::string("must be > 0") : r.status().message());
        return 2;
      }
      o.rate_bps = *r;
    }
    auto dur = [](const std::string& s) { return s.empty() ? TimeNs{0} : *ParseDuration(s); };
    if (!a->bytes.empty()) o.bytes = *ParseBytes(a->bytes);
    o.duration_ns = dur(a->duration);
    o.on_ns = dur(a->on);
    o.off_ns = dur(a->off);
    o.interval_ns = dur(a->interval);
    o.connect_timeout = dur(a->timeout);
    return driver::RunTraffic(o);
  };
}

}  // namespace genie::cli
