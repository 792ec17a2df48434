// Config limits: the largest and smallest values genie accepts for the numbers in system.json,
// network.yml and memory.json. ASTRA-sim takes any number; a value past these bounds is not a
// system anyone builds (a 1e-300 GB/s link, a 1e30 ns latency, 1e8 dataset splits) and would
// only overflow simulated time (int64 ns, about 292 years) or grow memory without end, so the
// parsers refuse it up front with an error naming the file and the key. docs/configs.md
// lists the same bounds. Constants only; any thread.
#pragma once

namespace genie::config {

// Link and memory bandwidths (GB/s): 1 kB/s to 1 EB/s.
inline constexpr double kMinBandwidthGbps = 1e-6;
inline constexpr double kMaxBandwidthGbps = 1e9;
// Latencies and fixed per-step delays (ns): at most 1,000 s.
inline constexpr double kMaxDelayNs = 1e12;
// peak-perf (TFLOPS): 1 MFLOPS to 1 ZFLOPS.
inline constexpr double kMinPeakTflops = 1e-6;
inline constexpr double kMaxPeakTflops = 1e9;
// preferred-dataset-splits and active-chunks-per-dimension: each chunk is planned, scheduled
// and simulated on its own, so memory and time grow with the count.
inline constexpr int kMaxDatasetSplits = 4096;
// NPUs in a network (product of npus_count) or named by a memory.json.
inline constexpr int kMaxNpus = 1 << 24;
// Spines of a leaf-spine fabric (network.yml `spines`): each message between leaves is that
// many sub-flows in the flow model.
inline constexpr int kMaxSpines = 4096;

}  // namespace genie::config
