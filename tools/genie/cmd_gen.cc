// `genie gen`: write Chakra workloads genie and other tools can run.
//   genie gen collective --type all_reduce --size 1MiB --ranks 8 --output DIR/all_reduce
//   genie gen compute-chain --count 1000 --duration 1ms --ranks 1 --output DIR/chain
//   genie gen remote-memory --count 4 --size 1KiB --ranks 4 [--store] --output DIR/mem
//   genie gen replicate WORKLOAD --copies 128 --output DIR/workload
// Files are <output>.<rank>.et (gzip-compressed with --gzip, same names).
#include <iostream>

#include "genie/common/units.h"
#include "genie/workload/generator.h"
#include "genie/workload/op.h"
#include "genie/workload/replicate.h"
#include "tools/genie/command.h"

GENIE_COMMAND(gen,
              "Write Chakra workloads: one collective, a chain of compute nodes, or remote-memory "
              "accesses") {
  struct Args {
    std::string type = "all_reduce", size = "1MiB", duration = "1ms", output;
    int ranks = 8;
    int chain_ranks = 1;
    uint64_t count = 1000;
    std::string num_ops, tensor_size;
    bool gzip = false;
    int which = 0;  // 1 = collective, 2 = compute-chain, 3 = remote-memory, 4 = replicate
    int mem_ranks = 4;
    uint64_t mem_count = 4;
    std::string mem_size = "1MiB";
    bool store = false;
    genie::workload::ReplicateOptions replicate;
  };
  auto args = std::make_shared<Args>();
  app.require_subcommand(1);
  CLI::App* coll = app.add_subcommand("collective", "One collective per rank");
  coll->add_option("--type", args->type,
                   "all_reduce | all_gather | reduce_scatter | all_to_all | broadcast | reduce | "
                   "gather | scatter | reduce_scatter_block | barrier")
      ->capture_default_str();
  coll->add_option("--size", args->size, "comm_size (e.g. 1MiB, 65536)")->capture_default_str();
  coll->add_option("--ranks,-n", args->ranks, "Number of ranks")->capture_default_str();
  coll->add_option("--output,-o", args->output, "Output prefix: writes <prefix>.<rank>.et")
      ->required();
  coll->add_flag("--gzip", args->gzip, "gzip-compress each file");
  coll->callback([args] { args->which = 1; });

  CLI::App* chain = app.add_subcommand("compute-chain", "K dependent compute nodes per rank");
  chain->add_option("--count,-k", args->count, "Nodes per rank")->capture_default_str();
  chain->add_option("--duration", args->duration, "Duration of each node (whole us)")
      ->capture_default_str();
  chain->add_option("--ranks,-n", args->chain_ranks, "Number of ranks")->capture_default_str();
  chain->add_option("--num-ops", args->num_ops, "num_ops attribute per node (roofline)");
  chain->add_option("--tensor-size", args->tensor_size, "tensor_size attribute per node (bytes)");
  chain->add_option("--output,-o", args->output, "Output prefix: writes <prefix>.<rank>.et")
      ->required();
  chain->add_flag("--gzip", args->gzip, "gzip-compress each file");
  chain->callback([args] { args->which = 2; });

  CLI::App* mem = app.add_subcommand(
      "remote-memory", "K independent MEM_LOAD (or MEM_STORE) nodes per rank, all ready at once");
  mem->add_option("--count,-k", args->mem_count, "Accesses per rank")->capture_default_str();
  mem->add_option("--size", args->mem_size, "tensor_size of each access (e.g. 1KiB)")
      ->capture_default_str();
  mem->add_option("--ranks,-n", args->mem_ranks, "Number of ranks")->capture_default_str();
  mem->add_flag("--store", args->store, "MEM_STORE nodes instead of MEM_LOAD");
  mem->add_option("--output,-o", args->output, "Output prefix: writes <prefix>.<rank>.et")
      ->required();
  mem->add_flag("--gzip", args->gzip, "gzip-compress each file");
  mem->callback([args] { args->which = 3; });

  CLI::App* rep = app.add_subcommand(
      "replicate", "K independent copies of a workload as one (ranks k*N+r, comm groups renumbered)");
  rep->add_option("workload", args->replicate.input, "Workload folder or <prefix>")->required();
  rep->add_option("--copies,-k", args->replicate.copies, "Number of copies")->required();
  rep->add_option("--comm-group", args->replicate.comm_group,
                  "Comm-group JSON (default: workload.json / comm_group.json beside the traces)");
  rep->add_option("--output,-o", args->replicate.output,
                  "Output prefix: writes <prefix>.<rank>.et and workload.json beside them")
      ->required();
  rep->add_flag("--gzip", args->replicate.gzip, "gzip-compress each file");
  rep->callback([args] { args->which = 4; });

  return [args]() -> int {
    genie::Result<int> written = genie::Status::InvalidArgument(
        "choose collective, compute-chain, remote-memory or replicate");
    if (args->which == 4) {
      written = genie::workload::Replicate(args->replicate);
      args->output = args->replicate.output;
    } else if (args->which == 1) {
      genie::workload::GenCollectiveOptions o;
      auto type = genie::ParseCollectiveType(args->type);
      if (!type) {
        std::cerr << "genie gen collective: unknown --type '" << args->type
                  << "' (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, "
                     "gather, scatter, reduce_scatter_block, barrier)\n";
        return 2;
      }
      auto size = genie::ParseBytes(args->size);
      if (!size.ok()) {
        std::cerr << "genie gen collective: --size: " << size.status().message() << "\n";
        return 2;
      }
      o.type = *type;
      o.size = *size;
      o.ranks = args->ranks;
      o.output = args->output;
      o.gzip = args->gzip;
      written = genie::workload::GenerateCollective(o);
    } else if (args->which == 2) {
      genie::workload::GenComputeChainOptions o;
      auto duration = genie::ParseDuration(args->duration);
      if (!duration.ok()) {
        std::cerr << "genie gen compute-chain: --duration: " << duration.status().message() << "\n";
        return 2;
      }
      o.duration = *duration;
      o.count = args->count;
      o.ranks = args->chain_ranks;
      o.output = args->output;
      o.gzip = args->gzip;
      for (auto [text, field] : {std::pair{&args->num_ops, &o.num_ops},
                                 std::pair{&args->tensor_size, &o.tensor_size}}) {
        if (text->empty()) continue;
        auto v = genie::ParseBytes(*text);
        if (!v.ok()) {
          std::cerr << "genie gen compute-chain: " << v.status().message() << "\n";
          return 2;
        }
        *field = *v;
      }
      written = genie::workload::GenerateComputeChain(o);
    } else if (args->which == 3) {
      genie::workload::GenRemoteMemoryOptions o;
      auto size = genie::ParseBytes(args->mem_size);
      if (!size.ok()) {
        std::cerr << "genie gen remote-memory: --size: " << size.status().message() << "\n";
        return 2;
      }
      o.size = *size;
      o.count = args->mem_count;
      o.store = args->store;
      o.ranks = args->mem_ranks;
      o.output = args->output;
      o.gzip = args->gzip;
      written = genie::workload::GenerateRemoteMemory(o);
    }
    if (!written.ok()) {
      std::cerr << "genie gen: " << written.status().message() << "\n";
      return 1;
    }
    std::cout << "wrote " << *written << " file(s) " << args->output << ".{0.." << *written - 1
              << "}.et\n";
    return 0;
  };
}
