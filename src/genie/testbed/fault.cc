#include "genie/testbed/fault.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "genie/common/input_file.h"
#include "genie/testbed/spec.h"

namespace genie::testbed {

const char* KindName(FaultKind k) {
  switch (k) {
    case FaultKind::kRate: return "rate";
    case FaultKind::kQueue: return "queue";
    case FaultKind::kLoss: return "loss";
    case FaultKind::kDelay: return "delay";
    case FaultKind::kDown: return "down";
    case FaultKind::kUp: return "up";
    case FaultKind::kFlap: return "flap";
  }
  return "?";
}

const char* DirectionName(Direction d) {
  switch (d) {
    case Direction::kBoth: return "both";
    case Direction::kOut: return "out";
    case Direction::kIn: return "in";
  }
  return "?";
}

Result<Direction> ParseDirection(const std::string& t) {
  if (t == "both") return Direction::kBoth;
  if (t == "out") return Direction::kOut;
  if (t == "in") return Direction::kIn;
  return Status::InvalidArgument("direction '" + t +
                                 "' is not out (from the link's first end: the host, or the "
                                 "leaf of l0-s1), in, or both");
}

std::string Fault::Describe() const {
  std::string what;
  switch (kind) {
    case FaultKind::kRate: what = "rate " + FormatBitRate(rate_bps); break;
    case FaultKind::kQueue: what = "queue " + FormatBytes(queue_bytes); break;
    case FaultKind::kLoss: what = fmt::format("loss {:g}%", loss * 100); break;
    case FaultKind::kDelay:
      what = "delay " + FormatDuration(delay) + (jitter > 0 ? " jitter " + FormatDuration(jitter) : "");
      break;
    case FaultKind::kDown: what = "down"; break;
    case FaultKind::kUp: what = "up"; break;
    case FaultKind::kFlap: what = fmt::format("flap {} x {}", flaps, FormatDuration(period)); break;
  }
  std::string s = link + " " + DirectionName(direction) + ": " + what;
  if (duration > 0) s += " for " + FormatDuration(duration);
  return s;
}

Status ValidateFault(const Fault& f) {
  auto bad = [&](const std::string& m) { return Status::InvalidArgument(f.link + ": " + m); };
  if (f.link.empty()) {
    return Status::InvalidArgument(
        "a fault needs a link (h3, h3:1, l0-s1), or a rank for a compute fault (rank: 3, "
        "compute: 1.5x)");
  }
  switch (f.kind) {
    case FaultKind::kRate:
      if (f.rate_bps < 100'000) return bad("rate under 100kbit stalls TCP; use a link down instead");
      // A testbed's links go to 100gbit (spec.h), and a host's ACK-first htb orders up to it.
      if (f.rate_bps > 100'000'000'000ull) {
        return bad("rate above 100gbit; a testbed link goes to 100gbit");
      }
      break;
    case FaultKind::kQueue:
      GENIE_RETURN_IF_ERROR(CheckQueueLimit(f.queue_bytes, f.link + ": queue"));
      break;
    case FaultKind::kLoss:
      if (!(f.loss > 0 && f.loss < 1)) return bad("loss must be between 0% and 100%, exclusive");
      break;
    case FaultKind::kDelay:
      if (f.delay <= 0 || f.delay > 10 * kNsPerSec) return bad("delay must be in (0, 10s]");
      if (f.jitter < 0 || f.jitter > f.delay) return bad("jitter must be in [0, delay]");
      break;
    case FaultKind::kFlap:
      if (f.flaps < 1 || f.flaps > 1000) return bad("flap: use 1 to 1000 times");
      if (f.period < 2 * kNsPerMs) return bad("flap period must be at least 2ms");
      break;
    case FaultKind::kDown:
    case FaultKind::kUp:
      break;
  }
  if (f.duration < 0 || f.at < 0 || f.iteration < 0) return bad("times must not be negative");
  return Status::Ok();
}

Result<FaultSchedule> ParseFaultSchedule(const std::string& text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(origin + ": not YAML: " + e.what());
  }
  FaultSchedule out;
  if (!root.IsMap() || !root["faults"] || !root["faults"].IsSequence()) {
    return Status::InvalidArgument(origin + ": expected `faults:` with a list of faults "
                                            "(docs/testbed.md)");
  }
  if (root["testbed"]) out.testbed = root["testbed"].as<std::string>();
  int index = 0;
  for (const auto& n : root["faults"]) {
    ++index;
    const std::string where = fmt::format("{}: fault {}", origin, index);
    if (!n.IsMap()) return Status::InvalidArgument(where + ": expected a mapping (link: h3, ...)");
    // A rank's entry is a compute fault, read (and checked) by compute/compute_fault.h.
    bool compute = false, link = false;
    for (const auto& kv : n) {
      compute = compute || kv.first.as<std::string>() == "rank";
      link = link || kv.first.as<std::string>() == "link";
    }
    if (compute && link) {
      return Status::InvalidArgument(where + ": both link and rank: a fault changes a link (a "
                                             "network fault) or a rank's compute, not both; "
                                             "write two entries");
    }
    if (compute) {
      ++out.compute_faults;
      continue;
    }
    Fault f;
    int kinds = 0;
    try {
      for (const auto& kv : n) {
        const std::string key = kv.first.as<std::string>();
        const std::string value = kv.second.IsScalar() ? kv.second.as<std::string>() : "";
        auto duration = [&]() -> Result<TimeNs> {
          auto d = ParseDuration(value);
          if (!d.ok()) return Status::InvalidArgument(where + ": " + key + ": " + d.status().message());
          return *d;
        };
        if (key == "link") {
          f.link = value;
        } else if (key == "direction") {
          auto d = ParseDirection(value);
          if (!d.ok()) return Status::InvalidArgument(where + ": " + d.status().message());
          f.direction = *d;
        } else if (key == "at") {
          GENIE_ASSIGN_OR_RETURN(f.at, duration());
        } else if (key == "iteration") {
          f.iteration = kv.second.as<int>();
        } else if (key == "for") {
          GENIE_ASSIGN_OR_RETURN(f.duration, duration());
        } else if (key == "period") {
          GENIE_ASSIGN_OR_RETURN(f.period, duration());
        } else if (key == "jitter") {
          GENIE_ASSIGN_OR_RETURN(f.jitter, duration());
        } else if (key == "rate") {
          auto r = ParseBitRate(value);
          if (!r.ok()) return Status::InvalidArgument(where + ": rate: " + r.status().message());
          f.kind = FaultKind::kRate, f.rate_bps = *r, ++kinds;
        } else if (key == "queue") {
          auto q = ParseBytes(value);
          if (!q.ok()) return Status::InvalidArgument(where + ": queue: " + q.status().message());
          f.kind = FaultKind::kQueue, f.queue_bytes = *q, ++kinds;
        } else if (key == "loss") {
          auto l = ParseFraction(value);
          if (!l.ok()) return Status::InvalidArgument(where + ": loss: " + l.status().message());
          f.kind = FaultKind::kLoss, f.loss = *l, ++kinds;
        } else if (key == "delay") {
          GENIE_ASSIGN_OR_RETURN(f.delay, duration());
          f.kind = FaultKind::kDelay, ++kinds;
        } else if (key == "down") {
          if (value != "true") {  // `down: 2s` is down for 2 s
            GENIE_ASSIGN_OR_RETURN(f.duration, duration());
          }
          f.kind = FaultKind::kDown, ++kinds;
        } else if (key == "up") {
          f.kind = FaultKind::kUp, ++kinds;
        } else if (key == "flap") {
          f.kind = FaultKind::kFlap, f.flaps = kv.second.as<int>(), ++kinds;
        } else {
          return Status::InvalidArgument(
              where + ": unknown key '" + key +
              "' (link, direction, at, iteration, for, and one of rate, queue, loss, delay "
              "[jitter], down, up, flap [period])");
        }
      }
    } catch (const YAML::Exception& e) {
      return Status::InvalidArgument(where + ": a value has the wrong type: " + e.what());
    }
    if (kinds != 1) {
      return Status::InvalidArgument(where + ": say exactly one of rate, queue, loss, delay, down, "
                                             "up, flap");
    }
    Status st = ValidateFault(f);
    if (!st.ok()) return Status::InvalidArgument(where + ": " + st.message());
    out.faults.push_back(f);
  }
  return out;
}

Result<FaultSchedule> LoadFaultSchedule(const std::string& path) {
  GENIE_ASSIGN_OR_RETURN(std::string text, ReadInputFile(path, "fault schedule"));
  return ParseFaultSchedule(text, path);
}

}  // namespace genie::testbed
