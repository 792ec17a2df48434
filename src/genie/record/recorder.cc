#include "genie/record/recorder.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "genie/record/event_json.h"

namespace genie::record {

Result<std::unique_ptr<Recorder>> Recorder::Create(const std::string& stream_path,
                                                   const nlohmann::json& header, bool keep_ops,
                                                   env::Env* env) {
  if (env == nullptr) env = env::Env::Default();
  std::unique_ptr<env::WritableFile> file;
  if (!stream_path.empty()) {
    auto made = env->NewWritableFile(stream_path);
    if (!made.ok()) {
      return Status::IoError(
          fmt::format("cannot create results stream {}: {} (check that the "
                      "output directory exists and is writable)",
                      stream_path, made.status().message()));
    }
    file = std::move(made).value();
  }
  std::unique_ptr<Recorder> r(new Recorder(std::move(file), stream_path, header, keep_ops));
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
    if (Status st = file_->Close(); !st.ok() && status_.ok()) {
      status_ = Status::IoError(fmt::format("closing results stream {}: {}", path_, st.message()));
    }
    file_.reset();
  }
  return status_;
}

void Recorder::KeepOpsOf(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  op_ranks_ = std::move(ranks);
}

void Recorder::OnOp(const OpEvent& event) {
  if (!op_ranks_.empty() && !std::binary_search(op_ranks_.begin(), op_ranks_.end(), event.rank)) {
    return;
  }
  if (keep_ops_) ops_.push_back(event);
  if (file_ == nullptr) return;
  line_.clear();
  AppendOpRecord(event, &line_);
  line_.push_back('\n');
  WriteBuffered();
}

void Recorder::OnRankDone(const RankSummary& summary) {
  ranks_.push_back(summary);
  if (file_ == nullptr) return;
  // Once an iteration, as the rank's last op ends while others may still be in theirs: no JSON
  // tree (on shared cores its CPU would count as their steps').
  line_.clear();
  AppendRankRecord(summary, &line_);
  line_.push_back('\n');
  WriteBuffered();
}

void Recorder::Note(const std::string& kind, nlohmann::json fields) {
  fields["record"] = kind;
  WriteLine(fields);
}

void Recorder::WriteLine(const nlohmann::json& j) {
  if (file_ == nullptr) return;
  line_ = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line_.push_back('\n');
  WriteBuffered();
}

void Recorder::WriteBuffered() {
  Status st = file_->Append(line_);
  if (!st.ok() && status_.ok()) {
    status_ = Status::IoError(
        fmt::format("writing results stream {}: {} (disk full?)", path_, st.message()));
    spdlog::error("{}", status_.message());
  }
}

}  // namespace genie::record
