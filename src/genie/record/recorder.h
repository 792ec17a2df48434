// Recorder: collects what one rank (or the whole simulation) executed — an OpEvent per finished
// node and a RankSummary per finished iteration — in memory, and optionally streams each record
// to a JSON-lines file as it arrives, so a crashed or killed run still leaves its results.
//
// Stream format (docs/results.md): one self-contained JSON object per line, flushed to the
// kernel after every line. First line: {"record":"header","format":"genie-record","version":1,
// "run":{...}}; then {"record":"op",...} and {"record":"rank",...} lines (event_json.h fields),
// and a real run's {"record":"clock",...} (offset to rank 0's clock, written at start) and
// {"record":"traffic",...} (bytes per peer, network vs modelled, written at the end).
// A reader (record_stream.h) drops a truncated last line.
//
// The stream is written through an env::Env (the real one unless given), so a full or read-only
// disk can be injected with a FaultyEnv.
//
// Ownership and threads: owned by one rank's event loop (or the simulator); not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"
#include "genie/env/env.h"
#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"

namespace genie::record {

inline constexpr const char* kStreamFormat = "genie-record";
inline constexpr int kStreamVersion = 1;

class Recorder {
 public:
  // stream_path "" = memory only; otherwise the file is created (truncated) and the header line
  // written at once. `header` is the run information (provenance, rank, world size, ...).
  // keep_ops = false streams ops without keeping them (ops() stays empty), so a long real run's
  // memory does not grow with its length; RankSummaries are always kept.
  static Result<std::unique_ptr<Recorder>> Create(const std::string& stream_path,
                                                  const nlohmann::json& header,
                                                  bool keep_ops = true, env::Env* env = nullptr);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void OnOp(const OpEvent& event);
  // Keeps and streams the ops of these ranks only (sorted or not; empty = every rank): a
  // thousand-rank simulation's full detail is kept for the ranks of interest, summaries for all.
  void KeepOpsOf(std::vector<int> ranks);
  void OnRankDone(const RankSummary& summary);
  // An auxiliary record ("clock", "traffic"): `fields` plus "record": kind, streamed only.
  void Note(const std::string& kind, nlohmann::json fields);

  const std::vector<OpEvent>& ops() const { return ops_; }
  const std::vector<RankSummary>& ranks() const { return ranks_; }
  const nlohmann::json& header() const { return header_; }

  // The first write error on the stream (later records are still kept in memory), or OK.
  const Status& status() const { return status_; }
  // Closes the stream; returns status(). Also done by the destructor.
  Status Close();

 private:
  Recorder(std::unique_ptr<env::WritableFile> file, std::string path, nlohmann::json header,
           bool keep_ops)
      : file_(std::move(file)),
        path_(std::move(path)),
        header_(std::move(header)),
        keep_ops_(keep_ops) {}
  void WriteLine(const nlohmann::json& j);
  // Writes line_ (which ends in '\n') with one append (one write(2) for the real Env): a crash
  // leaves at most a partial last line, and what was written survives the process (it is in
  // the kernel, no user buffer).
  void WriteBuffered();

  std::unique_ptr<env::WritableFile> file_;  // null when memory only or closed
  std::string path_;
  nlohmann::json header_;
  bool keep_ops_;
  std::vector<int> op_ranks_;  // sorted; empty = every rank
  std::vector<OpEvent> ops_;
  std::vector<RankSummary> ranks_;
  std::string line_;  // reused for every record: no allocation per op once warm
  Status status_;
};

}  // namespace genie::record
