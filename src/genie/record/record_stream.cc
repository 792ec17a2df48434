#include "genie/record/record_stream.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "genie/record/event_json.h"
#include "genie/record/json_check.h"
#include "genie/record/recorder.h"

namespace genie::record {

namespace {

constexpr const char* kStreamRemedy =
    "the stream was damaged or not written by genie; rerun, or leave this rank's stream out";

}  // namespace

Status CheckRunHeader(const nlohmann::json& run, const std::string& where,
                      const std::string& remedy) {
  FieldReader r(run, where, remedy);
  int rank = 0, world_size = 1, iterations = 0, warmup = 0;
  r.Optional("rank", &rank)
      .Optional("world_size", &world_size)
      .Optional("iterations", &iterations)
      .Optional("warmup", &warmup);
  if (r.ok() && world_size < 1) r.FailField("world_size", "should be at least 1");
  if (r.ok() && rank < 0) r.FailField("rank", "is negative");
  if (r.ok() && rank >= world_size && HasField(run, "rank") && HasField(run, "world_size")) {
    r.FailField("rank", fmt::format("is {}, not a rank of a {}-rank run", rank, world_size));
  }
  if (r.ok() && iterations < 0) r.FailField("iterations", "is negative");
  if (r.ok() && warmup < 0) r.FailField("warmup", "is negative");
  return r.status();
}

Result<RecordStream> ParseRecordStream(std::string_view text, const std::string& name) {
  RecordStream out;
  size_t pos = 0;
  int line_no = 0;
  bool any_record = false;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool last = nl == std::string_view::npos || text.find_first_not_of(" \t\r\n", nl) ==
                                                     std::string_view::npos;
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;

    const std::string where = fmt::format("{}: line {}", name, line_no);
    if (JsonNestingDepth(line) > kMaxJsonDepth) {
      return Status::Corruption(fmt::format(
          "{}: a record nested more than {} levels deep; genie's records are flat; {}", where,
          kMaxJsonDepth, kStreamRemedy));
    }
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      if (last) {
        spdlog::warn("{}: line {} is incomplete (the run stopped while writing it); ignored",
                     name, line_no);
        out.truncated = true;
        break;
      }
      return Status::Corruption(fmt::format(
          "{} is not valid JSON (the file was damaged after it was written); {}", where,
          kStreamRemedy));
    }
    FieldReader r(j, where, kStreamRemedy);
    std::string kind;
    r.Required("record", &kind);
    if (!r.ok()) return r.status();
    if (kind == "header") {
      std::string format;
      int version = 0;
      r.Required("format", &format).Optional("version", &version);
      if (r.ok() && format != kStreamFormat) {
        return Status::Corruption(fmt::format(
            "{}: not a genie results stream (format \"{}\", expected \"{}\")", where, format,
            kStreamFormat));
      }
      if (r.ok() && version > kStreamVersion) {
        r.FailField("version", fmt::format("is {}: the stream was written by a newer genie "
                                           "(this one reads version {}); read it with that genie",
                                           version, kStreamVersion));
      }
      if (r.ok() && any_record) {
        r.Fail("a header after other records (two streams joined into one file?)");
      }
      const nlohmann::json* run = r.Object("run");
      if (!r.ok()) return r.status();
      if (run != nullptr) {
        GENIE_RETURN_IF_ERROR(CheckRunHeader(*run, where + ": \"run\"", kStreamRemedy));
      }
      out.header = run != nullptr ? *run : nlohmann::json::object();
    } else if (kind == "op") {
      auto e = OpEventFromJson(j, where, kStreamRemedy);
      if (!e.ok()) return e.status();
      out.ops.push_back(std::move(*e));
    } else if (kind == "rank") {
      auto s = RankSummaryFromJson(j, where, kStreamRemedy);
      if (!s.ok()) return s.status();
      out.ranks.push_back(*s);
    } else if (kind == "clock") {
      GENIE_RETURN_IF_ERROR(CheckClockRecord(j, where, kStreamRemedy));
      if (!out.clock.is_null()) r.Fail("a second clock record (two streams joined into one file?)");
      if (!r.ok()) return r.status();
      out.clock = std::move(j);
    } else if (kind == "traffic") {
      GENIE_RETURN_IF_ERROR(CheckTrafficRecord(j, where, kStreamRemedy));
      out.traffic = std::move(j);
    } else if (kind == "testbed") {
      // What rank 0 read off the testbed (counters, faults): carried into results as it is.
      if (!j.is_object()) r.Fail("the testbed record is not an object");
      if (!r.ok()) return r.status();
      out.testbed = std::move(j);
    } else if (kind == "localize") {
      // The rank's probe of the links its workload used (driver/localize.h), as it is.
      if (!j.is_object()) r.Fail("the localize record is not an object");
      if (!r.ok()) return r.status();
      out.localize = std::move(j);
    } else if (kind == "compute_faults") {
      // When the rank's compute faults took effect (driver/run.cc): the events, checked.
      const nlohmann::json* events = r.Array("events", /*required=*/true);
      int64_t rank = 0;
      r.Required("rank", &rank);
      for (size_t i = 0; r.ok() && events != nullptr && i < events->size(); ++i) {
        FieldReader er((*events)[i], fmt::format("{} events[{}]", where, i), kStreamRemedy);
        std::string fault, action;
        int64_t at = 0;
        er.Required("fault", &fault).Required("action", &action).Required("at_ns", &at);
        if (!er.ok()) return er.status();
      }
      if (!r.ok()) return r.status();
      out.compute_faults = std::move(j);
    } else if (kind == "connections") {
      // The rank's connections' addresses and ports (driver/run.cc), checked.
      const nlohmann::json* conns = r.Array("connections", /*required=*/true);
      int64_t rank = 0;
      r.Required("rank", &rank);
      for (size_t i = 0; r.ok() && conns != nullptr && i < conns->size(); ++i) {
        FieldReader cr((*conns)[i], fmt::format("{} connections[{}]", where, i), kStreamRemedy);
        int64_t peer = 0, channel = 0;
        std::string local, remote;
        cr.Required("peer", &peer).Required("channel", &channel);
        cr.Required("local", &local).Required("remote", &remote);
        if (!cr.ok()) return cr.status();
      }
      if (!r.ok()) return r.status();
      out.connections = std::move(j);
    } else {
      r.FailField("record", fmt::format("is \"{}\" (expected header, op, rank, clock, traffic, "
                                        "testbed, localize, compute_faults or connections)",
                                        kind));
      return r.status();
    }
    any_record = true;
  }
  return out;
}

Result<RecordStream> ReadRecordStream(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(
        fmt::format("cannot open results stream {}: {}", path, std::strerror(errno)));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    return Status::IoError(fmt::format("reading results stream {} failed: {}", path,
                                       std::strerror(errno)));
  }
  return ParseRecordStream(ss.str(), path);
}

}  // namespace genie::record
