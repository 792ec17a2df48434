// genie plan: shows how a collective becomes point-to-point messages — every rank's schedule
// checked symbolically, the bytes each rank sends and their total — without running anything.
// This file turns the flags into a CollectiveSpec; driver/plan.h plans, checks and prints.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "genie/collective/planner.h"
#include "genie/common/units.h"
#include "genie/driver/plan.h"
#include "genie/trace/custom_files.h"
#include "tools/genie/command.h"

namespace genie::cli {
namespace {

using collective::Algorithm;
using collective::CollectiveSpec;

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

  driver::PlanShowOptions show;
  show.check = !a.no_check;
  show.rank = a.rank;
  show.all_steps = a.all_steps;
  return driver::ShowPlan(spec, show);
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
