// genie simulate --jobs: every job of a jobs file on one modelled network, each job's step
// predicted together with its neighbours and alone (driver/jobs_prediction.h). Prints one row
// per job and, with --output, writes results.json. Main thread only.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "genie/driver/jobs_prediction.h"
#include "genie/driver/simulate.h"
#include "genie/record/output_guard.h"
#include "genie/report/results_json.h"

namespace genie::driver {
namespace {

// "h0-h3", "h0,h2,h4" or "h0-h3,h6": the hosts a job's ranks are on, in host order.
std::string HostRanges(const std::vector<int>& rank_host) {
  std::vector<int> hosts = rank_host;
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  std::string out;
  for (size_t i = 0; i < hosts.size();) {
    size_t j = i;
    while (j + 1 < hosts.size() && hosts[j + 1] == hosts[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + fmt::format("h{}", hosts[i]);
    if (j > i) out += fmt::format("-h{}", hosts[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

int RunSimulateJobs(const SimulateOptions& f) {
  auto fail = [](const Status& st, int code) {
    std::cerr << "genie simulate: --jobs: " << st.message() << "\n";
    return code;
  };
  const std::string model_name = f.model_given ? f.model : "flow";
  const auto kind = sim::ParseNetworkModelKind(model_name);
  if (!kind) return fail(Status::InvalidArgument("unknown --network-model " + model_name), 2);
  auto spec = LoadJobsSpec(f.jobs);
  if (!spec.ok()) return fail(spec.status(), 2);
  auto hosts = JobsHostsNetwork(*spec, f.setup.network_path);
  if (!hosts.ok()) return fail(hosts.status(), 2);
  if (Status placed = PlaceOnHosts(*hosts, &*spec); !placed.ok()) return fail(placed, 2);
  auto model = ModelJobs(*spec);
  if (!model.ok()) return fail(model.status(), 2);
  for (const auto& s : model->skipped) std::cerr << "genie simulate: --jobs: " << s << "\n";
  auto predicted = PredictJobs(*model, *hosts, *kind);
  if (!predicted.ok()) return fail(predicted.status(), 1);

  std::cout << fmt::format("# {} jobs of {} on {} ({} model); steps are medians over each job's "
                           "iterations\n",
                           model->jobs.size(), spec->path, hosts->path, model_name);
  std::cout << fmt::format("{:<16} {:>5} {:<16} {:>10} {:>12} {:>12} {:>22}\n", "job", "ranks",
                           "hosts", "start", "together", "alone", "interference");
  nlohmann::json rows = nlohmann::json::array();
  size_t p = 0;
  for (const SimJob& job : model->jobs) {
    const std::string start = FormatDuration(job.start_ns);
    if (job.setup == nullptr) {
      std::string pairs;
      for (const TrafficFlow& t : job.traffic) {
        const std::string pair = fmt::format("h{}->h{}", t.src_host, t.dst_host);
        if (pairs.find(pair) == std::string::npos) pairs += (pairs.empty() ? "" : " ") + pair;
      }
      std::cout << fmt::format("{:<16} {:>5} {:<16} {:>10} {:>12} {:>12} {:>22}\n", job.name, "-",
                               pairs, start, "traffic", "", "");
      rows.push_back({{"name", job.name}, {"type", "traffic"}, {"start_ns", job.start_ns},
                      {"connections", job.traffic.size()}});
      continue;
    }
    const JobPrediction& jp = (*predicted)[p++];
    const double alone = static_cast<double>(jp.alone_median);
    std::cout << fmt::format(
        "{:<16} {:>5} {:<16} {:>10} {:>12} {:>12} {:>22}\n", job.name, job.rank_host.size(),
        HostRanges(job.rank_host), start, FormatDuration(jp.together_median),
        FormatDuration(jp.alone_median),
        fmt::format("{} ({:+.1f} %)", FormatDuration(jp.interference_ns()),
                    alone > 0 ? 100.0 * static_cast<double>(jp.interference_ns()) / alone : 0.0));
    rows.push_back({{"name", job.name},
                    {"type", "workload"},
                    {"ranks", job.rank_host.size()},
                    {"rank_host", job.rank_host},
                    {"start_ns", job.start_ns},
                    {"together_step_ns", jp.together_median},
                    {"alone_step_ns", jp.alone_median},
                    {"interference_ns", jp.interference_ns()},
                    {"together_ns", jp.together_ns},
                    {"alone_ns", jp.alone_ns}});
  }
  if (f.output.empty()) return 0;
  nlohmann::json doc = {{"command", "simulate --jobs"},
                        {"jobs_file", spec->path},
                        {"network", hosts->path},
                        {"network_model", model_name},
                        {"not_modelled", model->skipped},
                        {"jobs", rows}};
  Status st = record::MakeOutputFolder(f.output);
  if (st.ok()) st = report::WriteJsonFile(f.output + "/results.json", doc);
  if (!st.ok()) return fail(st, 1);
  std::cerr << "genie simulate: --jobs: results written to " << f.output << "/results.json\n";
  return 0;
}

}  // namespace genie::driver
