#include "genie/net/launcher_kvs.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
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

}  // namespace

Result<std::vector<std::string>> PmiAllGather(Pmi1Client& pmi, int rank, int world_size,
                                              const std::string& value, TimeNs deadline) {
  GENIE_RETURN_IF_ERROR(pmi.Put(Key(rank), value, deadline));
  if (Status st = pmi.Barrier(deadline); !st.ok()) {
    return st.WithContext(fmt::format(
        "waiting for all {} ranks (did every rank start genie, with the same world size?)",
        world_size));
  }
  // N ranks each getting N keys is N² round trips through the launcher (262,144 at 512
  // ranks): rank 0 alone reads the N addresses and puts them back packed into values as long
  // as the store allows (about 15 addresses in 1 KiB); after a second barrier every rank reads
  // those few values.
  if (rank == 0) {
    std::vector<std::string> blocks(1);
    for (int r = 0; r < world_size; ++r) {
      auto v = pmi.Get(Key(r), deadline);
      if (!v.ok() || v->empty() || v->find(',') != std::string::npos) {
        return Status::Unavailable(
            fmt::format("no address from rank {}: {}", r,
                        v.ok() ? "empty or with a comma" : v.status().message()));
      }
      if (!blocks.back().empty() &&
          static_cast<int>(blocks.back().size() + 1 + v->size()) > pmi.max_value_length()) {
        blocks.emplace_back();
      }
      blocks.back() += (blocks.back().empty() ? "" : ",") + *v;
    }
    for (size_t b = 0; b < blocks.size(); ++b) {
      if (Status st = pmi.Put(fmt::format("genie-table-{}", b), blocks[b], deadline); !st.ok()) {
        return st;
      }
    }
    GENIE_RETURN_IF_ERROR(pmi.Put("genie-tables", std::to_string(blocks.size()), deadline));
  }
  if (Status st = pmi.Barrier(deadline); !st.ok()) {
    return st.WithContext("waiting for rank 0 to publish the address table");
  }
  auto count = pmi.Get("genie-tables", deadline);
  if (!count.ok()) return count.status().WithContext("reading rank 0's address table");
  std::vector<std::string> out;
  const int blocks = std::atoi(count->c_str());
  for (int b = 0; b < blocks; ++b) {
    auto v = pmi.Get(fmt::format("genie-table-{}", b), deadline);
    if (!v.ok()) return v.status().WithContext("reading rank 0's address table");
    size_t start = 0;
    while (start <= v->size()) {
      const size_t comma = std::min(v->find(',', start), v->size());
      out.push_back(v->substr(start, comma - start));
      start = comma + 1;
    }
  }
  if (static_cast<int>(out.size()) != world_size) {
    return Status::Corruption(
        fmt::format("rank 0's address table has {} entries for {} ranks", out.size(), world_size));
  }
  return out;
}

namespace {

Result<std::vector<std::string>> PmiExchange(int rank, int world_size, const std::string& value,
                                             TimeNs timeout) {
  Session& s = TheSession();
  std::lock_guard<std::mutex> lock(s.mu);
  const TimeNs deadline = loop::MonotonicNow() + timeout;
  GENIE_RETURN_IF_ERROR(OpenPmi(s, deadline));
  Pmi1Client& pmi = *s.pmi;
  const std::string who =
      fmt::format("rendezvous through the launcher's PMI store (kvs {})", pmi.kvsname());
  if ((pmi.rank() >= 0 && pmi.rank() != rank) || (pmi.size() > 0 && pmi.size() != world_size)) {
    return Status::InvalidArgument(fmt::format(
        "{}: the PMI server says rank {} of {} but the launcher's variables say rank {} of {}", who,
        pmi.rank(), pmi.size(), rank, world_size));
  }
  auto out = PmiAllGather(pmi, rank, world_size, value, deadline);
  if (!out.ok()) return out.status().WithContext(who);
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
  if (!all.ok() && spec == "pmix") {
    return all.status().WithContext("rendezvous through the launcher's PMIx store");
  }
  if (all.ok() && rank == 0) {
    spdlog::info("rank 0: {} addresses exchanged through the launcher's {} store in {}", world_size,
                 spec == "pmi" ? "PMI-1" : "PMIx", FormatDuration(loop::MonotonicNow() - t0));
  }
  return all;
}

}  // namespace genie::net
