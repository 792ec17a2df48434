#include "genie/runtime/peer_set.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "genie/runtime/collective_plan.h"

namespace genie::runtime {
namespace {

void Insert(int peer, std::vector<int>* peers) {
  auto it = std::lower_bound(peers->begin(), peers->end(), peer);
  if (it == peers->end() || *it != peer) peers->insert(it, peer);
}

}  // namespace

void AddSchedulePeers(const collective::Schedule& schedule, int self, std::vector<int>* peers) {
  for (const collective::Step& step : schedule.steps) {
    if (collective::HasSend(step.kind) && step.send_peer >= 0 && step.send_peer != self) {
      Insert(step.send_peer, peers);
    }
    if (collective::HasRecv(step.kind) && step.recv_peer >= 0 && step.recv_peer != self) {
      Insert(step.recv_peer, peers);
    }
  }
}

Result<std::vector<int>> PlannedPeers(workload::RankGraph& graph, const ExecutorConfig& config) {
  const int self = graph.rank();
  std::vector<int> peers;
  // A training trace repeats a few collectives many times: plan each distinct one once.
  using Key = std::tuple<CollectiveType, Bytes, int64_t, int, std::vector<bool>>;
  std::set<Key> planned;
  for (NodeId id : graph.ids()) {
    GENIE_ASSIGN_OR_RETURN(Op op, graph.Load(id));
    switch (op.kind) {
      case OpKind::kCollective: {
        if (!planned.insert({op.coll_type, op.comm_size, op.group, op.src, op.involved_dim})
                 .second) {
          break;
        }
        GENIE_ASSIGN_OR_RETURN(CollectivePlan plan,
                               PlanCollective(op, config, graph.metadata_groups(), self));
        AddSchedulePeers(plan.schedule, self, &peers);
        break;
      }
      case OpKind::kSend:
        if (op.dst >= 0 && op.dst != self && op.dst < config.world_size) Insert(op.dst, &peers);
        break;
      case OpKind::kRecv:
        if (op.src >= 0 && op.src != self && op.src < config.world_size) Insert(op.src, &peers);
        break;
      default:
        break;
    }
  }
  return peers;
}

}  // namespace genie::runtime
