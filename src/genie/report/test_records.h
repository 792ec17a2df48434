// Test-only: a small two-rank, two-iteration run's records, with timings shifted by `skew` so
// tests can build "the same workload run twice" with different timings.
#pragma once

#include <vector>

#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"

namespace genie::report::testing {

inline std::vector<record::OpEvent> RunOps(TimeNs skew) {
  std::vector<record::OpEvent> ops;
  for (int iter = 0; iter < 2; ++iter) {
    for (int rank = 0; rank < 2; ++rank) {
      TimeNs base = iter * 100000 + rank * skew;
      record::OpEvent comp;
      comp.rank = rank;
      comp.iteration = iter;
      comp.node = 1;
      comp.name = "fwd";
      comp.kind = OpKind::kCompute;
      comp.start = base;
      comp.end = base + 20000 + skew;
      record::OpEvent coll;
      coll.rank = rank;
      coll.iteration = iter;
      coll.node = 2;
      coll.name = "grad_allreduce";
      coll.kind = OpKind::kCollective;
      coll.coll_type = CollectiveType::kAllReduce;
      coll.size = 1048576;
      coll.group_size = 2;
      coll.algorithm = "ring";
      coll.bytes_sent = 1048576;
      coll.bytes_received = 1048576;
      coll.start = comp.end;
      coll.end = coll.start + 50000 + 3 * skew;
      record::OpEvent recv;
      recv.rank = rank;
      recv.iteration = iter;
      recv.node = 3;
      recv.kind = OpKind::kRecv;
      recv.peer = 1 - rank;
      recv.size = 4096;
      recv.bytes_received = 4096;
      recv.start = coll.start + 10;
      recv.end = coll.start + 60000 + skew;  // ends after the collective
      ops.push_back(comp);
      ops.push_back(coll);
      ops.push_back(recv);
    }
  }
  // A warm-up collective, recorded but not in statistics.
  record::OpEvent warm = ops[1];
  warm.iteration = -1;
  warm.start = -50000;
  warm.end = -1;
  ops.push_back(warm);
  return ops;
}

inline std::vector<record::RankSummary> RunRanks(TimeNs skew) {
  std::vector<record::RankSummary> ranks;
  for (int iter = 0; iter < 2; ++iter) {
    for (int rank = 0; rank < 2; ++rank) {
      TimeNs start = iter * 100000 + rank * skew;
      TimeNs compute = 20000 + skew;
      TimeNs finish = start + compute + 60000 + skew;
      ranks.push_back({rank, iter, start, finish, compute, 60000 + skew, finish - start - compute});
    }
  }
  return ranks;
}

}  // namespace genie::report::testing
