#include "genie/driver/jobs_spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <regex>
#include <set>

#include "genie/common/input_file.h"
#include "genie/trace/workload_files.h"

namespace genie::driver {

namespace {

namespace fs = std::filesystem;

constexpr int kMaxJobs = 64;
constexpr int kMaxRanks = 4096;
constexpr int kMaxParallel = 64;

// How a structured key under `run:` / `bench:` becomes a flag.
enum class KeyArg { kValue, kInput, kOutput, kFlag };
struct KeyRule {
  const char* key;
  const char* flag;
  KeyArg arg;
};

// genie run's flags a jobs file may set by key (tools/genie/cmd_run.cc); anything else goes
// in `args: [...]`.
constexpr KeyRule kRunKeys[] = {
    {"workload", "--workload", KeyArg::kInput},
    {"iterations", "--iterations", KeyArg::kValue},
    {"warmup", "--warmup", KeyArg::kValue},
    {"predict", "--predict", KeyArg::kFlag},
    {"network", "--network", KeyArg::kInput},
    {"network_model", "--network-model", KeyArg::kValue},
    {"goodput", "--goodput", KeyArg::kValue},
    {"message_overhead", "--message-overhead", KeyArg::kValue},
    {"topology", "--topology", KeyArg::kValue},
    {"system", "--system", KeyArg::kInput},
    {"memory", "--memory", KeyArg::kInput},
    {"comm_group", "--comm-group", KeyArg::kInput},
    {"ctrl_deps", "--ctrl-deps", KeyArg::kValue},
    {"default_comm_size", "--default-comm-size", KeyArg::kValue},
    {"channels", "--channels", KeyArg::kValue},
    {"slice", "--slice", KeyArg::kValue},
    {"verify", "--verify", KeyArg::kFlag},
    {"faults", "--faults", KeyArg::kInput},
    {"flag_threshold", "--flag-threshold", KeyArg::kValue},
    {"localize", "--localize", KeyArg::kFlag},
    {"baseline", "--baseline", KeyArg::kInput},
    {"intra_host", "--intra-host", KeyArg::kInput},
    {"report", "--report", KeyArg::kOutput},
    {"csv", "--csv", KeyArg::kOutput},
    {"trace_out", "--trace-out", KeyArg::kOutput},
    {"tcp_congestion", "--tcp-congestion", KeyArg::kValue},
    {"peer_timeout", "--peer-timeout", KeyArg::kValue},
    {"spin_us", "--spin-us", KeyArg::kValue},
    {"transport", "--transport", KeyArg::kValue},
};

// genie bench's (tools/genie/cmd_bench.cc).
constexpr KeyRule kBenchKeys[] = {
    {"collective", "--collective", KeyArg::kValue},
    {"iterations", "--iters", KeyArg::kValue},
    {"minbytes", "--minbytes", KeyArg::kValue},
    {"maxbytes", "--maxbytes", KeyArg::kValue},
    {"stepfactor", "--stepfactor", KeyArg::kValue},
    {"stepbytes", "--stepbytes", KeyArg::kValue},
    {"warmup_iters", "--warmup_iters", KeyArg::kValue},
    {"check", "--check", KeyArg::kValue},
    {"average", "--average", KeyArg::kValue},
    {"datatype", "--datatype", KeyArg::kValue},
    {"root", "--root", KeyArg::kValue},
    {"algorithm", "--algorithm", KeyArg::kValue},
    {"topology", "--topology", KeyArg::kValue},
    {"chunks", "--chunks", KeyArg::kValue},
    {"channels", "--channels", KeyArg::kValue},
    {"slice", "--slice", KeyArg::kValue},
    {"report", "--report", KeyArg::kOutput},
    {"min_busbw", "--min-busbw", KeyArg::kValue},
    {"expect", "--expect", KeyArg::kValue},
    {"expect_fraction", "--expect-fraction", KeyArg::kValue},
    {"tcp_congestion", "--tcp-congestion", KeyArg::kValue},
    {"peer_timeout", "--peer-timeout", KeyArg::kValue},
    {"transport", "--transport", KeyArg::kValue},
};

constexpr const char* kTopKeys[] = {"testbed", "output", "slots_per_host", "stop_all_on_failure",
                                    "jobs"};
constexpr const char* kJobKeys[] = {"name",  "type",     "ranks", "placement", "start",
                                    "iterations", "output", "port",  "run",  "bench", "args",
                                    "pairs", "rate", "bytes", "parallel", "duration", "on", "off"};
constexpr const char* kWorkloadOnly[] = {"ranks", "placement", "iterations", "run", "bench", "args"};
constexpr const char* kTrafficOnly[] = {"pairs", "rate", "bytes", "parallel", "duration", "on",
                                        "off"};

template <typename List>
std::string JoinKeys(const List& list) {
  std::string s;
  for (const auto& k : list) s += (s.empty() ? "" : ", ") + std::string(k);
  return s;
}

template <typename List>
bool HasKey(const List& list, const std::string& key) {
  for (const auto& k : list) {
    if (key == k) return true;
  }
  return false;
}

std::string YamlScalar(const YAML::Node& n) {
  return n.IsDefined() && n.IsScalar() ? n.as<std::string>() : "";
}

// The parser's state: the file, and the job being read, for errors.
class JobsReader {
 public:
  explicit JobsReader(std::string path) : path_(std::move(path)) {
    dir_ = fs::path(path_).parent_path().string();
  }

  Status Bad(const std::string& what) const {
    if (job_.empty()) return Status::InvalidArgument(path_ + ": " + what);
    return Status::InvalidArgument(fmt::format("{}: job '{}': {}", path_, job_, what));
  }
  void SetJob(std::string job) { job_ = std::move(job); }

  template <typename List>
  Status CheckKeys(const YAML::Node& map, const List& known, const std::string& where) const {
    for (const auto& kv : map) {
      const std::string key = YamlScalar(kv.first);
      if (!HasKey(known, key)) {
        return Bad(fmt::format("{}unknown key '{}' (known: {})", where, key, JoinKeys(known)));
      }
    }
    return Status::Ok();
  }

  std::string Input(const std::string& p) const {
    if (p.empty() || fs::path(p).is_absolute()) return p;
    return (fs::path(dir_) / p).lexically_normal().string();
  }

  Result<TimeNs> Duration(const YAML::Node& n, const char* key, bool zero_ok) const {
    auto d = ParseDuration(YamlScalar(n));
    if (!d.ok()) return Bad(std::string(key) + ": " + d.status().message());
    if (*d < 0 || (!zero_ok && *d == 0)) {
      return Bad(fmt::format("{}: '{}' must be {}", key, YamlScalar(n), zero_ok ? ">= 0" : "> 0"));
    }
    return *d;
  }

  Result<int> Int(const YAML::Node& n, const char* key, int lo, int hi) const {
    int v = 0;
    try {
      v = n.as<int>();
    } catch (const YAML::Exception&) {
      return Bad(fmt::format("{}: '{}' is not a whole number", key, YamlScalar(n)));
    }
    if (v < lo || v > hi) return Bad(fmt::format("{}: {} is outside {}..{}", key, v, lo, hi));
    return v;
  }

  Result<bool> Bool(const YAML::Node& n, const char* key) const {
    try {
      return n.as<bool>();
    } catch (const YAML::Exception&) {
      return Bad(fmt::format("{}: '{}' is not true or false", key, YamlScalar(n)));
    }
  }

  // `run:` / `bench:` mapping -> flags.
  template <size_t N>
  Status Structured(const YAML::Node& map, const char* section, const KeyRule (&rules)[N],
                    JobSpec* job) const {
    if (!map.IsMap()) {
      return Bad(fmt::format("{}: expected a mapping of {} options (e.g. {}: value)", section,
                             section, rules[0].key));
    }
    std::vector<std::string> known;
    for (const KeyRule& r : rules) known.push_back(r.key);
    known.push_back("args");
    GENIE_RETURN_IF_ERROR(CheckKeys(map, known, std::string(section) + ": "));
    job->genie_args = {section};
    for (const KeyRule& r : rules) {
      const YAML::Node v = map[r.key];
      if (!v) continue;
      const std::string where = fmt::format("{}: {}", section, r.key);
      if (!v.IsScalar()) return Bad(where + ": expected one value");
      if (r.arg == KeyArg::kFlag) {
        auto on = Bool(v, where.c_str());
        if (!on.ok()) return on.status();
        job->options[r.key] = *on ? "true" : "false";
        if (*on) job->genie_args.push_back(r.flag);
        continue;
      }
      std::string value = YamlScalar(v);
      if (value.empty()) return Bad(where + ": empty value");
      if (r.arg == KeyArg::kInput) value = Input(value);
      if (std::string(r.key) == "iterations") {
        auto n = Int(v, where.c_str(), 1, 1'000'000);
        if (!n.ok()) return n.status();
        if (job->iterations != 0) {
          return Bad("iterations is given twice (beside and inside " + std::string(section) + ":)");
        }
        job->iterations = *n;
        continue;  // appended once below
      }
      job->options[r.key] = value;
      job->genie_args.push_back(r.flag);
      job->genie_args.push_back(value);
    }
    if (const YAML::Node extra = map["args"]) {
      auto list = StringList(extra, (std::string(section) + ": args").c_str());
      if (!list.ok()) return list.status();
      job->genie_args.insert(job->genie_args.end(), list->begin(), list->end());
    }
    return Status::Ok();
  }

  Result<std::vector<std::string>> StringList(const YAML::Node& n, const char* key) const {
    if (!n.IsSequence()) return Bad(fmt::format("{}: expected a list, e.g. [--flag, value]", key));
    std::vector<std::string> out;
    for (const auto& e : n) {
      if (!e.IsScalar()) return Bad(fmt::format("{}: every entry is one word", key));
      out.push_back(e.as<std::string>());
    }
    return out;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string dir_;
  std::string job_;
};

Status ReadTraffic(const JobsReader& rd, const YAML::Node& j, JobSpec* job) {
  TrafficSpec& t = job->traffic;
  const YAML::Node pairs = j["pairs"];
  if (!pairs || !pairs.IsSequence() || pairs.size() == 0) {
    return rd.Bad("pairs: a traffic job needs its host pairs, e.g. pairs: [[h0, h4], [h1, h5]]");
  }
  for (const auto& p : pairs) {
    if (!p.IsSequence() || p.size() != 2 || !p[0].IsScalar() || !p[1].IsScalar()) {
      return rd.Bad("pairs: every pair is [sender host, receiver host], e.g. [h0, h4]");
    }
    t.pair_names.emplace_back(p[0].as<std::string>(), p[1].as<std::string>());
  }
  if (const YAML::Node n = j["rate"]) {
    auto r = ParseBitRate(YamlScalar(n));
    if (!r.ok()) return rd.Bad("rate: " + r.status().message());
    if (*r == 0) return rd.Bad("rate: must be > 0 (leave it out for as fast as TCP goes)");
    t.rate_bps = *r;
  }
  if (const YAML::Node n = j["bytes"]) {
    auto b = ParseBytes(YamlScalar(n));
    if (!b.ok()) return rd.Bad("bytes: " + b.status().message());
    if (*b == 0) return rd.Bad("bytes: must be > 0 (leave it out for no limit)");
    t.bytes = *b;
  }
  if (const YAML::Node n = j["parallel"]) {
    auto p = rd.Int(n, "parallel", 1, kMaxParallel);
    if (!p.ok()) return p.status();
    t.parallel = *p;
  }
  if (const YAML::Node n = j["duration"]) {
    auto d = rd.Duration(n, "duration", /*zero_ok=*/false);
    if (!d.ok()) return d.status();
    t.duration_ns = *d;
  }
  if (static_cast<bool>(j["on"]) != static_cast<bool>(j["off"])) {
    return rd.Bad("on/off: give both (send for `on`, pause for `off`, repeat) or neither");
  }
  if (j["on"]) {
    auto on = rd.Duration(j["on"], "on", /*zero_ok=*/false);
    if (!on.ok()) return on.status();
    auto off = rd.Duration(j["off"], "off", /*zero_ok=*/false);
    if (!off.ok()) return off.status();
    t.on_ns = *on;
    t.off_ns = *off;
  }
  job->subcommand = "traffic";
  job->ranks = static_cast<int>(2 * t.pair_names.size());
  job->genie_args = {"traffic", "--parallel", std::to_string(t.parallel)};
  if (t.rate_bps) job->genie_args.insert(job->genie_args.end(), {"--rate", FormatBitRate(t.rate_bps)});
  if (t.bytes) job->genie_args.insert(job->genie_args.end(), {"--bytes", std::to_string(t.bytes)});
  auto ns = [](TimeNs v) { return std::to_string(v) + "ns"; };
  if (t.duration_ns) job->genie_args.insert(job->genie_args.end(), {"--duration", ns(t.duration_ns)});
  if (t.on_ns) {
    job->genie_args.insert(job->genie_args.end(), {"--on", ns(t.on_ns), "--off", ns(t.off_ns)});
  }
  return Status::Ok();
}

Status ReadWorkload(const JobsReader& rd, const YAML::Node& j, JobSpec* job) {
  const int kinds = (j["run"] ? 1 : 0) + (j["bench"] ? 1 : 0) + (j["args"] ? 1 : 0);
  if (kinds != 1) {
    return rd.Bad(
        "give exactly one of run: {workload: ...}, bench: {collective: ...} or args: "
        "[subcommand, flags...] (or type: traffic)");
  }
  if (const YAML::Node n = j["iterations"]) {
    auto it = rd.Int(n, "iterations", 1, 1'000'000);
    if (!it.ok()) return it.status();
    job->iterations = *it;
  }
  if (j["run"]) {
    GENIE_RETURN_IF_ERROR(rd.Structured(j["run"], "run", kRunKeys, job));
    if (!job->options.count("workload")) {
      return rd.Bad("run: needs workload: (a trace folder or <prefix> of <prefix>.<rank>.et)");
    }
    job->workload = job->options["workload"];
    if (job->iterations) {
      job->genie_args.insert(job->genie_args.end(), {"--iterations", std::to_string(job->iterations)});
    }
  } else if (j["bench"]) {
    GENIE_RETURN_IF_ERROR(rd.Structured(j["bench"], "bench", kBenchKeys, job));
    if (job->iterations) {
      job->genie_args.insert(job->genie_args.end(), {"--iters", std::to_string(job->iterations)});
    }
  } else {
    auto list = rd.StringList(j["args"], "args");
    if (!list.ok()) return list.status();
    if (list->empty() || (*list)[0].empty() || (*list)[0][0] == '-') {
      return rd.Bad("args: starts with the genie subcommand, e.g. [netcheck, --bytes, 1M]");
    }
    if (job->iterations) {
      return rd.Bad("iterations: an args: job passes its own flags (put --iterations in args)");
    }
    job->genie_args = *list;
  }
  job->subcommand = job->genie_args[0];

  const YAML::Node ranks = j["ranks"];
  if (!ranks && job->workload.empty()) {
    return rd.Bad("ranks: how many ranks the job runs (e.g. ranks: 4)");
  }
  if (ranks) {  // else the workload's (LoadJobsSpec)
    auto r = rd.Int(ranks, "ranks", 1, kMaxRanks);
    if (!r.ok()) return r.status();
    job->ranks = *r;
  }

  if (const YAML::Node p = j["placement"]) {
    if (p.IsSequence()) {
      job->placement.kind = PlacementKind::kListed;
      for (const auto& h : p) {
        if (!h.IsScalar()) return rd.Bad("placement: a host list names hosts, e.g. [h0, h2]");
        job->placement.hosts.push_back(h.as<std::string>());
      }
      if (job->placement.hosts.empty()) return rd.Bad("placement: the host list is empty");
    } else if (YamlScalar(p) == "packed") {
      job->placement.kind = PlacementKind::kPacked;
    } else if (YamlScalar(p) == "interleaved") {
      job->placement.kind = PlacementKind::kInterleaved;
    } else {
      return rd.Bad("placement: '" + YamlScalar(p) +
                    "' is not packed, interleaved or a host list like [h0, h2]");
    }
  }
  return Status::Ok();
}

Status ReadJob(JobsReader& rd, const YAML::Node& j, size_t index, JobSpec* job) {
  if (!j.IsMap()) return rd.Bad(fmt::format("jobs[{}]: expected a mapping (name: ..., ranks: ...)", index));
  job->name = YamlScalar(j["name"]);
  static const std::regex kName(R"([A-Za-z0-9_][A-Za-z0-9_.-]{0,63})");
  if (!std::regex_match(job->name, kName)) {
    return rd.Bad(fmt::format(
        "jobs[{}]: name: '{}' must be 1-64 of letters, digits, _ . - (it names the job's folder)",
        index, job->name));
  }
  rd.SetJob(job->name);
  GENIE_RETURN_IF_ERROR(rd.CheckKeys(j, kJobKeys, ""));
  const std::string type = j["type"] ? YamlScalar(j["type"]) : "workload";
  if (type != "workload" && type != "traffic") {
    return rd.Bad("type: '" + type + "' is not workload or traffic");
  }
  job->type = type == "traffic" ? JobType::kTraffic : JobType::kWorkload;
  auto refuse = [&](const auto& keys, const char* kind) -> Status {
    for (const char* k : keys) {
      if (j[k]) return rd.Bad(fmt::format("{}: only for {} jobs", k, kind));
    }
    return Status::Ok();
  };
  GENIE_RETURN_IF_ERROR(job->type == JobType::kTraffic ? refuse(kWorkloadOnly, "workload")
                                                      : refuse(kTrafficOnly, "traffic"));
  if (const YAML::Node n = j["start"]) {
    auto s = rd.Duration(n, "start", /*zero_ok=*/true);
    if (!s.ok()) return s.status();
    job->start_ns = *s;
  }
  if (const YAML::Node n = j["output"]) {
    job->output = YamlScalar(n);
    if (job->output.empty()) return rd.Bad("output: empty folder name");
    job->output_given = true;
  }
  if (const YAML::Node n = j["port"]) {
    auto p = rd.Int(n, "port", 1024, 65535);
    if (!p.ok()) return p.status();
    job->port = *p;
  }
  return job->type == JobType::kTraffic ? ReadTraffic(rd, j, job) : ReadWorkload(rd, j, job);
}

int HostIndex(const std::vector<std::string>& hosts, const std::string& name) {
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (hosts[i] == name) return static_cast<int>(i);
  }
  // "3" names h3, as the testbed's own commands accept.
  if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit) && name.size() < 6) {
    const int i = std::stoi(name);
    if (i < static_cast<int>(hosts.size())) return i;
  }
  return -1;
}

}  // namespace

const JobSpec* JobsSpec::Find(const std::string& name) const {
  for (const JobSpec& j : jobs) {
    if (j.name == name) return &j;
  }
  return nullptr;
}

bool JobsSpec::HasWorkload() const {
  return std::any_of(jobs.begin(), jobs.end(),
                     [](const JobSpec& j) { return j.type == JobType::kWorkload; });
}

Result<JobsSpec> ParseJobsSpec(const std::string& text, const std::string& path) {
  JobsReader rd(path);
  JobsSpec spec;
  spec.path = path;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return rd.Bad(std::string("not YAML: ") + e.what());
  }
  if (!root.IsMap()) return rd.Bad("expected a mapping with jobs: [...] (docs/jobs.md)");
  GENIE_RETURN_IF_ERROR(rd.CheckKeys(root, kTopKeys, ""));
  try {
    spec.testbed = YamlScalar(root["testbed"]);
    const std::string stem = fs::path(path).stem().string();
    spec.output = root["output"] ? YamlScalar(root["output"]) : stem + "-out";
    if (spec.output.empty()) return rd.Bad("output: empty folder name");
    if (const YAML::Node n = root["slots_per_host"]) {
      auto s = rd.Int(n, "slots_per_host", 1, kMaxRanks);
      if (!s.ok()) return s.status();
      spec.slots_per_host = *s;
    }
    if (const YAML::Node n = root["stop_all_on_failure"]) {
      auto b = rd.Bool(n, "stop_all_on_failure");
      if (!b.ok()) return b.status();
      spec.stop_all_on_failure = *b;
    }
    const YAML::Node jobs = root["jobs"];
    if (!jobs || !jobs.IsSequence() || jobs.size() == 0) {
      return rd.Bad("jobs: a list of jobs, each {name: ..., ranks: ..., run: {...}} (docs/jobs.md)");
    }
    if (jobs.size() > static_cast<size_t>(kMaxJobs)) {
      return rd.Bad(fmt::format("jobs: {} jobs; at most {}", jobs.size(), kMaxJobs));
    }
    std::map<std::string, std::string> port_owner;
    for (size_t i = 0; i < jobs.size(); ++i) {
      JobSpec job;
      rd.SetJob("");
      GENIE_RETURN_IF_ERROR(ReadJob(rd, jobs[i], i, &job));
      rd.SetJob("");
      if (spec.Find(job.name) != nullptr) {
        return rd.Bad(fmt::format("jobs: two jobs are named '{}' (names must differ: each names "
                                  "its folder and its ranks' job)",
                                  job.name));
      }
      if (job.port != 0) {
        auto [it, fresh] = port_owner.emplace(std::to_string(job.port), job.name);
        if (!fresh) {
          return rd.Bad(fmt::format("jobs '{}' and '{}' both ask for port {}: give each its own "
                                    "(or leave port out and the launcher picks)",
                                    it->second, job.name, job.port));
        }
      }
      spec.jobs.push_back(std::move(job));
    }
  } catch (const YAML::Exception& e) {
    return rd.Bad(std::string("a value has the wrong type: ") + e.what());
  }
  GENIE_RETURN_IF_ERROR(SetJobsOutput(spec.output, &spec));
  return spec;
}

Result<JobsSpec> LoadJobsSpec(const std::string& path) {
  auto text = ReadInputFile(path, "jobs file");
  if (!text.ok()) return text.status();
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  auto spec = ParseJobsSpec(*text, ec ? path : abs.lexically_normal().string());
  if (!spec.ok()) return spec;
  // A run job's ranks are its workload's: one process per trace file.
  for (JobSpec& job : spec->jobs) {
    if (job.workload.empty()) continue;
    auto group = job.options.find("comm_group");
    auto files = trace::FindWorkload(job.workload, group == job.options.end() ? "" : group->second);
    if (!files.ok()) {
      return Status::InvalidArgument(fmt::format("{}: job '{}': run: workload: {}", spec->path,
                                                 job.name, files.status().message()));
    }
    if (job.ranks == 0) {
      job.ranks = files->world_size();
    } else if (job.ranks != files->world_size()) {
      return Status::InvalidArgument(fmt::format(
          "{}: job '{}': ranks: {}, but workload {} has {} (one rank per trace file): set "
          "ranks: {} or leave it out",
          spec->path, job.name, job.ranks, job.workload, files->world_size(),
          files->world_size()));
    }
  }
  return spec;
}

Status SetJobsOutput(const std::string& base, JobsSpec* spec) {
  spec->output = base;
  std::vector<std::pair<fs::path, std::string>> seen;  // normalised folder, job
  for (JobSpec& job : spec->jobs) {
    if (!job.output_given) job.output = (fs::path(base) / job.name).string();
    std::error_code ec;
    fs::path norm = fs::absolute(job.output, ec).lexically_normal();
    if (ec) norm = fs::path(job.output).lexically_normal();
    if (!norm.has_filename()) norm = norm.parent_path();
    for (const auto& [other, name] : seen) {
      auto inside = [](const fs::path& a, const fs::path& b) {  // a within b (or equal)
        auto [ai, bi] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
        return bi == b.end();
      };
      if (inside(norm, other) || inside(other, norm)) {
        return Status::InvalidArgument(fmt::format(
            "{}: jobs '{}' and '{}' would write into the same folder ({} and {}): give each "
            "its own output",
            spec->path, name, job.name, other.string(), norm.string()));
      }
    }
    seen.emplace_back(norm, job.name);
  }
  return Status::Ok();
}

void PlaceSingleJob(int ranks, int hosts, int nics_per_host, std::vector<int>* rank_host,
                    std::vector<int>* rank_nic) {
  rank_host->clear();
  rank_nic->clear();
  for (int r = 0; r < ranks; ++r) {
    rank_host->push_back(r % hosts);
    rank_nic->push_back((r / hosts) % std::max(1, nics_per_host));
  }
}

Status PlaceJobs(const std::vector<std::string>& hosts, int nics_per_host, JobsSpec* spec) {
  const int h = static_cast<int>(hosts.size());
  if (h == 0) return Status::InvalidArgument(spec->path + ": the testbed has no hosts");
  spec->hosts = hosts;
  const int nics = std::max(1, nics_per_host);
  int total = 0;
  for (const JobSpec& j : spec->jobs) {
    if (j.type == JobType::kWorkload) total += j.ranks;
  }
  const int slots = spec->slots_per_host > 0 ? spec->slots_per_host : std::max(1, (total + h - 1) / h);
  std::vector<int> used(static_cast<size_t>(h), 0);
  auto bad = [&](const JobSpec& j, const std::string& what) {
    return Status::InvalidArgument(fmt::format("{}: job '{}': {}", spec->path, j.name, what));
  };
  for (JobSpec& j : spec->jobs) {
    if (j.ranks < 1) return bad(j, "ranks: unknown (LoadJobsSpec reads them from the workload)");
    j.rank_host.clear();
    j.rank_nic.clear();
    if (j.type == JobType::kTraffic) {
      j.traffic.pairs.clear();
      for (const auto& [from, to] : j.traffic.pair_names) {
        const int a = HostIndex(hosts, from), b = HostIndex(hosts, to);
        if (a < 0 || b < 0) {
          return bad(j, fmt::format("pairs: [{}, {}]: the testbed has no host '{}' (it has h0 .. "
                                    "h{})",
                                    from, to, a < 0 ? from : to, h - 1));
        }
        j.traffic.pairs.emplace_back(a, b);
        j.rank_host.insert(j.rank_host.end(), {a, b});
        j.rank_nic.insert(j.rank_nic.end(), {0, 0});
      }
      continue;
    }
    auto take = [&](int host) {
      const size_t u = static_cast<size_t>(host);
      j.rank_host.push_back(host);
      j.rank_nic.push_back(used[u] % nics);
      ++used[u];
    };
    if (j.placement.kind == PlacementKind::kListed) {
      std::vector<int> list;
      for (const std::string& name : j.placement.hosts) {
        const int i = HostIndex(hosts, name);
        if (i < 0) {
          return bad(j, fmt::format("placement: the testbed has no host '{}' (it has h0 .. h{})",
                                    name, h - 1));
        }
        list.push_back(i);
      }
      for (int r = 0; r < j.ranks; ++r) take(list[static_cast<size_t>(r) % list.size()]);
      continue;
    }
    int free = 0;
    for (int u : used) free += std::max(0, slots - u);
    if (free < j.ranks) {
      return bad(j, fmt::format(
          "placement: {} ranks need more hosts than the testbed has: {} hosts x slots_per_host "
          "{} leave {} free slot(s) after the jobs before it (use fewer ranks, a bigger "
          "testbed, or a larger slots_per_host)",
          j.ranks, h, slots, free));
    }
    int next = 0;  // interleaved: the round-robin position
    for (int r = 0; r < j.ranks; ++r) {
      int host = 0;
      if (j.placement.kind == PlacementKind::kPacked) {
        while (used[static_cast<size_t>(host)] >= slots) ++host;
      } else {
        while (used[static_cast<size_t>(next % h)] >= slots) ++next;
        host = next % h;
        ++next;
      }
      take(host);
    }
  }
  spec->slots_per_host = slots;
  return Status::Ok();
}

std::vector<std::string> JobCommand(const JobSpec& job) {
  std::vector<std::string> cmd = job.genie_args;
  auto has = [&](std::initializer_list<const char*> flags) {
    for (const std::string& a : cmd) {
      for (const char* f : flags) {
        if (a == f || a.rfind(std::string(f) + "=", 0) == 0) return true;
      }
    }
    return false;
  };
  const fs::path dir(job.output);
  if (job.subcommand == "run" && !has({"--output", "-o"})) {
    cmd.insert(cmd.end(), {"--output", job.output});
  } else if (job.subcommand == "bench" && !has({"--json"})) {
    cmd.insert(cmd.end(), {"--json", (dir / "bench.json").string()});
  } else if (job.subcommand == "traffic" && !has({"--output"})) {
    cmd.insert(cmd.end(), {"--output", job.output});
  }
  // Relative output files of the structured keys (report: page.html) land in the job's folder.
  for (const auto& [key, flag] : {std::pair{"report", "--report"}, std::pair{"csv", "--csv"},
                                  std::pair{"trace_out", "--trace-out"}}) {
    auto it = job.options.find(key);
    if (it == job.options.end() || fs::path(it->second).is_absolute()) continue;
    for (size_t i = 1; i + 1 < cmd.size(); ++i) {
      if (cmd[i] == flag && cmd[i + 1] == it->second) {
        cmd[i + 1] = (dir / it->second).string();
        break;
      }
    }
  }
  return cmd;
}

std::string JobResultsPath(const JobSpec& job) {
  const fs::path dir(job.output);
  if (job.subcommand == "run") return (dir / "results.json").string();
  if (job.subcommand == "bench") return (dir / "bench.json").string();
  if (job.subcommand == "traffic") return (dir / "traffic.json").string();
  return job.output;
}

}  // namespace genie::driver
