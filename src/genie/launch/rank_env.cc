#include "genie/launch/rank_env.h"

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

namespace genie::launch {

namespace {

struct Scheme {
  const char* source;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;
  const char* job;
};

constexpr Scheme kSchemes[] = {
    {"genie", "GENIE_RANK", "GENIE_WORLD_SIZE", "GENIE_LOCAL_RANK", "GENIE_LOCAL_WORLD_SIZE",
     "GENIE_JOB_ID"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "TORCHELASTIC_RUN_ID"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_MCA_ess_base_jobid"},
    {"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "PMI_JOBID"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE",
     "SLURM_JOB_ID"},
};

// Digits only: " 3", "+3", "3x" and "0x3" are what a broken launcher or script writes.
Result<int> ParseInt(const char* name, const char* value, int min, int max = 1'000'000) {
  std::string_view v(value);
  long long x = 0;
  bool digits = !v.empty() && v.size() <= 9;
  for (char c : v) {
    if (c < '0' || c > '9') digits = false;
    if (digits) x = x * 10 + (c - '0');
  }
  if (!digits || x < min || x > max) {
    return Status::InvalidArgument(fmt::format(
        "environment variable {}='{}' is not a whole number from {} to {}; fix what sets it "
        "(the launcher or your script)", name, value, min, max));
  }
  return static_cast<int>(x);
}

uint64_t Fnv(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// The launcher's own store when it runs one (net/launcher_kvs.h): the one of the launcher that
// set the rank first (mpiexec inside a Slurm allocation is mpiexec's job).
std::string LauncherStore(const EnvLookup& env, std::string_view source) {
  const bool pmi = env("PMI_FD") != nullptr || env("PMI_PORT") != nullptr;
  const bool pmix = env("PMIX_NAMESPACE") != nullptr && env("PMIX_RANK") != nullptr;
  if (source == "pmi" && pmi) return "pmi";
  if (pmix) return "pmix";
  if (pmi) return "pmi";
  return "";
}

}  // namespace

Status CheckRendezvousSpec(const std::string& spec) {
  if (spec == "pmi" || spec == "pmix") return Status::Ok();
  if (spec.empty() || spec.rfind("dir:", 0) == 0) {
    if (spec == "dir:") return Status::InvalidArgument("rendezvous 'dir:' names no directory");
    return Status::Ok();
  }
  if (spec.rfind("tcp:", 0) != 0) {
    return Status::InvalidArgument("rendezvous '" + spec +
                                   "': expected dir:/shared/path, tcp:host:port, pmi or pmix");
  }
  const std::string where = spec.substr(4);
  const size_t colon = where.rfind(':');
  std::string host = colon == std::string::npos ? "" : where.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (colon == std::string::npos || host.empty()) {
    return Status::InvalidArgument("rendezvous '" + spec +
                                   "': expected tcp:host:port with the host of rank 0");
  }
  const std::string port = where.substr(colon + 1);
  auto p = ParseInt("the rendezvous port", port.c_str(), 1, 65535);
  if (!p.ok()) {
    return Status::InvalidArgument("rendezvous '" + spec + "': the port must be a number from 1 "
                                   "to 65535 that every rank can reach on rank 0's host");
  }
  return Status::Ok();
}

Result<RankEnv> DiscoverRankEnv(const EnvLookup& lookup) {
  EnvLookup env = lookup ? lookup : EnvLookup([](const char* n) { return std::getenv(n); });
  RankEnv out;
  out.source = "none";
  const Scheme* used = nullptr;
  for (const Scheme& s : kSchemes) {
    if (env(s.rank) != nullptr) {
      used = &s;
      break;
    }
  }
  if (used == nullptr && env("PMI_PORT") != nullptr && env("PMI_ID") != nullptr) {
    // Not one rank: one of a job whose rank and size only the PMI server's connection tells.
    return Status::InvalidArgument(fmt::format(
        "PMI_PORT={} and PMI_ID={} but no PMI_RANK/PMI_SIZE: the launcher runs PMI in port mode "
        "(mpiexec -pmi-port), where genie cannot learn its rank; start it without -pmi-port",
        env("PMI_PORT"), env("PMI_ID")));
  }
  if (used != nullptr) {
    out.source = used->source;
    const char* size = env(used->size);
    if (size == nullptr) {
      return Status::InvalidArgument(fmt::format("{} is set but {} is not; the launcher must set "
                                                 "both", used->rank, used->size));
    }
    GENIE_ASSIGN_OR_RETURN(out.rank, ParseInt(used->rank, env(used->rank), 0));
    GENIE_ASSIGN_OR_RETURN(out.world_size, ParseInt(used->size, size, 1));
    if (out.rank >= out.world_size) {
      return Status::InvalidArgument(fmt::format("{}={} is not below {}={}", used->rank, out.rank,
                                                 used->size, out.world_size));
    }
    out.local_rank = out.rank;
    if (const char* v = env(used->local_rank)) {
      GENIE_ASSIGN_OR_RETURN(out.local_rank, ParseInt(used->local_rank, v, 0));
    }
    if (const char* v = env(used->local_size)) {
      // Slurm writes e.g. "4(x2)" or "4,2(x3)"; the leading count is what we need.
      std::string s(v);
      s = s.substr(0, s.find_first_of("(,"));
      GENIE_ASSIGN_OR_RETURN(out.local_world_size, ParseInt(used->local_size, s.c_str(), 1));
      if (out.local_rank >= out.local_world_size || out.local_world_size > out.world_size) {
        return Status::InvalidArgument(fmt::format(
            "{}={} and {}={} do not fit a world of {}={}: the local rank must be below the "
            "local size, which is at most the world size", used->local_rank, out.local_rank,
            used->local_size, out.local_world_size, used->size, out.world_size));
      }
    }
    if (used->job != nullptr && env(used->job) != nullptr) out.job_id = env(used->job);
    if (std::string_view(used->source) == "slurm" && env("SLURM_STEP_ID") != nullptr) {
      out.job_id += std::string(".") + env("SLURM_STEP_ID");
    }
  }
  if (const char* v = env("GENIE_RENDEZVOUS")) {
    out.rendezvous = v;
  } else if (env("MASTER_ADDR") != nullptr || env("MASTER_PORT") != nullptr) {
    const char* addr = env("MASTER_ADDR");
    const char* port = env("MASTER_PORT");
    if (addr == nullptr || *addr == '\0' || port == nullptr) {
      return Status::InvalidArgument(fmt::format(
          "MASTER_ADDR='{}' and MASTER_PORT='{}': set both (the host of rank 0 and a free port "
          "from 1 to 65535)", addr ? addr : "(unset)", port ? port : "(unset)"));
    }
    // Port 0 would make rank 0 listen on a random port no other rank can know.
    GENIE_ASSIGN_OR_RETURN(int p, ParseInt("MASTER_PORT", port, 1, 65535));
    out.rendezvous = fmt::format("tcp:{}:{}", addr, p);
  } else if (out.world_size > 1) {
    out.rendezvous = LauncherStore(env, out.source);
  }
  GENIE_RETURN_IF_ERROR(CheckRendezvousSpec(out.rendezvous));

  if (const char* v = env("GENIE_JOB_ID")) out.job_id = v;
  if (out.job_id.empty()) {
    // Same on every rank without coordination: derived from where they meet.
    out.job_id = fmt::format("job-{:016x}", Fnv(out.rendezvous));
    out.job_id_derived = true;
  }
  for (char& c : out.job_id) {
    if (c == ' ' || c == '\t' || c == '\n') c = '_';
  }
  if (out.world_size > 1 && out.rendezvous.empty()) {
    return Status::InvalidArgument(fmt::format(
        "rank {} of {} (from {} variables) but no rendezvous, and the launcher offers no store "
        "genie can use (no PMI_FD or PMI_PORT, no PMIX_NAMESPACE; srun needs --mpi=pmi2 or "
        "--mpi=pmix): set GENIE_RENDEZVOUS=dir:/shared/path or tcp:host:port, or MASTER_ADDR and "
        "MASTER_PORT",
        out.rank, out.world_size, out.source));
  }
  return out;
}

}  // namespace genie::launch
