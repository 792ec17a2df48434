// genie run: the main job — replay a training workload as real traffic. Every rank is a process
// that walks its Chakra graph with the same Executor as `genie simulate`, sleeps precisely for
// compute, and sends each collective's messages over the real network (TCP). The flags fill
// driver::RunOptions; driver/run.h does the rest.
#include "genie/driver/run.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"

namespace genie::cli {

GENIE_COMMAND(run, "Replay a workload as real network traffic (the main job)") {
  auto f = std::make_shared<driver::RunOptions>();
  AddWorkloadFlags(app, f->setup);
  app.add_option("--network,--network-configuration", f->setup.network_path,
                 "network.yml to predict the same workload with, printed beside the measurement");
  AddNetworkModelFlags(app, f->network_model, f->setup, "for the prediction; default flow");
  app.add_option("--topology", f->setup.topology, "Logical dimensions, e.g. 8x4 (dim 0 fastest)");
  app.add_option("--output,-o", f->output, "Folder for per-rank JSON lines and results.json");
  app.add_option("--trace-out", f->trace_out, "Write a Chrome trace (open in Perfetto)");
  app.add_option("--iterations,-n", f->iterations, "Measured iterations of the whole graph")
      ->check(IntIn(1, 1'000'000));
  app.add_option("--warmup", f->warmup, "Warm-up iterations (not in the statistics)")
      ->check(IntIn(0, 1'000'000));
  app.add_flag("--verify", f->setup.verify, "Send real data, compute reductions, check results");
  app.add_option(
         "--bind,--iface", f->bind,
         "Address or interface (e.g. eth0) to listen on and send from; a comma list is "
         "mapped by local rank, like NCCL_SOCKET_IFNAME (eth0,eth1: one NIC per rank pair); "
         "default: $GENIE_BIND (set by genie launch --testbed), else 127.0.0.1")
      ->envname("GENIE_BIND");
  app.add_option("--intra-host", f->intra_host,
                 "network.yml of one host (e.g. 8 ranks on a 900 GB/s switch): traffic between "
                 "ranks of a host is modelled, only inter-host traffic is sent");
  app.add_option("--rendezvous", f->rendezvous,
                 "tcp:HOST:PORT (store on rank 0) or dir:PATH; default: from the launcher "
                 "(GENIE_RENDEZVOUS, MASTER_ADDR/MASTER_PORT)");
  app.add_option("--clock-sync", f->clock_sync,
                 "auto: measure clock offsets to rank 0 only on other machines; always: also on "
                 "rank 0's (where the truth is 0: a check of the estimate)")
      ->check(CLI::IsMember({"auto", "always"}));
  app.add_option("--job-id", f->job_id,
                 "Job id checked in every connection (default: the launcher's, or derived)");
  app.add_option("--tcp-congestion", f->tcp_congestion, "TCP congestion control (e.g. cubic, bbr)");
  AddTransportFlags(app, f->transport);
  app.add_option("--peer-timeout", f->peer_timeout, "Give up on a silent peer after this long")
      ->check(Duration(/*zero_ok=*/false));
  app.add_option("--spin-us", f->spin_us,
                 "Spin this many µs before each compute deadline (0 = never; default: only "
                 "when this machine's ranks fit on its cores)")
      ->check(IntIn(0, 1'000'000));
  app.add_option("--testbed", f->testbed,
                 "The `genie testbed` this run is on: rank 0 records its counters into the "
                 "results (default: $GENIE_TESTBED, set by genie launch --testbed)")
      ->envname("GENIE_TESTBED");
  app.add_option("--faults", f->setup.faults,
                 "Fault schedule (YAML, docs/testbed.md): rank 0 plays its network faults on the "
                 "testbed (all cleared at the end); each rank plays its compute faults (rank:, "
                 "no testbed needed), and --predict models them")
      ->check(CLI::ExistingFile);
  app.add_flag("--predict", f->predict,
               "After the run, simulate the same workload on the same network (--network, or "
               "the testbed's) and print/record per iteration measured beside predicted, "
               "flagging what is slower than --flag-threshold");
  app.add_option("--baseline", f->baseline,
                 "An earlier healthy run's results.json: compare each iteration with its median "
                 "step and per-type busbw (instead of, or with --predict as well as, the model)")
      ->check(CLI::ExistingFile);
  app.add_option("--flag-threshold", f->flag_threshold,
                 "Flag iterations and ops slower than (1 + this) x expected (default 0.25: "
                 "healthy runs measure within 0.97-1.13x, docs/prediction.md)")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--csv", f->comparison_csv,
                 "Write the per-iteration comparison (--predict's, else --baseline's) as CSV");
  app.add_flag("--localize", f->localize,
               "After the last iteration, before faults are cleared, measure each direction of "
               "every pair of ranks the workload used, alone, and name the slow host and its "
               "side (transmit/receive) or link, as genie doctor does (docs/prediction.md)");
  app.add_option("--report", f->report,
                 "At the end, write one self-contained HTML page of the results (charts per "
                 "iteration, measured beside predicted, faults, heat map; docs/report.md)");
  return [f] {
    f->argv = ProcessArgv();
    return driver::Run(*f);
  };
}

}  // namespace genie::cli
