// Trace reader benchmark: reads a `genie gen compute-chain` trace of one million nodes (per
// rank) and reports nodes/s for the index pass (RankGraph::Open) and for a full walk that
// decodes every node (Take, Load, Complete), plus peak resident memory of the reading alone.
//
//   trace_reader_bench [nodes=1000000] [--gzip] [--keep DIR]
//
// Peak RSS is VmHWM from /proc/self/status, reset (clear_refs 5) after the trace is written,
// so it covers reading only. Figures are printed; nothing is asserted (timing is noisy here).
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "genie/workload/generator.h"
#include "genie/workload/rank_graph.h"

namespace {

long StatusKb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  size_t n = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, n, field) == 0) return std::atol(line.c_str() + n + 1);
  }
  return -1;
}

// User + system CPU seconds of this process: less sensitive than wall time to other load on
// a shared machine.
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void ResetPeak() { std::ofstream("/proc/self/clear_refs") << "5"; }

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t count = 1'000'000;
  bool gzip = false;
  std::string keep;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--gzip") gzip = true;
    else if (a == "--keep" && i + 1 < argc) keep = argv[++i];
    else count = std::strtoull(argv[i], nullptr, 10);
  }
  namespace fs = std::filesystem;
  fs::path dir = keep.empty() ? fs::temp_directory_path() /
                                    ("genie_trace_reader_bench_" + std::to_string(::getpid()))
                              : fs::path(keep);
  fs::create_directories(dir);
  std::string prefix = (dir / "chain").string();

  // The same code `genie gen compute-chain` runs (the CLI is a thin wrapper around it).
  genie::workload::GenComputeChainOptions gen;
  gen.count = count;
  gen.duration = genie::kNsPerMs;
  gen.ranks = 1;
  gen.gzip = gzip;
  gen.output = prefix;
  auto t0 = std::chrono::steady_clock::now();
  auto written = genie::workload::GenerateComputeChain(gen);
  if (!written.ok()) {
    std::fprintf(stderr, "%s\n", written.status().ToString().c_str());
    return 1;
  }
  double gen_s = Seconds(t0);
  uintmax_t file_bytes = fs::file_size(prefix + ".0.et");
  long rss_before = StatusKb("VmRSS:");
  ResetPeak();

  t0 = std::chrono::steady_clock::now();
  double c0 = CpuSeconds();
  auto graph = genie::workload::RankGraph::Open(prefix + ".0.et", 0, {});
  if (!graph.ok()) {
    std::fprintf(stderr, "%s\n", graph.status().ToString().c_str());
    return 1;
  }
  double open_s = Seconds(t0);
  double open_cpu = CpuSeconds() - c0;
  long rss_open = StatusKb("VmRSS:");

  auto& g = **graph;
  t0 = std::chrono::steady_clock::now();
  c0 = CpuSeconds();
  uint64_t loaded = 0;
  genie::TimeNs total = 0;
  while (!g.ready().empty()) {
    genie::NodeId id = *g.ready().begin();
    g.Take(id);
    auto op = g.Load(id);
    if (!op.ok()) {
      std::fprintf(stderr, "%s\n", op.status().ToString().c_str());
      return 1;
    }
    total += op->duration_ns;
    ++loaded;
    g.Complete(id);
  }
  double walk_s = Seconds(t0);
  double walk_cpu = CpuSeconds() - c0;
  long peak = StatusKb("VmHWM:");

  std::printf("trace_reader_bench: %llu nodes, %s file of %.1f MB (written in %.2f s)\n",
              static_cast<unsigned long long>(count), gzip ? "gzip" : "plain",
              static_cast<double>(file_bytes) / 1e6, gen_s);
  std::printf("  index pass (RankGraph::Open): %.3f s = %.2f M nodes/s (CPU %.3f s = %.2f M "
              "nodes/CPU-s)\n",
              open_s, static_cast<double>(count) / open_s / 1e6, open_cpu,
              static_cast<double>(count) / open_cpu / 1e6);
  std::printf("  walk + decode every node:     %.3f s = %.2f M nodes/s (CPU %.3f s = %.2f M "
              "nodes/CPU-s; %llu nodes, %.0f s of compute)\n",
              walk_s, static_cast<double>(loaded) / walk_s / 1e6, walk_cpu,
              static_cast<double>(loaded) / walk_cpu / 1e6,
              static_cast<unsigned long long>(loaded), static_cast<double>(total) / 1e9);
  std::printf("  end to end (open + walk):     %.2f M nodes/s\n",
              static_cast<double>(count) / (open_s + walk_s) / 1e6);
  std::printf("  RSS before reading %ld KiB, after index %ld KiB (+%.1f bytes/node), peak while "
              "reading %ld KiB (+%.1f bytes/node)\n",
              rss_before, rss_open,
              static_cast<double>(rss_open - rss_before) * 1024.0 / static_cast<double>(count),
              peak, static_cast<double>(peak - rss_before) * 1024.0 / static_cast<double>(count));
  if (keep.empty()) fs::remove_all(dir);
  return 0;
}
