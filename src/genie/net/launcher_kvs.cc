#include "genie/net/launcher_kvs.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <mutex>

#include "genie/loop/precise_sleep.h"
#include "genie/net/pmi1_client.h"
#include "genie/net/pmix_client.h"

namespace genie::net {

namespace {

// One key per rank; the store belongs to this job alone.
std::string Key(int rank) { return fmt::format("genie-addr-{}", rank); }

struct Session {
  std::mutex mu;
  std::unique_ptr<Pmi1Client> pmi;
  bool finalized = false;
};

Session& TheSession() {
  static Session* s = new Session;  // never destroyed: may be used until exit
  return *s;
}

// Caller holds s.mu.
Status OpenPmi(Session& s, TimeNs deadline) {
  if (s.pmi) return Status::Ok();
  if (s.finalized) {
    return Status::Internal(
        "this process already exchanged its address through the "
        "launcher's PMI store and finalized it; one exchange per process");
  }
  auto c = Pmi1Client::Connect(deadline);
  if (!c.ok()) return c.status().WithContext("rendezvous 'pmi' (the launcher's PMI-1 store)");
  s.pmi = std::move(*c);
  return Status::Ok();
}

Result<std::vector<std::string>> PmiExchange(int rank, int world_size, const std::string& value,
                                             TimeNs timeout) {
  Session& s = TheSession();
  std::lock_guard<std::mutex> lock(s.mu);
  const TimeNs deadline = loop::MonotonicNow() + timeout;
  GENIE_RETURN_IF_ERROR(OpenPmi(s, deadline));
  Pmi1Client& pmi = *s.pmi;
  const std::string who = fmt::format(
      "rank {}: rendezvous through the launcher's PMI store "
      "(kvs {})",
      rank, pmi.kvsname());
  if ((pmi.rank() >= 0 && pmi.rank() != rank) || (pmi.size() > 0 && pmi.size() != world_size)) {
    return Status::InvalidArgument(fmt::format(
        "{}: the PMI server says rank {} of {} but the launcher's variables say rank {} of {}", who,
        pmi.rank(), pmi.size(), rank, world_size));
  }
  if (Status st = pmi.Put(Key(rank), value, deadline); !st.ok()) return st.WithContext(who);
  if (Status st = pmi.Barrier(deadline); !st.ok()) {
    return st.WithContext(
        fmt::format("{}: waiting for all {} ranks (did every rank start "
                    "genie, with the same world size?)",
                    who, world_size));
  }
  std::vector<std::string> out(static_cast<size_t>(world_size));
  for (int r = 0; r < world_size; ++r) {
    auto v = pmi.Get(Key(r), deadline);
    if (!v.ok() || v->empty()) {
      return Status::Unavailable(fmt::format("{}: no address from rank {}: {}", who, r,
                                             v.ok() ? "empty value" : v.status().message()));
    }
    out[static_cast<size_t>(r)] = *v;
  }
  Status fin = pmi.Finalize(deadline);
  s.pmi.reset();
  s.finalized = true;
  if (!fin.ok()) return fin.WithContext(who);
  return out;
}

}  // namespace

bool IsLauncherKvsSpec(const std::string& spec) { return spec == "pmi" || spec == "pmix"; }

Result<std::string> LauncherJobName(const std::string& spec, TimeNs timeout) {
  if (spec != "pmi") return std::string();
  Session& s = TheSession();
  std::lock_guard<std::mutex> lock(s.mu);
  GENIE_RETURN_IF_ERROR(OpenPmi(s, loop::MonotonicNow() + timeout));
  return s.pmi->kvsname();
}

Result<std::vector<std::string>> ExchangeThroughLauncher(const std::string& spec, int rank,
                                                         int world_size,
                                                         const std::string& my_address,
                                                         TimeNs timeout) {
  if (!IsLauncherKvsSpec(spec)) {
    return Status::InvalidArgument("rendezvous '" + spec +
                                   "' is not a launcher's store (pmi, pmix)");
  }
  const TimeNs t0 = loop::MonotonicNow();
  auto all = spec == "pmi" ? PmiExchange(rank, world_size, my_address, timeout)
                           : PmixExchange("genie-addr", rank, world_size, my_address, timeout);
  if (all.ok() && rank == 0) {
    spdlog::info("rank 0: {} addresses exchanged through the launcher's {} store in {}", world_size,
                 spec == "pmi" ? "PMI-1" : "PMIx", FormatDuration(loop::MonotonicNow() - t0));
  }
  return all;
}

}  // namespace genie::net
