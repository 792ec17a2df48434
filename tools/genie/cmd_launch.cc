// genie launch: start N local ranks of genie (or, with --exec, of any program) with the rank,
// world size, rendezvous and job id in their environment; forward signals; if a rank fails,
// stop the others and exit non-zero naming it. With --jobs FILE: every job of a jobs file on
// one testbed, each its own launch (driver/jobs_launch.h, docs/jobs.md).
// Also `genie netcheck`: every rank exchanges verified messages with every other over the
// real transport — the smallest end-to-end check that a launch, a rendezvous and the
// network work (genie launch -n 4 -- netcheck --channels 4). Both only parse flags: the
// placement on a testbed and the rank program are driver/testbed_placement.h and
// driver/netcheck.h.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/driver/jobs_launch.h"
#include "genie/driver/netcheck.h"
#include "genie/driver/testbed_placement.h"
#include "genie/launch/local_launcher.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"

namespace {

// More local ranks than this is a typo, not a machine (each rank is a process with sockets).
constexpr int kMaxLocalRanks = 4096;

}  // namespace

GENIE_COMMAND(launch, "Start N local ranks: genie launch -n N -- run --workload W ...") {
  struct Args {
    int n = 0;
    int nodes = 1;
    int node_rank = 0;
    std::string rendezvous;
    std::string job_id;
    bool exec = false;
    std::string grace = "5s";
    std::string testbed;
    std::vector<std::string> command;
    std::string jobs;
    std::string job;
    std::string output;
    std::string job_log;
  };
  auto a = std::make_shared<Args>();
  app.add_option("-n,--ranks", a->n, "Number of ranks to start on this machine (required without --jobs)")
      ->check(genie::cli::IntIn(1, kMaxLocalRanks));
  app.add_option("--jobs", a->jobs,
                 "A jobs file: start every job it lists (workloads, benchmarks, background "
                 "traffic) on one testbed, each with its own ranks, placement, start, job id and "
                 "output folder (docs/jobs.md)");
  app.add_option("--job", a->job, "With --jobs: start only this job of the file, as placed there");
  app.add_option("--output", a->output,
                 "With --jobs: the folder of the jobs' folders (default: the file's output:, "
                 "else <file name>-out)");
  app.add_option("--job-log", a->job_log, "With --job: write its output to this file")
      ->group("");
  app.add_option("--nnodes", a->nodes, "Machines in the job, each running -n ranks (torchrun's)")
      ->check(genie::cli::IntIn(1, 100'000));
  app.add_option("--node-rank", a->node_rank, "Which machine this is, 0 .. nnodes-1")
      ->check(genie::cli::IntIn(0, 100'000 - 1));
  app.add_option("--rendezvous", a->rendezvous,
                 "tcp:NODE0_HOST:PORT (store on rank 0) or a directory all ranks share "
                 "(default: a fresh temporary directory; needed with --nnodes > 1)");
  app.add_option("--job-id", a->job_id, "Job id checked in every connection (default: derived)");
  app.add_flag("--exec", a->exec, "Run any program instead of a genie subcommand");
  app.add_option("--testbed", a->testbed,
                 "Run rank i on host i mod H of this `genie testbed` (inside its namespace, bound "
                 "to its NIC k = local rank mod NICs), rendezvous on h0's address");
  app.add_option("--grace", a->grace, "Wait after SIGTERM before SIGKILL when stopping ranks")
      ->check(genie::cli::Duration(/*zero_ok=*/true));
  app.add_option("command", a->command, "After --: the genie subcommand and its arguments");
  return [a]() -> int {
    auto grace = genie::ParseDuration(a->grace);
    if (!grace.ok()) {
      fmt::print(stderr, "genie launch: --grace: {}\n", grace.status().message());
      return 2;
    }
    if (!a->jobs.empty()) {
      if (a->n != 0 || a->nodes != 1 || a->exec || !a->command.empty()) {
        fmt::print(stderr,
                   "genie launch: --jobs takes each job's ranks and command from the file: "
                   "leave out -n, --nnodes, --exec and the command after --\n");
        return 2;
      }
      genie::driver::JobsLaunchOptions jo;
      jo.jobs_path = a->jobs;
      jo.testbed = a->testbed;
      jo.output = a->output;
      jo.grace = *grace;
      jo.only_job = a->job;
      jo.rendezvous = a->rendezvous;
      jo.job_id = a->job_id;
      jo.log = a->job_log;
      return a->job.empty() ? genie::driver::LaunchJobs(jo) : genie::driver::LaunchOneJob(jo);
    }
    if (!a->job.empty() || !a->output.empty() || !a->job_log.empty()) {
      fmt::print(stderr, "genie launch: --job and --output go with --jobs FILE\n");
      return 2;
    }
    if (a->n == 0 || a->command.empty()) {
      fmt::print(stderr,
                 "genie launch: give -n N and the command after -- (genie launch -n 4 -- run "
                 "--workload W), or --jobs FILE\n");
      return 2;
    }
    genie::launch::LaunchOptions o;
    o.ranks = a->n;
    o.rendezvous = a->rendezvous;
    o.nodes = a->nodes;
    o.node_rank = a->node_rank;
    o.job_id = a->job_id;
    o.grace = *grace;
    if (!a->testbed.empty()) {
      genie::Status st = genie::driver::PlaceOnTestbed(a->testbed, a->nodes, &o);
      if (!st.ok()) {
        fmt::print(stderr, "genie launch: --testbed {}: {}\n", a->testbed, st.message());
        return 2;
      }
    }
    if (!a->exec) o.argv.push_back(genie::driver::SelfExe());
    o.argv.insert(o.argv.end(), a->command.begin(), a->command.end());
    auto r = genie::launch::RunLocalRanks(o);
    if (!r.ok()) {
      fmt::print(stderr, "genie launch: {}\n", r.status().message());
      return 2;
    }
    if (r->exit_code != 0) {
      fmt::print(stderr, "genie launch: {}\n", r->message);
      return r->exit_code;
    }
    return 0;
  };
}

GENIE_COMMAND(netcheck, "Check the real network: every rank exchanges verified messages") {
  struct Args {
    std::string bytes = "1MiB";
    int iters = 10;
    int channels = 1;
    std::string bind = "127.0.0.1";
    std::string tcp_congestion;
    std::string peer_timeout = "30s";
    genie::real_backend::TransportChoice transport;
  };
  auto a = std::make_shared<Args>();
  app.add_option("--bytes", a->bytes, "Message size per peer per iteration")
      ->check(genie::cli::ByteCount(/*zero_ok=*/false));
  app.add_option("--iters", a->iters, "Iterations")->check(genie::cli::IntIn(1, 1'000'000'000));
  app.add_option("--channels", a->channels, "Connections per peer pair")
      ->check(genie::cli::IntIn(1, genie::cli::kMaxChannels));
  app.add_option("--bind,--iface", a->bind,
                 "Address or interface to listen and connect from; a comma list is mapped by "
                 "local rank (like NCCL_SOCKET_IFNAME)")
      ->envname("GENIE_BIND");
  app.add_option("--tcp-congestion", a->tcp_congestion, "TCP congestion control by name");
  app.add_option("--peer-timeout", a->peer_timeout, "Give up on a silent peer after this long")
      ->check(genie::cli::Duration(/*zero_ok=*/false));
  genie::cli::AddTransportFlags(app, a->transport);
  return [a]() -> int {
    genie::driver::NetcheckOptions o;
    auto bytes = genie::ParseBytes(a->bytes);
    auto timeout = genie::ParseDuration(a->peer_timeout);
    if (!bytes.ok() || !timeout.ok()) {
      fmt::print(stderr, "genie netcheck: {}\n",
                 (!bytes.ok() ? bytes.status() : timeout.status()).message());
      return 2;
    }
    o.bytes = *bytes;
    o.iters = a->iters;
    o.channels = a->channels;
    o.bind = a->bind;
    o.tcp_congestion = a->tcp_congestion;
    o.peer_timeout = *timeout;
    o.transport = a->transport;
    return genie::driver::RunNetcheck(o);
  };
}
