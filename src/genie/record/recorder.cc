#include "genie/record/recorder.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "genie/record/event_json.h"

namespace genie::record {

Result<std::unique_ptr<Recorder>> Recorder::Create(const std::string& stream_path,
                                                   const nlohmann::json& header) {
  std::FILE* file = nullptr;
  if (!stream_path.empty()) {
    file = std::fopen(stream_path.c_str(), "w");
    if (file == nullptr) {
      return Status::IoError(fmt::format("cannot create results stream {}: {} (check that the "
                                         "output directory exists and is writable)",
                                         stream_path, std::strerror(errno)));
    }
  }
  std::unique_ptr<Recorder> r(new Recorder(file, stream_path, header));
  r->WriteLine({{"record", "header"},
                {"format", kStreamFormat},
                {"version", kStreamVersion},
                {"run", header}});
  if (!r->status_.ok()) return r->status_;
  return r;
}

Recorder::~Recorder() { Close(); }

Status Recorder::Close() {
  if (file_ != nullptr) {
    if (std::fclose(file_) != 0 && status_.ok()) {
      status_ = Status::IoError(fmt::format("closing results stream {}: {}", path_,
                                            std::strerror(errno)));
    }
    file_ = nullptr;
  }
  return status_;
}

void Recorder::OnOp(const OpEvent& event) {
  ops_.push_back(event);
  if (file_ == nullptr) return;
  nlohmann::json j = ToJson(event);
  j["record"] = "op";
  WriteLine(j);
}

void Recorder::OnRankDone(const RankSummary& summary) {
  ranks_.push_back(summary);
  if (file_ == nullptr) return;
  nlohmann::json j = ToJson(summary);
  j["record"] = "rank";
  WriteLine(j);
}

void Recorder::WriteLine(const nlohmann::json& j) {
  if (file_ == nullptr) return;
  // One fwrite of the whole line then a flush: a crash leaves at most one partial last line.
  std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    if (status_.ok()) {
      status_ = Status::IoError(fmt::format("writing results stream {}: {} (disk full?)", path_,
                                            std::strerror(errno)));
      spdlog::error("{}", status_.message());
    }
  }
}

}  // namespace genie::record
