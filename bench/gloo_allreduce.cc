// gloo_allreduce: Gloo's all-reduce as a peer baseline for genie's testbed benchmark
// (bench/testbed_allreduce.sh). One process per rank; ranks meet through a
// gloo::rendezvous::FileStore in a directory every rank can see (network namespaces share the
// filesystem) and talk over gloo::transport::tcp bound to one address or interface.
//
// For each size of a x4 sweep it checks one all-reduce of known values, then times
// --warmup + --iters calls on zeroed float buffers (sum) and prints one line:
//   gloo_allreduce algorithm=new_ring ranks=8 bytes=65536 iters=20 time_us=... algbw_gbps=...
//   busbw_gbps=...
// time is the slowest rank's mean per iteration; algbw = bytes / time, busbw = algbw x 2(n-1)/n
// (nccl-tests' all-reduce factor), both in GB/s (10^9 B/s), as genie's results tables print.
//
// Algorithms offered by Debian's libgloo (0.0~git20220518):
//   ring              gloo::AllreduceRing: the whole buffer goes round the ring n-1 times
//   ring_chunked      gloo::AllreduceRingChunked: reduce-scatter + all-gather in chunks
//   new_ring          gloo::allreduce(), RING: segmented reduce-scatter + all-gather
//   new_bcube         gloo::allreduce(), BCUBE
//   halving_doubling  gloo::AllreduceHalvingDoubling (any n; extra steps if not a power of 2)
//   bcube             gloo::AllreduceBcube (base 2; n a power of 2, else wrong sums)
//
// Single-threaded (Gloo's tcp device runs its own loop thread internally). Exit status 0 on
// success, 1 on a Gloo error (message names the rank), 2 on bad arguments.

#include <arpa/inet.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "genie/common/units.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  int rank = -1;
  int size = 0;
  std::string store;
  std::string iface;
  std::string algorithm = "new_ring";
  std::string bytes = "64KiB..256MiB";
  int factor = 4;
  int iters = 20;
  int warmup = 2;
  double max_seconds = 0;  // per size, 0 = no cap
  int timeout_s = 600;
};

const std::vector<std::string> kAlgorithms = {"ring",      "ring_chunked",     "new_ring",
                                              "new_bcube", "halving_doubling", "bcube"};

// "64KiB..256MiB" -> every size from the first to the last, multiplied by `factor`;
// "1MiB" -> just that size. Sizes are rounded down to whole floats.
bool ParseSizes(const std::string& text, int factor, std::vector<size_t>* out, std::string* err) {
  auto dots = text.find("..");
  auto lo = genie::ParseBytes(text.substr(0, dots));
  auto hi = dots == std::string::npos ? lo : genie::ParseBytes(text.substr(dots + 2));
  if (!lo.ok() || !hi.ok()) {
    *err = "--bytes '" + text + "': use a size or a range such as 64KiB..256MiB";
    return false;
  }
  if (*lo < sizeof(float) || *hi < *lo) {
    *err = "--bytes '" + text + "': the range must be at least 4 B and ascending";
    return false;
  }
  for (uint64_t s = *lo; s <= *hi; s *= factor) {
    out->push_back(s / sizeof(float) * sizeof(float));
    if (factor <= 1) break;
  }
  return true;
}

// Runs one all-reduce of the first `count` floats of `buf` in place.
class Runner {
 public:
  Runner(std::shared_ptr<gloo::Context> ctx, const std::string& algorithm, float* buf, int count)
      : ctx_(std::move(ctx)), algorithm_(algorithm), buf_(buf), count_(count) {
    std::vector<float*> ptrs = {buf};
    if (algorithm == "ring") {
      old_ = std::make_unique<gloo::AllreduceRing<float>>(ctx_, ptrs, count);
    } else if (algorithm == "ring_chunked") {
      old_ = std::make_unique<gloo::AllreduceRingChunked<float>>(ctx_, ptrs, count);
    } else if (algorithm == "halving_doubling") {
      old_ = std::make_unique<gloo::AllreduceHalvingDoubling<float>>(ctx_, ptrs, count);
    } else if (algorithm == "bcube") {
      old_ = std::make_unique<gloo::AllreduceBcube<float>>(ctx_, ptrs, count);
    }
  }

  void Run() {
    if (old_) {
      old_->run();
      return;
    }
    gloo::AllreduceOptions opts(ctx_);
    opts.setAlgorithm(algorithm_ == "new_bcube" ? gloo::AllreduceOptions::Algorithm::BCUBE
                                                : gloo::AllreduceOptions::Algorithm::RING);
    opts.setOutput(buf_, static_cast<size_t>(count_));
    opts.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    opts.setTag(tag_++);
    gloo::allreduce(opts);
  }

 private:
  std::shared_ptr<gloo::Context> ctx_;
  std::string algorithm_;
  float* buf_;
  int count_;
  uint32_t tag_ = 1;
  std::unique_ptr<gloo::Algorithm> old_;
};

// The largest value of `v` over all ranks (the new-style all-reduce of one double).
double MaxOverRanks(const std::shared_ptr<gloo::Context>& ctx, double v) {
  gloo::AllreduceOptions opts(ctx);
  opts.setOutput(&v, 1);
  opts.setReduceFunction(
      static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::max<double>));
  opts.setTag(0x7fff0000u);
  gloo::allreduce(opts);
  return v;
}

void Barrier(const std::shared_ptr<gloo::Context>& ctx) {
  gloo::BarrierOptions opts(ctx);
  opts.setTag(0x7fff0001u);
  gloo::barrier(opts);
}

int Main(const Args& a, const std::vector<size_t>& sizes) {
  gloo::transport::tcp::attr attr;
  in_addr ip4{};
  in6_addr ip6{};
  if (inet_pton(AF_INET, a.iface.c_str(), &ip4) == 1 ||
      inet_pton(AF_INET6, a.iface.c_str(), &ip6) == 1) {
    attr.hostname = a.iface;
  } else {
    attr.iface = a.iface;
  }
  auto dev = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(a.store);
  auto ctx = std::make_shared<gloo::rendezvous::Context>(a.rank, a.size);
  ctx->setTimeout(std::chrono::seconds(a.timeout_s));
  ctx->connectFullMesh(store, dev);

  const size_t max_bytes = sizes.back();
  std::vector<float> buf(max_bytes / sizeof(float));
  const double n = a.size;
  for (size_t bytes : sizes) {
    const int count = static_cast<int>(bytes / sizeof(float));
    Runner runner(ctx, a.algorithm, buf.data(), count);

    // Check: rank r contributes r+1 everywhere, so every element must be n(n+1)/2 (exact).
    std::fill(buf.begin(), buf.begin() + count, static_cast<float>(a.rank + 1));
    runner.Run();
    const float want = static_cast<float>(n * (n + 1) / 2);
    for (int i = 0; i < count; ++i) {
      if (buf[i] != want) {
        std::fprintf(stderr,
                     "gloo_allreduce: rank %d, %s, %zu B: element %d is %g, expected %g; "
                     "Gloo's result is wrong, so its timing would mean nothing\n",
                     a.rank, a.algorithm.c_str(), bytes, i, buf[i], want);
        return 1;
      }
    }
    // Zeros stay zeros, so repeated in-place sums never overflow and cost the same.
    std::fill(buf.begin(), buf.begin() + count, 0.0f);

    Barrier(ctx);
    auto t0 = Clock::now();
    for (int i = 0; i < a.warmup; ++i) runner.Run();
    double warm_s = std::chrono::duration<double>(Clock::now() - t0).count();
    int iters = a.iters;
    if (a.max_seconds > 0 && a.warmup > 0) {
      // Every rank must run the same count: decide from the slowest rank's warm-up.
      double per = MaxOverRanks(ctx, warm_s / a.warmup);
      iters = std::clamp(static_cast<int>(a.max_seconds / per), 1, a.iters);
    }
    Barrier(ctx);
    t0 = Clock::now();
    for (int i = 0; i < iters; ++i) runner.Run();
    double per_iter = std::chrono::duration<double>(Clock::now() - t0).count() / iters;
    per_iter = MaxOverRanks(ctx, per_iter);

    if (a.rank == 0) {
      double algbw = static_cast<double>(bytes) / per_iter / 1e9;
      double busbw = algbw * 2.0 * (n - 1) / n;
      std::printf(
          "gloo_allreduce algorithm=%s ranks=%d bytes=%zu iters=%d time_us=%.1f "
          "algbw_gbps=%.4f busbw_gbps=%.4f\n",
          a.algorithm.c_str(), a.size, bytes, iters, per_iter * 1e6, algbw, busbw);
      std::fflush(stdout);
    }
  }
  Barrier(ctx);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Gloo all-reduce over TCP, one process per rank (peer baseline for genie)"};
  app.add_option("--rank", a.rank, "This process's rank")->required();
  app.add_option("--size", a.size, "Number of ranks")->required()->check(CLI::Range(1, 4096));
  app.add_option("--store", a.store,
                 "FileStore directory, shared by all ranks; use a new empty one per run")
      ->required();
  app.add_option("--iface", a.iface, "Address (10.100.0.1) or interface (eth0) to bind")
      ->required();
  app.add_option("--algorithm", a.algorithm, "Gloo algorithm")
      ->check(CLI::IsMember(kAlgorithms))
      ->capture_default_str();
  app.add_option("--bytes", a.bytes, "A size or a range LO..HI (x --factor steps)")
      ->capture_default_str();
  app.add_option("--factor", a.factor, "Step between sizes")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--iters", a.iters, "Timed iterations per size")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", a.warmup, "Untimed iterations per size")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--max-seconds", a.max_seconds,
                 "Fewer timed iterations (>= 1) when they would take longer (from the warm-up)")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--timeout", a.timeout_s, "Gloo's timeout per operation, seconds")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (a.rank < 0 || a.rank >= a.size) {
    std::fprintf(stderr, "gloo_allreduce: --rank %d is outside 0..%d (--size %d)\n", a.rank,
                 a.size - 1, a.size);
    return 2;
  }
  if (a.algorithm == "bcube" && (a.size & (a.size - 1)) != 0) {
    // Gloo's AllreduceBcube with base 2 gives wrong sums otherwise (seen at 7 ranks).
    std::fprintf(stderr, "gloo_allreduce: --algorithm bcube needs a power-of-2 --size, got %d\n",
                 a.size);
    return 2;
  }
  std::vector<size_t> sizes;
  std::string err;
  if (!ParseSizes(a.bytes, a.factor, &sizes, &err)) {
    std::fprintf(stderr, "gloo_allreduce: %s\n", err.c_str());
    return 2;
  }
  if (sizes.back() > static_cast<size_t>(INT32_MAX)) {
    std::fprintf(stderr, "gloo_allreduce: --bytes below 2 GiB (Gloo keeps byte counts in int)\n");
    return 2;
  }
  try {
    return Main(a, sizes);
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "gloo_allreduce: rank %d of %d (%s, bound to %s, store %s): %s\n"
                 "  check that all %d ranks started with the same --size, --bytes and "
                 "--algorithm and a fresh --store directory, and that the peers are reachable\n",
                 a.rank, a.size, a.algorithm.c_str(), a.iface.c_str(), a.store.c_str(), e.what(),
                 a.size);
    return 1;
  }
}
