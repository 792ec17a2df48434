#include "genie/net/pmix_client.h"

#include <fmt/format.h>

#ifdef GENIE_HAVE_PMIX
#include <pmix.h>
#endif

namespace genie::net {

#ifndef GENIE_HAVE_PMIX

bool HavePmix() { return false; }

Result<std::vector<std::string>> PmixExchange(const std::string&, int, int, const std::string&,
                                              TimeNs) {
  return Status::Unsupported(
      "genie was built without PMIx, which this launcher (Open MPI's mpirun, srun --mpi=pmix) "
      "offers: install libpmix-dev (scripts/install-deps.sh) and rebuild, or give --rendezvous "
      "tcp:HOST:PORT (or MASTER_ADDR and MASTER_PORT)");
}

#else

namespace {

std::string Why(const char* call, pmix_status_t rc) {
  return fmt::format("{} failed: {}", call, PMIx_Error_string(rc));
}

}  // namespace

bool HavePmix() { return true; }

Result<std::vector<std::string>> PmixExchange(const std::string& key, int rank, int world_size,
                                              const std::string& value, TimeNs timeout) {
  pmix_proc_t me;
  pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
  if (rc != PMIX_SUCCESS) {
    return Status::Unavailable(
        fmt::format("{}: is this process started by a PMIx launcher (PMIX_NAMESPACE, "
                    "PMIX_SERVER_URI* set)?",
                    Why("PMIx_Init", rc)));
  }
  // Finalized on every path: a launcher reports a process that inits and exits without it.
  struct Finalize {
    ~Finalize() { PMIx_Finalize(nullptr, 0); }
  } finalize;
  if (static_cast<int>(me.rank) != rank) {
    return Status::InvalidArgument(fmt::format(
        "the launcher's variables say rank {} but its PMIx server says rank {} of namespace {}",
        rank, me.rank, me.nspace));
  }
  {
    pmix_proc_t wildcard;
    PMIX_PROC_LOAD(&wildcard, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t* size = nullptr;
    if (PMIx_Get(&wildcard, PMIX_JOB_SIZE, nullptr, 0, &size) == PMIX_SUCCESS && size != nullptr) {
      const int n = size->type == PMIX_UINT32 ? static_cast<int>(size->data.uint32) : -1;
      PMIX_VALUE_RELEASE(size);
      if (n >= 0 && n != world_size) {
        return Status::InvalidArgument(fmt::format(
            "the launcher's variables say {} ranks but its PMIx server says {}", world_size, n));
      }
    }
  }
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = PMIX_STRING;
  v.data.string = const_cast<char*>(value.c_str());
  rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &v);
  if (rc == PMIX_SUCCESS) rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) {
    return Status::Unavailable(Why("PMIx_Put/Commit", rc));
  }
  pmix_info_t info[2];
  bool collect = true;
  int seconds = static_cast<int>(std::max<TimeNs>(1, timeout / kNsPerSec));
  PMIX_INFO_CONSTRUCT(&info[0]);
  PMIX_INFO_CONSTRUCT(&info[1]);
  PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
  rc = PMIx_Fence(nullptr, 0, info, 2);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (rc != PMIX_SUCCESS) {
    return Status::Timeout(fmt::format("{} (after {}): did every rank of namespace {} start genie?",
                                       Why("PMIx_Fence", rc), FormatDuration(timeout), me.nspace));
  }
  std::vector<std::string> out(static_cast<size_t>(world_size));
  for (int r = 0; r < world_size; ++r) {
    pmix_proc_t peer;
    PMIX_PROC_LOAD(&peer, me.nspace, static_cast<pmix_rank_t>(r));
    pmix_value_t* got = nullptr;
    rc = PMIx_Get(&peer, key.c_str(), nullptr, 0, &got);
    if (rc != PMIX_SUCCESS || got == nullptr || got->type != PMIX_STRING ||
        got->data.string == nullptr) {
      if (got != nullptr) PMIX_VALUE_RELEASE(got);
      return Status::Unavailable(
          fmt::format("no address from rank {} in the launcher's PMIx store ({})", r,
                      rc == PMIX_SUCCESS ? "not a string" : Why("PMIx_Get", rc)));
    }
    out[static_cast<size_t>(r)] = got->data.string;
    PMIX_VALUE_RELEASE(got);
  }
  return out;
}

#endif

}  // namespace genie::net

#if defined(GENIE_HAVE_PMIX) && defined(__SANITIZE_ADDRESS__)
// LeakSanitizer: libpmix keeps a few strings from PMIx_Init (pmix_rte_init,
// pmix_bfrops_base_value_load) for the process's life and never frees them, even after
// PMIx_Finalize; they are libpmix's, not genie's, and would fail every sanitized rank started
// under mpirun or srun --mpi=pmix at exit.
extern "C" const char* __lsan_default_suppressions() { return "leak:libpmix.so\n"; }
#endif
