#include "genie/record/recorder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "genie/record/event_json.h"

namespace genie::record {

Result<std::unique_ptr<Recorder>> Recorder::Create(const std::string& stream_path,
                                                   const nlohmann::json& header, bool keep_ops) {
  int fd = -1;
  if (!stream_path.empty()) {
    fd = ::open(stream_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      return Status::IoError(
          fmt::format("cannot create results stream {}: {} (check that the "
                      "output directory exists and is writable)",
                      stream_path, std::strerror(errno)));
    }
  }
  std::unique_ptr<Recorder> r(new Recorder(fd, stream_path, header, keep_ops));
  r->WriteLine({{"record", "header"},
                {"format", kStreamFormat},
                {"version", kStreamVersion},
                {"run", header}});
  if (!r->status_.ok()) return r->status_;
  return r;
}

Recorder::~Recorder() { Close(); }

Status Recorder::Close() {
  if (fd_ >= 0) {
    if (::close(fd_) != 0 && status_.ok()) {
      status_ = Status::IoError(
          fmt::format("closing results stream {}: {}", path_, std::strerror(errno)));
    }
    fd_ = -1;
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
  if (fd_ < 0) return;
  line_.clear();
  AppendOpRecord(event, &line_);
  line_.push_back('\n');
  WriteBuffered();
}

void Recorder::OnRankDone(const RankSummary& summary) {
  ranks_.push_back(summary);
  if (fd_ < 0) return;
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
  if (fd_ < 0) return;
  line_ = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line_.push_back('\n');
  WriteBuffered();
}

void Recorder::WriteBuffered() {
  size_t done = 0;
  while (done < line_.size()) {
    ssize_t n = ::write(fd_, line_.data() + done, line_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (status_.ok()) {
        status_ = Status::IoError(fmt::format("writing results stream {}: {} (disk full?)", path_,
                                              n < 0 ? std::strerror(errno) : "short write"));
        spdlog::error("{}", status_.message());
      }
      return;
    }
    done += static_cast<size_t>(n);
  }
}

}  // namespace genie::record
