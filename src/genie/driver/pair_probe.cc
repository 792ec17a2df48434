#include "genie/driver/pair_probe.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace genie::driver {

using runtime::Message;
using real_backend::RealBackend;

namespace {

// Calls `take(name, value)` for every counter of `prefix`'s two lines (a header of names, a line
// of values) in a /proc/net/snmp-style file.
template <typename Take>
void ReadCounters(const char* path, const std::string& prefix, Take take) {
  std::ifstream in(path);
  std::string header, values;
  while (std::getline(in, header)) {
    if (header.rfind(prefix, 0) != 0 || !std::getline(in, values)) continue;
    std::istringstream h(header.substr(prefix.size())), v(values.substr(prefix.size()));
    for (std::string name, value; h >> name && v >> value;) take(name, std::stod(value));
    return;
  }
}

}  // namespace

TcpSegments ReadTcpSegments() {
  TcpSegments t;
  ReadCounters("/proc/net/snmp", "Tcp:", [&](const std::string& name, double value) {
    if (name == "OutSegs") t.out = value;
    if (name == "RetransSegs") t.retrans = value;
  });
  ReadCounters("/proc/net/netstat", "TcpExt:", [&](const std::string& name, double value) {
    if (name == "TCPDSACKRecvSegs") t.spurious = value;
  });
  return t;
}

void Batch::Send(int peer, uint64_t tag, Bytes bytes, const void* data,
                 std::function<void()> then) {
  Message m;
  m.peer = peer;
  m.tag = tag;
  m.bytes = bytes;
  m.data = data;
  Post(true, m, std::move(then));
}

void Batch::Recv(int peer, uint64_t tag, Bytes bytes, void* into, std::function<void()> then) {
  Message m;
  m.peer = peer;
  m.tag = tag;
  m.bytes = bytes;
  m.into = into;
  Post(false, m, std::move(then));
}

bool Batch::Wait() {
  if (pending_ > 0 && b_.status().ok()) b_.Run();
  return b_.status().ok() && pending_ == 0;
}

void Batch::Post(bool send, const Message& m, std::function<void()> then) {
  ++pending_;
  auto done = [this, then = std::move(then)] {
    if (then) then();
    if (--pending_ == 0) b_.Stop();
  };
  if (send) {
    b_.Send(m, std::move(done));
  } else {
    b_.Recv(m, std::move(done));
  }
}

double RateGbps(TimeNs start, const std::vector<TimeNs>& done, Bytes message) {
  if (done.empty()) return std::nan("");
  const TimeNs last = *std::max_element(done.begin(), done.end());
  return last > start ? static_cast<double>(message * done.size()) / static_cast<double>(last - start)
                      : std::nan("");
}

bool MeasureDirection(RealBackend& b, int from, int to, uint64_t tag, Bytes message, Bytes count,
                      DirectionFigures* out) {
  Batch batch(b);
  const uint64_t data = tag, ready = tag + 1, done = tag + 2, go = tag + 3;
  if (b.rank() == to) {
    std::vector<TimeNs> at;
    TimeNs start = 0;
    batch.Recv(from, go, 0, nullptr, [&] { start = b.Now(); });
    for (Bytes k = 0; k < count; ++k) {
      batch.Recv(from, data, message, nullptr, [&] { at.push_back(b.Now()); });
    }
    batch.Send(from, ready, 0);
    if (!batch.Wait()) return false;
    out->gbps = RateGbps(start, at, message);
    batch.Send(from, done, 0);
    return batch.Wait();
  }
  TcpSegments before;
  batch.Recv(to, ready, 0, nullptr, [&] {
    before = ReadTcpSegments();
    batch.Send(to, go, 0);
    for (Bytes k = 0; k < count; ++k) batch.Send(to, data, message);
  });
  batch.Recv(to, done, 0);
  if (!batch.Wait()) return false;
  const TcpSegments after = ReadTcpSegments();
  out->sender_delta = {after.out - before.out, after.retrans - before.retrans,
                       after.spurious - before.spurious};
  return true;
}

bool MeasurePings(RealBackend& b, int a, int c, uint64_t tag, int pings, double* median_us) {
  const uint64_t ping = tag, pong = tag + 1;
  std::vector<double> rtt;
  for (int i = 0; i < pings; ++i) {
    Batch batch(b);
    if (b.rank() == a) {
      const TimeNs t0 = b.Now();
      batch.Send(c, ping, 8);
      batch.Recv(c, pong, 8, nullptr, [&] { rtt.push_back((b.Now() - t0) / 1e3); });
      if (!batch.Wait()) return false;
    } else {
      batch.Recv(a, ping, 8);
      if (!batch.Wait()) return false;
      batch.Send(a, pong, 8);
      if (!batch.Wait()) return false;
    }
  }
  if (b.rank() == a && !rtt.empty()) {
    std::sort(rtt.begin(), rtt.end());
    *median_us = rtt[rtt.size() / 2];
  }
  return true;
}

}  // namespace genie::driver
