#include "genie/testbed/ecmp.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "genie/env/env.h"

namespace genie::testbed {

bool EcmpKnown(const Layout& layout) {
  const TestbedSpec& s = layout.spec;
  return s.kind == TopologyKind::kLeafSpine && s.hash == EcmpHash::kL3 && s.spines > 1 &&
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
    const std::string path =
        fmt::format("/tmp/genie-ecmp-{}-{}-l{}.batch", ::getpid(), s.name, leaf);
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
    std::istringstream lines(*output);
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
