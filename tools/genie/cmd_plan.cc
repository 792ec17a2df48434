// genie plan: shows how a collective becomes point-to-point messages — every rank's schedule
// checked symbolically, the bytes each rank sends and their total — without running anything.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "genie/collective/buffer_layout.h"
#include "genie/collective/planner.h"
#include "genie/collective/schedule_checker.h"
#include "genie/common/units.h"
#include "genie/trace/custom_files.h"
#include "tools/genie/command.h"

namespace genie::cli {
namespace {

using collective::Algorithm;
using collective::CollectiveSpec;
using collective::Schedule;

struct PlanArgs {
  std::string collective = "all_reduce";
  std::string algorithm = "ring";
  int ranks = 0;  // 0: the topology's size, else 8
  std::string group;
  std::string size = "1MiB";
  int rank = -1;
  int root = 0;
  int chunks = 1;
  int channels = 1;
  std::string slice = "0";
  std::string topology;
  std::string optimization = "baseline";
  std::string inter_dim = "baseline";
  std::string bandwidth;
  std::string involved;
  std::string custom;
  bool no_check = false;
  bool all_steps = false;
};

std::vector<std::string> SplitList(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string Range(collective::ByteRange r) {
  return "[" + std::to_string(r.offset) + "," + std::to_string(r.offset + r.length) + ")";
}

void PrintSteps(const Schedule& s) {
  std::printf("rank %d (group index %d): buffer %llu B, %zu steps, %zu phases\n", s.rank,
              s.group_index, static_cast<unsigned long long>(s.buffer_bytes), s.steps.size(),
              s.phases.size());
  std::printf("  %5s %5s %4s %3s  %-17s %6s %6s %-24s %10s %5s %5s  %s\n", "step", "chunk", "dim",
              "ch", "kind", "from", "to", "range", "bytes", "rtag", "stag", "deps");
  for (const collective::Phase& p : s.phases) {
    for (uint32_t i = p.begin; i < p.end; ++i) {
      const collective::Step& st = s.steps[i];
      const bool rx = collective::HasRecv(st.kind), tx = collective::HasSend(st.kind);
      // A local copy shows where it writes, then "<" where it reads.
      const bool copy = st.kind == collective::StepKind::kCopy;
      const collective::ByteRange r = rx || copy ? st.recv : st.send;
      const std::string range = copy ? Range(r) + "<" + Range(st.send) : Range(r);
      std::string deps;
      for (size_t d = 0; d < st.deps.size(); ++d) {
        if (d == 8) {
          deps += ",...";
          break;
        }
        deps += (d ? "," : "") + std::to_string(st.deps[d]);
      }
      std::printf("  %5u %5u %4u %3u  %-17s %6s %6s %-24s %10llu %5s %5s  %s\n", i, p.chunk, p.dim,
                  st.channel, collective::StepKindName(st.kind),
                  rx ? std::to_string(st.recv_peer).c_str() : "-",
                  tx ? std::to_string(st.send_peer).c_str() : "-", range.c_str(),
                  static_cast<unsigned long long>(r.length),
                  rx ? std::to_string(st.recv_tag).c_str() : "-",
                  tx ? std::to_string(st.send_tag).c_str() : "-", deps.c_str());
    }
  }
}

int Run(const PlanArgs& a) {
  CollectiveSpec spec;
  if (!collective::ParseCollectiveOp(a.collective, &spec.type)) {
    std::fprintf(stderr, "genie plan: unknown collective '%s' (all_reduce, reduce_scatter, "
                 "all_gather, all_to_all, broadcast, reduce, gather, scatter, barrier)\n",
                 a.collective.c_str());
    return 2;
  }
  auto size = ParseBytes(a.size);
  if (!size.ok()) {
    std::fprintf(stderr, "genie plan: --size %s: %s\n", a.size.c_str(),
                 size.status().message().c_str());
    return 2;
  }
  spec.size = *size;
  auto slice = ParseBytes(a.slice);
  if (!slice.ok()) {
    std::fprintf(stderr, "genie plan: --slice %s: %s\n", a.slice.c_str(),
                 slice.status().message().c_str());
    return 2;
  }
  if (!a.group.empty()) {
    for (const std::string& r : SplitList(a.group, ',')) spec.group.push_back(std::stoi(r));
  } else {
    int ranks = a.ranks;
    if (ranks <= 0 && !a.topology.empty()) {
      ranks = 1;
      for (const std::string& d : SplitList(a.topology, 'x')) ranks *= std::stoi(d);
    }
    if (ranks <= 0) ranks = 8;
    for (int r = 0; r < ranks; ++r) spec.group.push_back(r);
  }
  spec.root = a.root;
  collective::PlanOptions& o = spec.options;
  o.algorithms.clear();
  for (const std::string& name : SplitList(a.algorithm, ',')) {
    Algorithm alg;
    int window = 0;
    if (!collective::ParseAlgorithm(name, &alg, &window)) {
      std::fprintf(stderr,
                   "genie plan: unknown algorithm '%s' (ring, direct, directK, "
                   "halvingDoubling, doubleBinaryTree, ncclDoubleBinaryTree, tree, pairwise, "
                   "oneRing, oneDirect, oneHalvingDoubling)\n",
                   name.c_str());
      return 2;
    }
    if (window > 0) o.direct_window = window;
    o.algorithms.push_back(alg);
  }
  if (!a.custom.empty()) {
    auto custom = trace::LoadCustomAlgorithm(a.custom);
    if (!custom.ok()) {
      std::fprintf(stderr, "genie plan: %s\n", custom.status().message().c_str());
      return 1;
    }
    o.algorithms = {Algorithm::kCustom};
    o.custom = *custom;
  }
  if (!a.topology.empty()) {
    for (const std::string& d : SplitList(a.topology, 'x')) o.dims.push_back(std::stoi(d));
  }
  if (!a.involved.empty()) {
    for (const std::string& d : SplitList(a.involved, ',')) o.involved_dim.push_back(d != "0");
  }
  if (a.optimization == "localBWAware" || a.optimization == "localbwaware") {
    o.optimization = collective::Optimization::kLocalBwAware;
  } else if (a.optimization != "baseline") {
    std::fprintf(stderr, "genie plan: --optimization must be baseline or localBWAware\n");
    return 2;
  }
  if (a.inter_dim == "themis") {
    o.inter_dim = collective::InterDimScheduling::kThemis;
  } else if (a.inter_dim != "baseline") {
    std::fprintf(stderr, "genie plan: --inter-dimension-scheduling must be baseline or themis\n");
    return 2;
  }
  for (const std::string& b : SplitList(a.bandwidth, ',')) {
    char* end = nullptr;
    const double gbps = std::strtod(b.c_str(), &end);
    if (end == b.c_str() || *end != '\0' || !(gbps > 0)) {
      std::fprintf(stderr,
                   "genie plan: --bandwidth '%s': expected GB/s per dimension, e.g. "
                   "200,25\n",
                   a.bandwidth.c_str());
      return 2;
    }
    o.dim_bandwidth.push_back(gbps);
  }
  o.chunks = a.chunks;
  o.channels = a.channels;
  o.slice_bytes = *slice;

  auto all = collective::PlanAll(spec);
  if (!all.ok()) {
    std::fprintf(stderr, "genie plan: %s\n", all.status().message().c_str());
    return 1;
  }
  const int n = static_cast<int>(spec.group.size());
  std::string algs;
  for (Algorithm alg : o.algorithms) {
    algs += (algs.empty() ? "" : ",") + std::string(collective::AlgorithmName(alg));
  }
  std::printf("%s %s: %d ranks, size %llu B (%s), chunks %d, channels %d, slice %s\n",
              collective::CollectiveOpName(spec.type), algs.c_str(), n,
              static_cast<unsigned long long>(spec.size), FormatBytes(spec.size).c_str(),
              o.chunks, o.channels, o.slice_bytes ? FormatBytes(o.slice_bytes).c_str() : "none");
  int status = 0;
  if (!a.no_check) {
    const Status st = collective::CheckSchedules(spec, *all);
    if (st.ok()) {
      std::printf("checker: ok (every send met its receive, no deadlock or race, final buffers "
                  "hold the right contributions)\n");
    } else {
      std::printf("checker: FAILED: %s\n", st.message().c_str());
      status = 1;
    }
  }
  if (a.rank >= 0) {
    int index = -1;
    for (int i = 0; i < n; ++i) {
      if (spec.group[static_cast<size_t>(i)] == a.rank) index = i;
    }
    if (index < 0) {
      std::fprintf(stderr, "genie plan: --rank %d is not in the group\n", a.rank);
      return 2;
    }
    PrintSteps((*all)[static_cast<size_t>(index)]);
  } else if (a.all_steps) {
    for (const Schedule& s : *all) PrintSteps(s);
  }
  std::printf("%8s %10s %10s %16s\n", "rank", "steps", "messages", "bytes sent");
  Bytes total = 0;
  uint64_t messages = 0;
  for (const Schedule& s : *all) {
    const Bytes b = collective::BytesSent(s);
    total += b;
    messages += collective::MessagesSent(s);
    std::printf("%8d %10zu %10llu %16llu\n", s.rank, s.steps.size(),
                static_cast<unsigned long long>(collective::MessagesSent(s)),
                static_cast<unsigned long long>(b));
  }
  std::printf("%8s %10s %10llu %16llu  (%s)\n", "total", "",
              static_cast<unsigned long long>(messages), static_cast<unsigned long long>(total),
              FormatBytes(total).c_str());
  return status;
}

}  // namespace
}  // namespace genie::cli

GENIE_COMMAND(plan, "Show (and check) how a collective becomes point-to-point messages") {
  auto args = std::make_shared<genie::cli::PlanArgs>();
  app.add_option("--collective,-c", args->collective,
                 "all_reduce | reduce_scatter | all_gather | all_to_all | broadcast | reduce | "
                 "gather | scatter | barrier")
      ->capture_default_str();
  app.add_option("--algorithm,-a", args->algorithm,
                 "ring | direct | directK | halvingDoubling | doubleBinaryTree | "
                 "ncclDoubleBinaryTree | tree | pairwise | oneRing | oneDirect | "
                 "oneHalvingDoubling; comma list = one per dimension")
      ->capture_default_str();
  app.add_option("--ranks,-n", args->ranks,
                 "Number of ranks, group 0..N-1 (default: the topology's size, else 8)");
  app.add_option("--group", args->group, "Explicit rank group, e.g. 3,7,1,12 (overrides --ranks)");
  app.add_option("--size,-s", args->size,
                 "Chakra comm_size (all-gather: each rank's input), e.g. 1MiB")
      ->capture_default_str();
  app.add_option("--rank,-r", args->rank, "Print this rank's steps");
  app.add_flag("--steps", args->all_steps, "Print every rank's steps");
  app.add_option("--root", args->root, "Root (group index) of broadcast/reduce/gather/scatter");
  app.add_option("--chunks", args->chunks, "preferred-dataset-splits")->capture_default_str();
  app.add_option("--channels", args->channels, "Parallel flows per peer pair (NCCL channels)")
      ->capture_default_str();
  app.add_option("--slice", args->slice, "Largest message in bytes (0 = no limit)")
      ->capture_default_str();
  app.add_option("--topology", args->topology, "Logical dimensions, dim 0 fastest, e.g. 8x4");
  app.add_option("--optimization", args->optimization, "baseline | localBWAware")
      ->capture_default_str();
  app.add_option("--inter-dimension-scheduling", args->inter_dim,
                 "baseline | themis (each chunk orders the dimensions by their load)")
      ->capture_default_str();
  app.add_option("--bandwidth", args->bandwidth,
                 "GB/s per dimension for themis's load, e.g. 200,25 (default: all equal)");
  app.add_option("--involved-dim", args->involved, "Dimensions used, e.g. 1,0");
  app.add_option("--custom", args->custom, "Custom algorithm: MSCCL-IR XML or Chakra ET prefix");
  app.add_flag("--no-check", args->no_check, "Skip the symbolic checker");
  return [args] { return genie::cli::Run(*args); };
}
