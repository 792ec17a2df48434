// genie launch: start N local ranks of genie (or, with --exec, of any program) with the rank,
// world size, rendezvous and job id in their environment; forward signals; if a rank fails,
// stop the others and exit non-zero naming it.
// Also `genie netcheck`: every rank exchanges verified messages with every other over the
// real transport — the smallest end-to-end check that a launch, a rendezvous and the
// network work (genie launch -n 4 -- netcheck --channels 4).
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "genie/common/units.h"
#include "genie/launch/local_launcher.h"
#include "genie/launch/rank_env.h"
#include "genie/net/interface_address.h"
#include "genie/loop/precise_sleep.h"
#include "genie/runtime/real_backend.h"
#include "genie/testbed/control.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"

namespace {

std::string SelfExe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "genie";
  buf[n] = '\0';
  return buf;
}

// Rank i on host i mod H of the testbed: its namespace, its NIC (the rank's index among the
// host's ranks, i / H, mod NICs) as bind address (GENIE_BIND, what --bind defaults to),
// the testbed's name (GENIE_TESTBED: rank 0 records the testbed's counters), the host's name
// (GENIE_HOST, what genie doctor calls it) and, unless given,
// a rendezvous on h0's address.
genie::Status PlaceOnTestbed(const std::string& name, int nodes, genie::launch::LaunchOptions* o) {
  if (nodes != 1) {
    return genie::Status::InvalidArgument(
        "a testbed is one machine: use -n for every rank, without --nnodes");
  }
  auto layout = genie::testbed::Load(name);
  if (!layout.ok()) return layout.status();
  const int hosts = static_cast<int>(layout->hosts.size());
  for (int r = 0; r < o->ranks; ++r) {
    const auto& host = layout->hosts[static_cast<size_t>(r % hosts)];
    genie::launch::RankSite site;
    site.netns = host.netns;
    const auto& nic = host.nics[static_cast<size_t>(r / hosts) % host.nics.size()];
    site.env = {{"GENIE_BIND", nic.address}, {"GENIE_TESTBED", name}, {"GENIE_HOST", host.name}};
    o->sites.push_back(site);
  }
  if (o->rendezvous.empty()) {
    // h0's namespace is the testbed's own: a port there is free unless another job on this
    // testbed took it, which the launch nonce then tells apart.
    o->rendezvous = fmt::format("tcp:{}:{}", layout->RendezvousAddress(), 29500 + getpid() % 400);
  }
  return genie::Status::Ok();
}

// More local ranks than this is a typo, not a machine (each rank is a process with sockets).
constexpr int kMaxLocalRanks = 4096;

}  // namespace

GENIE_COMMAND(launch, "Start N local ranks: genie launch -n N -- run --workload W ...") {
  struct Args {
    int n = 1;
    int nodes = 1;
    int node_rank = 0;
    std::string rendezvous;
    std::string job_id;
    bool exec = false;
    std::string grace = "5s";
    std::string testbed;
    std::vector<std::string> command;
  };
  auto a = std::make_shared<Args>();
  app.add_option("-n,--ranks", a->n, "Number of ranks to start on this machine")
      ->required()
      ->check(genie::cli::IntIn(1, kMaxLocalRanks));
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
  app.add_option("command", a->command, "After --: the genie subcommand and its arguments")
      ->required();
  return [a]() -> int {
    genie::launch::LaunchOptions o;
    o.ranks = a->n;
    o.rendezvous = a->rendezvous;
    o.nodes = a->nodes;
    o.node_rank = a->node_rank;
    o.job_id = a->job_id;
    auto grace = genie::ParseDuration(a->grace);
    if (!grace.ok()) {
      fmt::print(stderr, "genie launch: --grace: {}\n", grace.status().message());
      return 2;
    }
    o.grace = *grace;
    if (!a->testbed.empty()) {
      genie::Status st = PlaceOnTestbed(a->testbed, a->nodes, &o);
      if (!st.ok()) {
        fmt::print(stderr, "genie launch: --testbed {}: {}\n", a->testbed, st.message());
        return 2;
      }
    }
    if (!a->exec) o.argv.push_back(SelfExe());
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
    genie::runtime::TransportChoice transport;
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
    auto env = genie::launch::DiscoverRankEnv();
    if (!env.ok()) {
      fmt::print(stderr, "genie netcheck: {}\n", env.status().message());
      return 2;
    }
    auto bytes = genie::ParseBytes(a->bytes);
    auto timeout = genie::ParseDuration(a->peer_timeout);
    if (!bytes.ok() || !timeout.ok()) {
      fmt::print(stderr, "genie netcheck: {}\n",
                 (!bytes.ok() ? bytes.status() : timeout.status()).message());
      return 2;
    }
    genie::runtime::RealBackendOptions o;
    o.rank = env->rank;
    o.world_size = env->world_size;
    o.job_id = env->job_id;
    o.rendezvous = env->rendezvous;
    o.local_rank = env->local_rank;
    o.local_world_size = env->local_world_size;
    auto bind = genie::net::ResolveBindAddress(a->bind, env->local_rank);
    if (!bind.ok()) {
      fmt::print(stderr, "genie netcheck: rank {}: --bind: {}\n", env->rank, bind.status().message());
      return 2;
    }
    o.bind_addr = *bind;
    o.channels = a->channels;
    o.tcp_congestion = a->tcp_congestion;
    o.transport = a->transport;
    o.peer_timeout = *timeout;
    int local = env->local_world_size > 0 ? env->local_world_size : env->world_size;
    o.spin = genie::loop::DefaultSleepPolicy(local).spin;
    auto created = genie::runtime::RealBackend::Create(o);
    if (!created.ok()) {
      fmt::print(stderr, "genie netcheck: rank {}: {}\n", env->rank, created.status().message());
      // Bad input (an address, another job on the rendezvous) is this rank's to report.
      return created.status().code() == genie::Status::Code::kInvalidArgument
                 ? genie::launch::kExitBadInput
                 : genie::launch::kExitFailed;
    }
    auto& b = **created;
    const int n = env->world_size, me = env->rank;
    const size_t words = static_cast<size_t>(*bytes / sizeof(uint32_t));
    const genie::Bytes len = words * sizeof(uint32_t);
    auto word = [](int from, int to, int it, size_t i) {
      return static_cast<uint32_t>(from * 7919 + to * 104729 + it * 31 + static_cast<int>(i));
    };
    std::vector<std::vector<uint32_t>> out(static_cast<size_t>(n)), in(static_cast<size_t>(n));
    uint64_t wrong = 0;
    genie::TimeNs start = b.Now();
    for (int it = 0; it < a->iters && b.status().ok(); ++it) {
      int pending = 0;
      for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        auto& o_buf = out[static_cast<size_t>(p)];
        auto& i_buf = in[static_cast<size_t>(p)];
        o_buf.resize(words);
        i_buf.assign(words, 0);
        for (size_t i = 0; i < words; ++i) o_buf[i] = word(me, p, it, i);
        uint16_t ch = static_cast<uint16_t>((it + me + p) % a->channels);  // same on both sides
        pending += 2;
        auto done = [&] {
          if (--pending == 0) b.Stop();
        };
        b.Recv({p, static_cast<uint64_t>(it), len, ch, nullptr, i_buf.data()}, done);
        b.Send({p, static_cast<uint64_t>(it), len, ch, o_buf.data(), nullptr}, done);
      }
      if (pending > 0) b.Run();
      for (int p = 0; p < n && b.status().ok(); ++p) {
        if (p == me) continue;
        for (size_t i = 0; i < words; ++i) wrong += in[static_cast<size_t>(p)][i] != word(p, me, it, i);
      }
    }
    genie::TimeNs elapsed = b.Now() - start;
    if (!b.status().ok()) {
      fmt::print(stderr, "genie netcheck: rank {}: {}\n", me, b.status().message());
      return b.status().code() == genie::Status::Code::kUnavailable
                 ? genie::launch::kExitPeerFailed
                 : 1;
    }
    std::string conns;
    uint64_t sent = 0;
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      conns += fmt::format("{}{}", conns.empty() ? "" : " ", b.counters(p).connections);
      sent += b.counters(p).bytes_sent;
    }
    genie::Status st = b.Shutdown();
    double gbps = elapsed > 0 ? static_cast<double>(sent) / static_cast<double>(elapsed) : 0;
    fmt::print("netcheck rank {}/{}: {} iterations x {} peer(s) x {}, {} wrong words, "
               "connections per peer: {}, {:.3f} GB/s sent\n",
               me, n, a->iters, n - 1, genie::FormatBytes(len), wrong, conns, gbps);
    if (!st.ok()) {
      fmt::print(stderr, "genie netcheck: rank {}: {}\n", me, st.message());
      return 1;
    }
    return wrong == 0 ? 0 : 1;
  };
}
