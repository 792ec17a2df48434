// genie bench: nccl-tests for genie — sweep one collective over sizes on the real network and
// print nccl-tests' table (size, count, type, redop, root, time, algbw, busbw, #wrong, "Avg bus
// bandwidth"), with per-size jitter. Runs as one process per rank, like `genie run`:
//   genie launch -n 4 [--testbed NAME] -- bench -b 1K -e 64M -f 2
//   mpiexec -n 4 genie bench all_gather -b 8 -e 128M -f 2
// The flags fill driver::BenchOptions; driver/bench.h does the rest (docs/bench.md).
#include "genie/driver/bench.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"

namespace genie::cli {

GENIE_COMMAND(bench, "Collective micro-benchmarks in nccl-tests' form (busbw, #wrong)") {
  auto f = std::make_shared<driver::BenchOptions>();
  auto positional = std::make_shared<std::string>();
  app.add_option("collective", *positional, "Same as --collective (genie bench all_gather ...)");
  app.add_option("--collective", f->collective,
                 "all_reduce | all_gather | reduce_scatter | all_to_all | broadcast | reduce | "
                 "gather | scatter | reduce_scatter_block")
      ->capture_default_str();
  app.add_option("-b,--minbytes", f->min_bytes,
                 "Smallest size (nccl-tests' size: all-gather's "
                 "whole output buffer, ...); K, M, G are binary")
      ->check(ByteCount(false))
      ->capture_default_str();
  app.add_option("-e,--maxbytes", f->max_bytes, "Largest size")
      ->check(ByteCount(false))
      ->capture_default_str();
  app.add_option("-f,--stepfactor", f->step_factor, "Multiply the size by this (> 1)")
      ->check(IntIn(1, 1024))
      ->capture_default_str();
  app.add_option("-i,--stepbytes", f->step_bytes, "With -f 1: add this to the size")
      ->check(ByteCount(true))
      ->capture_default_str();
  app.add_option("-n,--iters", f->iters, "Timed iterations per size")
      ->check(IntIn(1, 1'000'000))
      ->capture_default_str();
  app.add_option("-w,--warmup_iters", f->warmup, "Warm-up iterations per size (not timed)")
      ->check(IntIn(0, 1'000'000))
      ->capture_default_str();
  app.add_option("-c,--check", f->check,
                 "1: after timing, one more iteration with real data, checked: #wrong")
      ->check(IntIn(0, 1))
      ->capture_default_str();
  app.add_option("-a,--average", f->average,
                 "The time of a size across ranks: 0 rank 0's, 1 mean, 2 min, 3 max")
      ->check(IntIn(0, 3))
      ->capture_default_str();
  app.add_option("-o,--op", f->op, "Reduction: sum (the only one genie computes)")
      ->capture_default_str();
  app.add_option("-d,--datatype", f->datatype,
                 "Element type (count and size alignment): int8, uint8, int32, uint32, int64, "
                 "uint64, half, float, double, bfloat16")
      ->capture_default_str();
  app.add_option("-r,--root", f->root, "Root rank of broadcast, reduce, gather, scatter")
      ->check(IntIn(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--algorithm", f->algorithm,
                 "Planner algorithm (ring, direct, directK, halvingDoubling, doubleBinaryTree, "
                 "pairwise, tree, oneRing, ...; one per --topology dimension, comma-separated)")
      ->capture_default_str();
  app.add_option("--topology", f->topology, "Logical dimensions, e.g. 2x2 (dim 0 fastest)");
  app.add_option("--chunks", f->chunks, "Chunks per collective (preferred-dataset-splits)")
      ->check(IntIn(1, 1024))
      ->capture_default_str();
  app.add_option("--channels", f->channels, "Parallel connections per peer pair (NCCL channels)")
      ->check(IntIn(1, kMaxChannels))
      ->capture_default_str();
  app.add_option("--slice", f->slice, "Largest message on the wire (e.g. 512KiB)")
      ->check(ByteCount(false));
  app.add_option("--json", f->json_path, "Write the table and verdict as JSON (rank 0)");
  app.add_option("--report", f->report_path,
                 "Write the sweep as one self-contained HTML page: busbw vs size (rank 0; "
                 "docs/report.md)");
  app.add_option("--min-busbw", f->min_busbw,
                 "Fail (exit 1) when the footer's Avg bus bandwidth is below this (GB/s); "
                 "default: $NCCL_TESTS_MIN_BW, as nccl-tests")
      ->envname("NCCL_TESTS_MIN_BW")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--expect", f->expect,
                 "The link rate the fabric should give (e.g. 400mbit): fail (exit 1) when the "
                 "largest size's busbw is below --expect-fraction of it");
  app.add_option("--expect-fraction", f->expect_fraction,
                 "Share of --expect the busbw must reach (default 0.8: TCP through a shaped "
                 "link gives about 0.9)")
      ->check(CLI::Range(0.01, 1.0));
  app.add_option("--ranks", f->ranks,
                 "With no launcher around: start this many ranks on this machine")
      ->check(IntIn(1, 4096));
  app.add_option("--bind,--iface", f->bind,
                 "Address or interface to listen on and send from (as genie run; default: "
                 "$GENIE_BIND, set by genie launch --testbed, else 127.0.0.1)")
      ->envname("GENIE_BIND");
  app.add_option("--rendezvous", f->rendezvous,
                 "tcp:HOST:PORT or dir:PATH; default: from the launcher");
  app.add_option("--job-id", f->job_id, "Job id checked in every connection");
  app.add_option("--tcp-congestion", f->tcp_congestion, "TCP congestion control (e.g. cubic)");
  AddTransportFlags(app, f->transport);
  app.add_option("--peer-timeout", f->peer_timeout, "Give up on a silent peer after this long")
      ->check(Duration(/*zero_ok=*/false))
      ->capture_default_str();
  app.add_option("--testbed", f->testbed,
                 "The `genie testbed` the ranks run on, named in the header (default: "
                 "$GENIE_TESTBED, set by genie launch --testbed)")
      ->envname("GENIE_TESTBED");
  return [f, positional] {
    if (!positional->empty()) f->collective = *positional;
    f->argv = ProcessArgv();
    return driver::Bench(*f);
  };
}

}  // namespace genie::cli
