#include "genie/testbed/ecmp.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "genie/env/env.h"

namespace genie::testbed {

bool EcmpKnown(const Layout& layout) {
  const TestbedSpec& s = layout.spec;
  return s.kind == TopologyKind::kLeafSpine && s.hash == EcmpHash::kL3 && s.spines > 1 &&
         s.nics == 1 && s.hosts_per_leaf > 0;
}

bool EcmpPerConnection(const Layout& layout) {
  const TestbedSpec& s = layout.spec;
  return s.kind == TopologyKind::kLeafSpine && s.hash == EcmpHash::kL4 && s.spines > 1 &&
         s.nics == 1 && s.hosts_per_leaf > 0;
}

int SpineOfRouteGet(const std::string& line) {
  std::istringstream in(line);
  for (std::string word, prev; in >> word; prev = word) {
    if (prev != "dev" || word.size() < 2 || word[0] != 's') continue;
    try {
      size_t used = 0;
      const int spine = std::stoi(word.substr(1), &used);
      if (used == word.size() - 1 && spine >= 0) return spine;
    } catch (const std::exception&) {
    }
    return -1;
  }
  return -1;
}

namespace {

// Writes `batch` to a file, runs `ip -n NS -batch FILE` in leaf `leaf`'s namespace, and returns
// what it printed.
Result<std::string> AskLeaf(const TestbedSpec& s, int leaf, const std::string& batch,
                            Shell& shell) {
  const std::string path = fmt::format("/tmp/genie-ecmp-{}-{}-l{}.batch", ::getpid(), s.name, leaf);
  env::Env* env = env::Env::Default();
  if (!env->WriteFile(path, batch).ok()) {
    return Status::IoError("cannot write " + path + ": is /tmp writable?");
  }
  const std::string ns = fmt::format("{}-l{}", s.name, leaf);
  auto output = shell.Output({"ip", "-n", ns, "-batch", path});
  (void)env->RemoveFile(path);
  if (!output.ok()) {
    return Status::Unavailable("testbed " + s.name + ": leaf " + ns +
                               " did not say which spine its pairs take (is the testbed up, "
                               "and are you root?): " +
                               output.status().message());
  }
  return *output;
}

// "10.100.0.1:40312" as (address, port); false when it is not that.
bool SplitEndpoint(const std::string& text, std::string* address, int* port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= text.size()) return false;
  try {
    size_t used = 0;
    *port = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || *port <= 0 || *port > 65535) return false;
  } catch (const std::exception&) {
    return false;
  }
  *address = text.substr(0, colon);
  return true;
}

}  // namespace

Result<std::vector<config::EcmpConnection>> QueryConnectionSpines(
    const Layout& layout, const std::vector<ConnectionFlow>& flows, Shell& shell) {
  std::vector<config::EcmpConnection> out;
  if (!EcmpPerConnection(layout)) return out;
  const TestbedSpec& s = layout.spec;
  std::map<std::string, int> host_of;  // address -> host
  for (size_t h = 0; h < layout.hosts.size(); ++h) {
    if (layout.hosts[h].nics.empty()) continue;
    host_of[layout.hosts[h].nics[0].address] = static_cast<int>(h);
  }
  struct Asked {
    const ConnectionFlow* flow;
    std::string src, dst;
    int sport, dport;
  };
  std::map<int, std::vector<Asked>> per_leaf;
  for (const ConnectionFlow& f : flows) {
    std::string src, dst;
    int sport = 0, dport = 0;
    if (!SplitEndpoint(f.local, &src, &sport) || !SplitEndpoint(f.remote, &dst, &dport)) {
      return Status::InvalidArgument(fmt::format(
          "rank {}'s connection to rank {} (channel {}) was recorded as {} -> {}, not "
          "address:port; rerun with this genie",
          f.src, f.dst, f.channel, f.local, f.remote));
    }
    auto a = host_of.find(src), b = host_of.find(dst);
    if (a == host_of.end() || b == host_of.end()) continue;
    const int leaf = a->second / s.hosts_per_leaf;
    if (leaf == b->second / s.hosts_per_leaf) continue;
    per_leaf[leaf].push_back({&f, src, dst, sport, dport});
  }
  for (const auto& [leaf, asked] : per_leaf) {
    std::string batch;
    for (const Asked& q : asked) {
      batch += fmt::format("route get {} from {} iif br0 ipproto tcp sport {} dport {}\n", q.dst,
                           q.src, q.sport, q.dport);
    }
    GENIE_ASSIGN_OR_RETURN(std::string output, AskLeaf(s, leaf, batch, shell));
    // One answer per question, in order: its first line names the destination and the source
    // ("10.100.1.1 from 10.100.0.1 via 10.255.0.3 dev s1 uid 0"), the next ones are indented.
    size_t next = 0;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line) && next < asked.size();) {
      if (line.empty() || line[0] == ' ' || line[0] == '\t') continue;
      std::istringstream words(line);
      std::string dst, from, src;
      words >> dst >> from >> src;
      const Asked& q = asked[next];
      const int spine = SpineOfRouteGet(line);
      if (dst != q.dst || from != "from" || src != q.src || spine < 0 || spine >= s.spines) break;
      out.push_back({q.flow->src, q.flow->dst, q.flow->channel, spine});
      ++next;
    }
    if (next < asked.size()) {
      const Asked& q = asked[next];
      return Status::Unavailable(fmt::format(
          "testbed {}: leaf {}-l{} gave no spine for {} of its {} connections, e.g. rank {} -> "
          "rank {} channel {} ({} -> {}); is the testbed as the run left it?",
          s.name, s.name, leaf, asked.size() - next, asked.size(), q.flow->src, q.flow->dst,
          q.flow->channel, q.flow->local, q.flow->remote));
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return std::tie(x.src, x.dst, x.channel) < std::tie(y.src, y.dst, y.channel);
  });
  return out;
}

Result<std::vector<config::EcmpRoute>> QueryEcmpRoutes(const Layout& layout, Shell& shell) {
  std::vector<config::EcmpRoute> routes;
  if (!EcmpKnown(layout)) return routes;
  const TestbedSpec& s = layout.spec;
  const int hosts = static_cast<int>(layout.hosts.size());
  auto address = [&](int i) { return layout.hosts[static_cast<size_t>(i)].nics.at(0).address; };
  for (int leaf = 0; leaf < s.leaves; ++leaf) {
    // One batch per leaf: every pair leaving it, answered in one `ip` process.
    std::map<std::pair<std::string, std::string>, std::pair<int, int>> asked;  // (dst, src)
    std::string batch;
    for (int a = leaf * s.hosts_per_leaf; a < (leaf + 1) * s.hosts_per_leaf && a < hosts; ++a) {
      for (int b = 0; b < hosts; ++b) {
        if (b / s.hosts_per_leaf == leaf) continue;
        batch += fmt::format("route get {} from {} iif br0\n", address(b), address(a));
        asked[{address(b), address(a)}] = {a, b};
      }
    }
    if (asked.empty()) continue;
    const std::string ns = fmt::format("{}-l{}", s.name, leaf);
    GENIE_ASSIGN_OR_RETURN(std::string output, AskLeaf(s, leaf, batch, shell));
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::string dst, from, src;
      if (!(words >> dst >> from >> src) || from != "from") continue;
      auto it = asked.find({dst, src});
      const int spine = SpineOfRouteGet(line);
      if (it == asked.end() || spine < 0 || spine >= s.spines) continue;
      routes.push_back({it->second.first, it->second.second, spine});
      asked.erase(it);
    }
    if (!asked.empty()) {
      const auto& [pair, hosts_ab] = *asked.begin();
      return Status::Unavailable(fmt::format(
          "testbed {}: leaf {} gave no spine for {} of its pairs, e.g. h{} -> h{} (`ip -n {} "
          "route get {} from {} iif br0`); bring the testbed down and up again",
          s.name, ns, asked.size(), hosts_ab.first, hosts_ab.second, ns, pair.first, pair.second));
    }
  }
  std::sort(routes.begin(), routes.end(), [](const auto& x, const auto& y) {
    return x.src_host != y.src_host ? x.src_host < y.src_host : x.dst_host < y.dst_host;
  });
  return routes;
}

}  // namespace genie::testbed
