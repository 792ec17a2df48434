#include "genie/record/record_stream.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "genie/record/event_json.h"
#include "genie/record/recorder.h"

namespace genie::record {

Result<RecordStream> ParseRecordStream(std::string_view text, const std::string& name) {
  RecordStream out;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool last = nl == std::string_view::npos || text.find_first_not_of(" \t\r\n", nl) ==
                                                     std::string_view::npos;
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;

    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      if (last) {
        spdlog::warn("{}: line {} is incomplete (the run stopped while writing it); ignored",
                     name, line_no);
        out.truncated = true;
        break;
      }
      return Status::Corruption(fmt::format(
          "{}: line {} is not valid JSON (the file was damaged after it was written)", name,
          line_no));
    }
    std::string kind = j.is_object() ? j.value("record", "") : "";
    auto where = [&](const Status& s) {
      return s.WithContext(fmt::format("{}: line {}", name, line_no));
    };
    if (kind == "header") {
      if (j.value("format", "") != kStreamFormat) {
        return Status::Corruption(
            fmt::format("{}: line {}: not a genie results stream (format \"{}\")", name, line_no,
                        j.value("format", "")));
      }
      out.header = j.value("run", nlohmann::json());
    } else if (kind == "op") {
      auto e = OpEventFromJson(j);
      if (!e.ok()) return where(e.status());
      out.ops.push_back(std::move(*e));
    } else if (kind == "rank") {
      auto s = RankSummaryFromJson(j);
      if (!s.ok()) return where(s.status());
      out.ranks.push_back(*s);
    } else if (kind == "clock") {
      out.clock = std::move(j);
    } else if (kind == "traffic") {
      out.traffic = std::move(j);
    } else {
      return Status::Corruption(fmt::format(
          "{}: line {}: unknown record \"{}\" (expected header, op, rank, clock or traffic)",
          name, line_no, kind));
    }
  }
  return out;
}

Result<RecordStream> ReadRecordStream(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("cannot open results stream {}", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ParseRecordStream(ss.str(), path);
}

}  // namespace genie::record
