#include "genie/driver/netcheck.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "genie/launch/local_launcher.h"
#include "genie/launch/rank_env.h"
#include "genie/loop/precise_sleep.h"
#include "genie/net/interface_address.h"

namespace genie::driver {

int RunNetcheck(const NetcheckOptions& a) {
  auto env = launch::DiscoverRankEnv();
  if (!env.ok()) {
    fmt::print(stderr, "genie netcheck: {}\n", env.status().message());
    return 2;
  }
  real_backend::RealBackendOptions o;
  o.rank = env->rank;
  o.world_size = env->world_size;
  o.job_id = env->job_id;
  o.rendezvous = env->rendezvous;
  o.local_rank = env->local_rank;
  o.local_world_size = env->local_world_size;
  auto bind = net::ResolveBindAddress(a.bind, env->local_rank);
  if (!bind.ok()) {
    fmt::print(stderr, "genie netcheck: rank {}: --bind: {}\n", env->rank, bind.status().message());
    return 2;
  }
  o.bind_addr = *bind;
  o.channels = a.channels;
  o.tcp_congestion = a.tcp_congestion;
  o.transport = a.transport;
  o.peer_timeout = a.peer_timeout;
  int local = env->local_world_size > 0 ? env->local_world_size : env->world_size;
  o.spin = loop::DefaultSleepPolicy(local).spin;
  auto created = real_backend::RealBackend::Create(o);
  if (!created.ok()) {
    fmt::print(stderr, "genie netcheck: rank {}: {}\n", env->rank, created.status().message());
    // Bad input (an address, another job on the rendezvous) is this rank's to report.
    return created.status().code() == Status::Code::kInvalidArgument ? launch::kExitBadInput
                                                                     : launch::kExitFailed;
  }
  auto& b = **created;
  const int n = env->world_size, me = env->rank;
  const size_t words = static_cast<size_t>(a.bytes / sizeof(uint32_t));
  const Bytes len = words * sizeof(uint32_t);
  auto word = [](int from, int to, int it, size_t i) {
    return static_cast<uint32_t>(from * 7919 + to * 104729 + it * 31 + static_cast<int>(i));
  };
  std::vector<std::vector<uint32_t>> out(static_cast<size_t>(n)), in(static_cast<size_t>(n));
  uint64_t wrong = 0;
  TimeNs start = b.Now();
  for (int it = 0; it < a.iters && b.status().ok(); ++it) {
    int pending = 0;
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      auto& o_buf = out[static_cast<size_t>(p)];
      auto& i_buf = in[static_cast<size_t>(p)];
      o_buf.resize(words);
      i_buf.assign(words, 0);
      for (size_t i = 0; i < words; ++i) o_buf[i] = word(me, p, it, i);
      uint16_t ch = static_cast<uint16_t>((it + me + p) % a.channels);  // same on both sides
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
      const auto& got = in[static_cast<size_t>(p)];
      for (size_t i = 0; i < words; ++i) wrong += got[i] != word(p, me, it, i);
    }
  }
  TimeNs elapsed = b.Now() - start;
  if (!b.status().ok()) {
    fmt::print(stderr, "genie netcheck: rank {}: {}\n", me, b.status().message());
    return b.status().code() == Status::Code::kUnavailable ? launch::kExitPeerFailed : 1;
  }
  std::string conns;
  uint64_t sent = 0;
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    conns += fmt::format("{}{}", conns.empty() ? "" : " ", b.counters(p).connections);
    sent += b.counters(p).bytes_sent;
  }
  Status st = b.Shutdown();
  double gbps = elapsed > 0 ? static_cast<double>(sent) / static_cast<double>(elapsed) : 0;
  fmt::print("netcheck rank {}/{}: {} iterations x {} peer(s) x {}, {} wrong words, "
             "connections per peer: {}, {:.3f} GB/s sent\n",
             me, n, a.iters, n - 1, FormatBytes(len), wrong, conns, gbps);
  if (!st.ok()) {
    fmt::print(stderr, "genie netcheck: rank {}: {}\n", me, st.message());
    return 1;
  }
  return wrong == 0 ? 0 : 1;
}

}  // namespace genie::driver
