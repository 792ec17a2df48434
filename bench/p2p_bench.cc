// Two-rank point-to-point throughput over loopback through RealBackend and a transport (TCP,
// or libfabric with --transport fabric), the figure bench/p2p_vs_iperf3.sh sets beside iperf3
// and bench/fabric_vs_tcp.sh beside fi_pingpong. Forks a sender (rank 1) and receives in
// rank 0; a window of messages stays in flight, real data from one preallocated buffer.
// --pingpong: rank 1 sends, rank 0 answers with the same size, one message in flight, as
// fi_pingpong does (its MB/s counts both directions' bytes).
// Usage: p2p_bench [--total BYTES] [--channels C] [--window W] [--pingpong]
//                  [--transport tcp|fabric] [--fabric-provider P] [--fabric-rma] [sizes...]
// Prints one line per size, and "p2p_gbit_per_s <size> <value>" lines for scripts.
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/loop/precise_sleep.h"
#include "genie/real_backend/real_backend.h"

using namespace genie;
using real_backend::RealBackend;

namespace {

// One rank's side of the stream; returns elapsed ns for rank 0, 0 for rank 1, -1 on error.
real_backend::TransportChoice g_transport;
bool g_pingpong = false;

TimeNs Side(int rank, const std::string& dir, const std::string& job, Bytes size, int count,
            int channels, int window) {
  real_backend::RealBackendOptions o;
  o.transport = g_transport;
  o.rank = rank;
  o.world_size = 2;
  o.job_id = job;
  o.rendezvous = "dir:" + dir;
  o.channels = channels;
  // As genie run sets it for two ranks on this machine (no timers here: only the fabric
  // transport's CQ polling follows it).
  o.spin = loop::DefaultSleepPolicy(2).spin;
  auto created = RealBackend::Create(o);
  if (!created.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, created.status().ToString().c_str());
    return -1;
  }
  RealBackend& b = **created;
  std::vector<unsigned char> buf(size * static_cast<size_t>(window), 1);
  int posted = 0, done = 0;
  TimeNs start = b.Now();
  std::function<void()> post;
  post = [&] {
    int i = posted++;
    runtime::Message m;
    m.peer = 1 - rank;
    m.tag = static_cast<uint64_t>(i);
    m.bytes = size;
    m.channel = static_cast<uint16_t>(i % channels);
    unsigned char* slot = buf.data() + size * static_cast<size_t>(i % window);
    auto cb = [&] {
      if (++done == count) {
        b.Stop();
      } else if (posted < count) {
        post();
      }
    };
    if (rank == 1) {
      m.data = slot;
      b.Send(m, cb);
    } else {
      m.into = slot;
      b.Recv(m, cb);
    }
  };
  // Ping-pong: message i goes 1 -> 0, its answer 0 -> 1 (tag i), one at a time.
  std::function<void(int)> ping;
  ping = [&](int i) {
    runtime::Message m;
    m.peer = 1 - rank;
    m.tag = static_cast<uint64_t>(i);
    m.bytes = size;
    auto next = [&, i] {
      if (i + 1 == count) {
        b.Stop();
      } else {
        ping(i + 1);
      }
    };
    if (rank == 1) {
      m.data = buf.data();
      b.Send(m, [] {});
      m.data = nullptr;
      m.into = buf.data();
      b.Recv(m, next);
    } else {
      m.into = buf.data();
      b.Recv(m, [&, m, next]() mutable {
        m.into = nullptr;
        m.data = buf.data();
        b.Send(m, next);
      });
    }
  };
  if (g_pingpong) {
    ping(0);
  } else {
    for (int i = 0; i < window && i < count; ++i) post();
  }
  b.Run();
  TimeNs elapsed = b.Now() - start;
  if (!b.status().ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, b.status().ToString().c_str());
    return -1;
  }
  b.Shutdown();
  return rank == 0 ? elapsed : 0;
}

constexpr const char* kUsage =
    "usage: p2p_bench [--total BYTES] [--channels C] [--window W] [--pingpong]\n"
    "                 [--transport tcp|fabric] [--fabric-provider P] [--fabric-rma] [sizes...]\n";

// A byte count from the command line; else the usage, and exit 2.
Bytes BytesArg(const std::string& text) {
  auto b = ParseBytes(text);
  if (b.ok()) return *b;
  std::fprintf(stderr, "p2p_bench: %s\n%s", b.status().message().c_str(), kUsage);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  Bytes total = Bytes{2} << 30;
  int channels = 1, window = 4;
  std::vector<Bytes> sizes;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (a == "--total" && i + 1 < argc) {
      total = BytesArg(argv[++i]);
    } else if (a == "--channels" && i + 1 < argc) {
      channels = std::atoi(argv[++i]);
    } else if (a == "--window" && i + 1 < argc) {
      window = std::atoi(argv[++i]);
    } else if (a == "--pingpong") {
      g_pingpong = true;
    } else if (a == "--transport" && i + 1 < argc) {
      g_transport.kind = argv[++i];
    } else if (a == "--fabric-provider" && i + 1 < argc) {
      g_transport.fabric_provider = argv[++i];
    } else if (a == "--fabric-rma") {
      g_transport.fabric_rma = true;
    } else {
      sizes.push_back(BytesArg(a));
    }
  }
  if (sizes.empty()) sizes = {Bytes{64} << 10, Bytes{1} << 20, Bytes{16} << 20};
  int status = 0;
  for (Bytes size : sizes) {
    int count = static_cast<int>(std::max<Bytes>(16, total / size));
    char tmpl[] = "/tmp/genie_p2p_XXXXXX";
    std::string dir = mkdtemp(tmpl);
    std::string job = "p2p-" + std::to_string(getpid()) + "-" + std::to_string(size);
    pid_t child = fork();
    if (child == 0) _exit(Side(1, dir, job, size, count, channels, window) < 0 ? 1 : 0);
    TimeNs ns = Side(0, dir, job, size, count, channels, window);
    int ws = 0;
    waitpid(child, &ws, 0);
    std::filesystem::remove_all(dir);
    if (ns <= 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
      status = 1;
      continue;
    }
    double bytes = static_cast<double>(size) * count * (g_pingpong ? 2 : 1);
    double gbit = bytes * 8 / static_cast<double>(ns);
    std::printf(
        "p2p loopback over %s%s: %s messages x %d, %s: %.2f Gbit/s (%.3f GB/s)\n",
        g_transport.kind.c_str(), g_transport.fabric_rma ? " (rma)" : "", FormatBytes(size).c_str(),
        count,
        g_pingpong
            ? "ping-pong"
            : (std::to_string(channels) + " channel(s), window " + std::to_string(window)).c_str(),
        gbit, bytes / static_cast<double>(ns));
    std::printf("p2p_gbit_per_s %llu %.3f\n", static_cast<unsigned long long>(size), gbit);
    std::fflush(stdout);
  }
  return status;
}
