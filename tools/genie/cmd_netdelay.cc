// genie netdelay: the testbed's delay helper — holds the packets an iptables NFQUEUE rule sends
// it and lets each go `--delay ± --jitter` after it arrived (testbed/delay_queue.h says how and
// what it guarantees). `genie testbed fault ... delay` starts it inside a host's namespace:
//   ip netns exec NS genie netdelay --queue N --delay 5ms [--jitter 1ms]
// paired with
//   ip netns exec NS iptables -t mangle -A PREROUTING -i eth0 -j NFQUEUE --queue-num N
//   --queue-bypass
// It runs until SIGTERM or SIGINT, then releases everything it holds and exits 0.
#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>

#include "genie/common/units.h"
#include "genie/testbed/delay_queue.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"

GENIE_COMMAND(netdelay,
              "Delay (and jitter) the packets of an NFQUEUE: the testbed's delay helper") {
  struct Args {
    int queue = 0;
    std::string delay;
    std::string jitter = "0";
    uint64_t seed = 1;
    long long max_packets = 1 << 16;
    bool no_realtime = false;
  };
  auto a = std::make_shared<Args>();
  app.add_option("--queue", a->queue, "NFQUEUE number the iptables rule sends packets to")
      ->required()
      ->check(genie::cli::IntIn(0, 65535));
  app.add_option("--delay", a->delay, "Added to every packet, e.g. 5ms")
      ->required()
      ->check(genie::cli::Duration(/*zero_ok=*/true));
  app.add_option("--jitter", a->jitter, "Uniform ± around the delay, e.g. 1ms (order is kept)")
      ->check(genie::cli::Duration(/*zero_ok=*/true));
  app.add_option("--seed", a->seed, "Seed of the jitter draws (same seed, same delays)");
  app.add_option("--max-packets", a->max_packets,
                 "Packets the kernel may hold for us; past it they pass undelayed")
      ->check(genie::cli::IntIn(1, 1 << 24));
  app.add_flag("--no-realtime", a->no_realtime,
               "Stay at normal priority (default: SCHED_FIFO, for precise release times)");
  return [a]() -> int {
    genie::testbed::DelayQueueOptions o;
    o.queue_num = a->queue;
    o.delay = *genie::ParseDuration(a->delay);  // checked while parsing
    o.jitter = *genie::ParseDuration(a->jitter);
    o.seed = a->seed;
    o.max_packets = static_cast<uint32_t>(a->max_packets);
    o.realtime = !a->no_realtime;
    return genie::testbed::RunDelayQueue(o);
  };
}
