#include "genie/testbed/spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "genie/common/input_file.h"

namespace genie::testbed {

namespace {

constexpr int kMaxHosts = 1000;
constexpr int kMaxNics = 8;

Status Bad(const std::string& origin, const std::string& what) {
  return Status::InvalidArgument(origin + ": " + what);
}

std::string Scalar(const YAML::Node& n) {
  return n.IsDefined() && n.IsScalar() ? n.as<std::string>() : "";
}

}  // namespace

std::string TestbedSpec::TopologyText() const {
  if (kind == TopologyKind::kStar) return "star:" + std::to_string(hosts);
  return "leafspine:" + std::to_string(leaves) + "x" + std::to_string(spines) + "x" +
         std::to_string(hosts_per_leaf);
}

const char* SchedulingName(Scheduling s) {
  switch (s) {
    case Scheduling::kFifo: return "fifo";
    case Scheduling::kPerHost: return "per-host";
    case Scheduling::kAckFirst: return "ack-first";
  }
  return "?";
}

Result<Scheduling> ParseScheduling(const std::string& text) {
  if (text == "fifo") return Scheduling::kFifo;
  if (text == "per-host") return Scheduling::kPerHost;
  if (text == "ack-first") return Scheduling::kAckFirst;
  return Status::InvalidArgument("'" + text + "' is not a scheduling (use fifo, per-host or ack-first)");
}

Status ParseTopology(const std::string& text, TestbedSpec* spec) {
  std::smatch m;
  static const std::regex star(R"(star:([0-9]{1,5}))");
  static const std::regex ls(R"(leafspine:([0-9]{1,4})x([0-9]{1,4})x([0-9]{1,5}))");
  if (std::regex_match(text, m, star)) {
    spec->kind = TopologyKind::kStar;
    spec->hosts = std::stoi(m[1]);
    spec->leaves = spec->spines = spec->hosts_per_leaf = 0;
    return Status::Ok();
  }
  if (std::regex_match(text, m, ls)) {
    spec->kind = TopologyKind::kLeafSpine;
    spec->leaves = std::stoi(m[1]);
    spec->spines = std::stoi(m[2]);
    spec->hosts_per_leaf = std::stoi(m[3]);
    spec->hosts = spec->leaves * spec->hosts_per_leaf;
    return Status::Ok();
  }
  return Status::InvalidArgument("topology '" + text +
                                 "' is not star:H (H hosts on one switch) or leafspine:LxSxH "
                                 "(L leaves, S spines, H hosts per leaf), e.g. star:8, "
                                 "leafspine:2x2x4");
}

Status CheckName(const std::string& name) {
  static const std::regex ok(R"([a-z][a-z0-9_]{0,15})");
  if (std::regex_match(name, ok)) return Status::Ok();
  return Status::InvalidArgument("testbed name '" + name +
                                 "' must be 1-16 of a-z, 0-9 and _, starting with a letter "
                                 "(it prefixes the namespaces' names)");
}

Status ParseSpecYaml(const std::string& text, const std::string& origin, TestbedSpec* spec) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Bad(origin, std::string("not YAML: ") + e.what());
  }
  if (!root.IsMap()) return Bad(origin, "expected a mapping of keys (topology, rate, links, ...)");
  static const char* kKeys[] = {"name",  "topology", "rate", "spine_rate",     "spine_queue",
                                "spine_sched", "host_sched", "queue", "mtu",  "nics", "hash",
                                "tcp_congestion", "links"};
  for (const auto& kv : root) {
    std::string key = Scalar(kv.first);
    bool known = false;
    for (const char* k : kKeys) known = known || key == k;
    if (!known) {
      std::string list;
      for (const char* k : kKeys) list += (list.empty() ? "" : ", ") + std::string(k);
      return Bad(origin, "unknown key '" + key + "' (known: " + list + ")");
    }
  }
  auto str = [&](const char* key) { return Scalar(root[key]); };
  // A key, when given, through `parse` (ParseBitRate, ParseBytes, ...) into `*into`; its error
  // names the file and the key.
  auto read = [&](const char* key, auto parse, auto* into) -> Status {
    if (!root[key]) return Status::Ok();
    auto v = parse(str(key));
    if (!v.ok()) return Bad(origin, std::string(key) + ": " + v.status().message());
    *into = *v;
    return Status::Ok();
  };
  try {
    if (root["name"]) spec->name = str("name");
    if (root["topology"]) GENIE_RETURN_IF_ERROR(ParseTopology(str("topology"), spec));
    GENIE_RETURN_IF_ERROR(read("rate", ParseBitRate, &spec->rate_bps));
    GENIE_RETURN_IF_ERROR(read("spine_rate", ParseBitRate, &spec->spine_rate_bps));
    GENIE_RETURN_IF_ERROR(read("spine_queue", ParseBytes, &spec->spine_queue_bytes));
    GENIE_RETURN_IF_ERROR(read("spine_sched", ParseScheduling, &spec->spine_scheduling));
    GENIE_RETURN_IF_ERROR(read("host_sched", ParseScheduling, &spec->host_scheduling));
    GENIE_RETURN_IF_ERROR(read("queue", ParseBytes, &spec->queue_bytes));
    if (root["mtu"]) spec->mtu = root["mtu"].as<int>();
    if (root["nics"]) spec->nics = root["nics"].as<int>();
    if (root["hash"]) {
      std::string h = str("hash");
      if (h != "l3" && h != "l4") return Bad(origin, "hash: '" + h + "' is not l3 or l4");
      spec->hash = h == "l3" ? EcmpHash::kL3 : EcmpHash::kL4;
    }
    if (root["tcp_congestion"]) spec->tcp_congestion = str("tcp_congestion");
    if (root["links"]) {
      if (!root["links"].IsSequence()) return Bad(origin, "links: expected a list of {link: ...}");
      for (const auto& l : root["links"]) {
        if (!l.IsMap()) return Bad(origin, "links: every entry is a mapping (link: h3, rate: ...)");
        LinkOverride o;
        o.link = l["link"] ? Scalar(l["link"]) : "";
        if (o.link.empty()) return Bad(origin, "links: every entry needs `link: h3` (or h3:1, l0-s1)");
        for (const auto& kv : l) {
          std::string k = Scalar(kv.first);
          if (k != "link" && k != "rate" && k != "queue" && k != "mtu") {
            return Bad(origin, "links: " + o.link + ": unknown key '" + k +
                                   "' (known: link, rate, queue, mtu)");
          }
        }
        if (l["rate"]) {
          auto r = ParseBitRate(Scalar(l["rate"]));
          if (!r.ok()) return Bad(origin, "links: " + o.link + ": rate: " + r.status().message());
          o.rate_bps = *r;
        }
        if (l["queue"]) {
          auto q = ParseBytes(Scalar(l["queue"]));
          if (!q.ok()) return Bad(origin, "links: " + o.link + ": queue: " + q.status().message());
          o.queue_bytes = *q;
        }
        if (l["mtu"]) o.mtu = l["mtu"].as<int>();
        spec->links.push_back(o);
      }
    }
  } catch (const YAML::Exception& e) {
    return Bad(origin, std::string("a value has the wrong type: ") + e.what());
  }
  return Status::Ok();
}

Status LoadSpecFile(const std::string& path, TestbedSpec* spec) {
  GENIE_RETURN_IF_ERROR(CheckInputFile(path, "testbed description"));
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot read the testbed description");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseSpecYaml(ss.str(), path, spec);
}

Status CheckCongestionName(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 15 &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                  });
  if (ok) return Status::Ok();
  return Status::InvalidArgument("tcp_congestion: '" + name +
                                 "' is not a congestion control's name (cubic, reno, bbr, "
                                 "dctcp: see /proc/sys/net/ipv4/tcp_available_congestion_control)");
}

Status ValidateSpec(const TestbedSpec& s) {
  GENIE_RETURN_IF_ERROR(CheckName(s.name));
  if (!s.tcp_congestion.empty()) GENIE_RETURN_IF_ERROR(CheckCongestionName(s.tcp_congestion));
  if (s.hosts < 2 || s.hosts > kMaxHosts) {
    return Status::InvalidArgument("a testbed needs 2 to " + std::to_string(kMaxHosts) +
                                   " hosts; " + s.TopologyText() + " has " +
                                   std::to_string(s.hosts));
  }
  if (s.kind == TopologyKind::kLeafSpine) {
    if (s.leaves < 2 || s.leaves > 200 || s.spines < 1 || s.spines > 64 ||
        s.hosts_per_leaf < 1 || s.hosts_per_leaf > 250) {
      return Status::InvalidArgument(s.TopologyText() +
                                     ": use 2-200 leaves, 1-64 spines, 1-250 hosts per leaf");
    }
  }
  if (s.nics < 1 || s.nics > kMaxNics) {
    return Status::InvalidArgument("nics: use 1 to " + std::to_string(kMaxNics) + " per host");
  }
  auto mtu_ok = [](int m) { return m >= 576 && m <= 65000; };
  if (!mtu_ok(s.mtu)) return Status::InvalidArgument("mtu: use 576 to 65000");
  if (s.rate_bps < 1'000'000 || s.rate_bps > 100'000'000'000ull) {
    return Status::InvalidArgument("rate: " + FormatBitRate(s.rate_bps) +
                                   " is outside 1mbit..100gbit (this machine shapes 100mbit-1gbit "
                                   "well; see docs/testbed.md)");
  }
  if (s.spine_rate_bps) {
    if (s.kind != TopologyKind::kLeafSpine) {
      return Status::InvalidArgument("spine_rate: " + s.TopologyText() +
                                     " has no spines; use it with leafspine:LxSxH");
    }
    if (*s.spine_rate_bps < 1'000'000 || *s.spine_rate_bps > 100'000'000'000ull) {
      return Status::InvalidArgument("spine_rate: " + FormatBitRate(*s.spine_rate_bps) +
                                     " is outside 1mbit..100gbit");
    }
  }
  if (s.spine_queue_bytes && s.kind != TopologyKind::kLeafSpine) {
    return Status::InvalidArgument("spine_queue: " + s.TopologyText() +
                                   " has no spines; use it with leafspine:LxSxH");
  }
  if (s.spine_scheduling && s.kind != TopologyKind::kLeafSpine) {
    return Status::InvalidArgument("spine_sched: " + s.TopologyText() +
                                   " has no spines; use it with leafspine:LxSxH");
  }
  // A spine port serves many hosts' packets and a host's NIC only its own.
  if (s.spine_scheduling == Scheduling::kAckFirst) {
    return Status::InvalidArgument("spine_sched: use per-host or fifo (ack-first is for host_sched)");
  }
  if (s.host_scheduling == Scheduling::kPerHost) {
    return Status::InvalidArgument(
        "host_sched: a host's NIC sends only that host's packets; use ack-first or fifo");
  }
  if (s.queue_bytes != 0) GENIE_RETURN_IF_ERROR(CheckQueueLimit(s.queue_bytes, "queue"));
  if (s.spine_queue_bytes) {
    GENIE_RETURN_IF_ERROR(CheckQueueLimit(*s.spine_queue_bytes, "spine_queue"));
  }
  for (const auto& l : s.links) {
    if (l.mtu && !mtu_ok(*l.mtu)) return Status::InvalidArgument("links: " + l.link + ": mtu: use 576 to 65000");
    if (l.queue_bytes) {
      GENIE_RETURN_IF_ERROR(CheckQueueLimit(*l.queue_bytes, "links: " + l.link + ": queue"));
    }
    if (l.rate_bps && (*l.rate_bps < 1'000'000 || *l.rate_bps > 100'000'000'000ull)) {
      return Status::InvalidArgument("links: " + l.link + ": rate outside 1mbit..100gbit");
    }
  }
  return Status::Ok();
}

Status CheckQueueLimit(Bytes queue_bytes, const std::string& what) {
  if (queue_bytes >= kMinQueueBytes && queue_bytes <= kMaxQueueBytes) return Status::Ok();
  return Status::InvalidArgument(
      what + ": " + FormatBytes(queue_bytes) +
      (queue_bytes < kMinQueueBytes
           ? " cannot hold two full-size packets; use at least 3000 B (default: 20 ms of the rate)"
           : " is more than tc's queue limit holds (4 GiB); use less"));
}

}  // namespace genie::testbed
