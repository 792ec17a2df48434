#include "genie/testbed/link_qdisc.h"

#include <algorithm>
#include <cmath>

namespace genie::testbed {

namespace {

uint64_t U(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() && it->get<double>() >= 0
             ? static_cast<uint64_t>(it->get<double>())
             : 0;
}

}  // namespace

nlohmann::json LinkQdisc::ToJson() const {
  return {{"qdisc", kind},
          {"rate_bps", rate_bps},
          {"burst_bytes", burst_bytes},
          {"limit_bytes", limit_bytes},
          {"queues", queues},
          {"scheduling", scheduling}};
}

LinkQdisc LinkQdisc::FromJson(const nlohmann::json& j) {
  LinkQdisc q;
  if (!j.is_object()) return q;
  q.kind = j.value("qdisc", std::string());
  q.rate_bps = U(j, "rate_bps");
  q.burst_bytes = U(j, "burst_bytes");
  q.limit_bytes = U(j, "limit_bytes");
  q.queues = static_cast<int>(U(j, "queues"));
  q.scheduling = j.value("scheduling", std::string());
  return q;
}

LinkQdisc QdiscFromTcJson(const nlohmann::json& qdiscs, const std::string& ifname) {
  LinkQdisc q;
  if (!qdiscs.is_array()) return q;
  for (const auto& e : qdiscs) {
    if (!e.is_object() || e.value("dev", std::string()) != ifname || !e.value("root", false)) {
      continue;
    }
    q.kind = e.value("kind", std::string());
    const nlohmann::json o = e.value("options", nlohmann::json::object());
    if (q.kind == "tbf") {
      q.rate_bps = U(o, "rate") * 8;  // tc says bytes per second
      q.burst_bytes = U(o, "burst");
      q.limit_bytes = U(o, "limit");
      if (q.limit_bytes == 0 && o.contains("lat") && q.rate_bps > 0) {
        // limit = (lat + burst's time at the rate) x rate, as tc computed lat from it.
        const double rate_Bps = static_cast<double>(q.rate_bps) / 8;
        q.limit_bytes =
            static_cast<uint64_t>(std::llround(static_cast<double>(U(o, "lat")) * 1e-6 * rate_Bps +
                                               static_cast<double>(q.burst_bytes)));
      }
      q.queues = 1;
    }
  }
  if (q.kind.empty()) return q;
  // The FIFOs under the root (an htb's leaves; a tbf's when it holds an ordering htb): where
  // packets actually wait, so theirs is the limit that counts.
  int leaves = 0;
  uint64_t leaf_limit = 0;
  for (const auto& e : qdiscs) {
    if (!e.is_object() || e.value("dev", std::string()) != ifname || e.value("root", false)) {
      continue;
    }
    const std::string kind = e.value("kind", std::string());
    if (kind != "bfifo") continue;
    leaf_limit = std::max(leaf_limit, U(e.value("options", nlohmann::json::object()), "limit"));
    ++leaves;
  }
  if (leaves > 0) {
    q.limit_bytes = leaf_limit;
    q.queues = leaves;
  }
  return q;
}

}  // namespace genie::testbed
