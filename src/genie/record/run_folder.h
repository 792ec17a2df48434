// A run's output folder (`genie run --output DIR`): where each rank's stream lives
// (DIR/rank-N.jsonl), which streams there belong to a given run (their clock record carries the
// run id), and the claim that keeps two jobs from writing into one folder at once.
//
// The claim: every rank process of a job holds a shared lock on DIR/.genie-run.lock for as long
// as it lives, and the file names the job (job id, host, pid, time). A process of another job
// that finds the lock held fails at once — before it creates or truncates any stream — with an
// error naming the folder and the job that holds it; a job's own ranks join the claim. The
// kernel drops the lock when a process exits or is killed, so a finished or crashed job never
// blocks the next one. Locks are open-file-description locks (fcntl F_OFD_*), which NFS
// carries to the server, so ranks on several hosts sharing one folder take part too.
//
// Threads: the claim object is owned by the rank's main thread; the functions are pure apart
// from the file system and may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/env/env.h"

namespace genie::record {

// DIR/rank-N.jsonl.
std::string StreamPath(const std::string& dir, int rank);

// True when the stream at `path` was written by run `run_id`: its clock record (the second
// line) carries that id. False for a missing file, an earlier run's stream, or anything else.
bool IsStreamOfRun(const std::string& path, const std::string& run_id);

// Each rank stream's (DIR/rank-*.jsonl) first line that is a `kind` record ("\"record\":\"kind\""),
// in no particular order; streams without one give nothing. Reads no further than that line: a
// running job's streams grow.
std::vector<std::string> FirstRecordLines(const std::string& dir, const std::string& kind);

// Who holds `dir`'s claim ("job J, process P on H, since T"), or "" when nobody alive does
// (no lock file, or its lock not held). A claim this process holds itself counts as held.
std::string FolderHolder(const std::string& dir);

class OutputFolderClaim {
 public:
  ~OutputFolderClaim();
  OutputFolderClaim(const OutputFolderClaim&) = delete;
  OutputFolderClaim& operator=(const OutputFolderClaim&) = delete;

 private:
  friend Result<std::unique_ptr<OutputFolderClaim>> ClaimOutputFolder(const std::string&,
                                                                      const std::string&, int,
                                                                      env::Env*);
  explicit OutputFolderClaim(int fd) : fd_(fd) {}
  int fd_;
};

// Claims `dir` (which must exist) for job `job_id` of `world_size` ranks; held until the
// returned object is destroyed. A one-rank job is its own process, so its claim is also keyed by
// the process id (single-rank jobs share a derived job id). Errors: InvalidArgument naming the
// folder and the job holding it (what to do: wait, or give this job its own --output);
// IoError when the lock file cannot be created. `env` (nullptr: env::Env::Default()) times the
// wait for the lock's mutex byte.
Result<std::unique_ptr<OutputFolderClaim>> ClaimOutputFolder(const std::string& dir,
                                                             const std::string& job_id,
                                                             int world_size,
                                                             env::Env* env = nullptr);

}  // namespace genie::record
