// genie results show | strip | merge: read, compare and combine genie's results files (results
// JSON, per-rank JSON-lines streams, Chrome traces). See docs/results.md.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/report/astra_sim_lines.h"
#include "genie/report/atomic_file.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/completeness.h"
#include "genie/report/localization.h"
#include "genie/report/results_file.h"
#include "genie/report/results_json.h"
#include "genie/report/statistics.h"
#include "genie/report/output_paths.h"
#include "genie/report/prediction.h"
#include "genie/report/strip.h"
#include "genie/report/summary.h"
#include "tools/genie/command.h"

namespace {

namespace fs = std::filesystem;

struct ResultsArgs {
  std::vector<std::string> show_files;
  bool astra_sim = false;
  std::vector<std::string> strip_files;
  bool to_stdout = false;
  bool in_place = false;
  std::string strip_dir;
  std::string merge_out;
  std::vector<std::string> merge_files;
  std::string trace_out;
  std::vector<std::string> clock_offsets;
};

// Exit codes (docs/results.md): 2 for bad input — a file that cannot be read or is not a valid
// genie results file, an output that would overwrite an input — and 1 when an output cannot be
// written (disk full, no permission).
int Fail(const genie::Status& s) {
  fmt::print(stderr, "genie results: {}\n", s.message());
  return s.code() == genie::Status::Code::kIoError ? 1 : 2;
}

// An input that cannot be read is bad input, whatever the reason.
int FailInput(const genie::Status& s) {
  fmt::print(stderr, "genie results: {}\n", s.message());
  return 2;
}

// Says on stdout (beside the figures) and on stderr (so that it shows also when stdout goes to
// a file) that the records cover part of the run only.
void ReportCompleteness(const genie::report::Completeness& c) {
  if (c.complete()) return;
  std::cout << genie::report::DescribeCompleteness(c);
  std::string what;
  if (!c.missing_ranks.empty()) {
    what += "ranks " + genie::report::FormatRanges(c.missing_ranks) + " have no records";
  }
  if (!c.unfinished.empty()) {
    what += std::string(what.empty() ? "" : ", ") + std::to_string(c.unfinished.size()) +
            " rank(s) did not finish every iteration";
  }
  if (c.truncated) what += std::string(what.empty() ? "" : ", ") + "a stream was cut";
  fmt::print(stderr, "genie results: warning: incomplete run ({})\n", what);
}

// run.json -> run.stripped.json, rank0.jsonl -> rank0.stripped.jsonl (beside it, or in dir).
std::string StrippedPath(const std::string& path, const std::string& dir) {
  fs::path p(path);
  fs::path name = p.stem().string() + ".stripped" + p.extension().string();
  return ((dir.empty() ? p.parent_path() : fs::path(dir)) / name).string();
}

genie::Result<genie::report::RunRecords> Load(const std::vector<std::string>& files) {
  std::error_code ec;
  if (files.size() == 1 && !fs::is_directory(files[0], ec)) {
    return genie::report::LoadResults(files[0]);
  }
  return genie::report::MergeStreams(files);
}

int Show(const ResultsArgs& a) {
  auto r = Load(a.show_files);
  if (!r.ok()) return FailInput(r.status());
  ReportCompleteness(
      genie::report::CheckCompleteness(r->run_info, r->ops, r->ranks, r->truncated));
  genie::report::PrintSummary(std::cout, r->ops, r->ranks);
  const nlohmann::json* traffic = nullptr;
  if (r->run_info.is_object() && r->run_info.contains("traffic")) {
    traffic = &r->run_info["traffic"];
  }
  genie::report::PrintTraffic(std::cout, traffic != nullptr ? *traffic : nlohmann::json());
  if (r->run_info.is_object() && r->run_info.contains("testbed")) {
    genie::report::PrintTestbed(std::cout, r->run_info["testbed"], genie::report::FirstStart(r->ops));
  }
  // Measured beside the prediction / baseline that `genie run --predict/--baseline` recorded.
  double expected_gbps = 0;
  std::string expected_source;
  std::error_code ec;
  if (a.show_files.size() == 1 && !fs::is_directory(a.show_files[0], ec)) {
    std::ifstream in(a.show_files[0]);
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    for (const char* key : {"prediction", "baseline"}) {
      if (doc.is_object() && doc.contains(key)) {
        genie::report::PrintComparison(std::cout, genie::report::ComparisonFromJson(doc[key]));
      }
    }
    if (doc.is_object() && doc.contains("localization")) {
      expected_gbps = doc["localization"].value("expected_gbps", 0.0);
      expected_source = doc["localization"].value("expected_source", "");
    }
  }
  // `genie run --localize`'s probes, judged again (with the run's expected rate when known).
  if (r->run_info.is_object() && r->run_info.contains("localize")) {
    int world = 0;
    for (const auto& k : r->ranks) world = std::max(world, k.rank + 1);
    auto l = genie::report::Localize(r->run_info["localize"], world, expected_gbps,
                                     expected_source);
    if (l.ok()) {
      std::cout << genie::report::FormatLocalization(*l);
    } else {
      fmt::print(stderr, "genie results: warning: {}\n", l.status().message());
    }
  }
  if (a.astra_sim) genie::report::PrintAstraSimLines(std::cout, r->ranks);
  return 0;
}

int Strip(const ResultsArgs& a) {
  // Every file is read before any is written, so that no output overwrites a file still to be
  // read (a.json and a.stripped.json stripped together).
  std::vector<std::string> texts;
  for (const std::string& file : a.strip_files) {
    auto text = genie::report::StripFileText(file);
    if (!text.ok()) return FailInput(text.status());
    texts.push_back(std::move(*text));
  }
  if (a.to_stdout) {
    for (const auto& t : texts) std::cout << t;
    return 0;
  }
  std::vector<std::string> outs;
  for (const std::string& file : a.strip_files) {
    outs.push_back(a.in_place ? file : StrippedPath(file, a.strip_dir));
  }
  if (!a.in_place) {
    genie::Status s = genie::report::CheckOutputsAreNotInputs(outs, a.strip_files);
    if (!s.ok()) return Fail(s);
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    genie::Status s = genie::report::WriteFileAtomically(outs[i], texts[i]);
    if (!s.ok()) return Fail(s);
    std::cout << outs[i] << "\n";
  }
  return 0;
}

int Merge(const ResultsArgs& a) {
  std::map<int, genie::TimeNs> offsets;
  for (const std::string& spec : a.clock_offsets) {
    auto eq = spec.find('=');
    try {
      if (eq == std::string::npos) throw std::invalid_argument(spec);
      offsets[std::stoi(spec.substr(0, eq))] = std::stoll(spec.substr(eq + 1));
    } catch (const std::exception&) {
      return FailInput(genie::Status::InvalidArgument(fmt::format(
          "--clock-offset \"{}\": expected RANK=NS, e.g. --clock-offset 3=-1500", spec)));
    }
  }
  std::string trace = a.trace_out;
  if (trace.empty()) {
    fs::path p(a.merge_out);
    trace = (p.parent_path() / (p.stem().string() + ".trace.json")).string();
  }
  // Refused before anything is read or written: an output naming an input would replace it.
  auto inputs = genie::report::ExpandStreamPaths(a.merge_files);
  if (!inputs.ok()) return FailInput(inputs.status());
  genie::Status s = genie::report::CheckOutputsAreNotInputs({a.merge_out, trace}, *inputs);
  if (!s.ok()) return Fail(s);
  auto r = genie::report::MergeStreams(a.merge_files, offsets);
  if (!r.ok()) return FailInput(r.status());
  nlohmann::json doc =
      genie::report::BuildResultsJson(r->run_info, r->ops, r->ranks, r->clock_offsets_ns);
  s = genie::report::WriteJsonFile(a.merge_out, doc);
  if (!s.ok()) return Fail(s);
  s = genie::report::WriteChromeTrace(trace, r->ops);
  if (!s.ok()) return Fail(s);
  ReportCompleteness(
      genie::report::CheckCompleteness(r->run_info, r->ops, r->ranks, r->truncated));
  std::cout << fmt::format("wrote {} and {} ({} ranks, {} ops)\n", a.merge_out, trace,
                           genie::report::TotalsPerRank(r->ranks).size(), r->ops.size());
  return 0;
}

}  // namespace

GENIE_COMMAND(results, "Show, strip (for diffing) and merge genie results files") {
  auto a = std::make_shared<ResultsArgs>();
  app.require_subcommand(1);

  CLI::App* show = app.add_subcommand(
      "show",
      "Print the summary of a results JSON or of rank streams (.jsonl; several are "
      "merged)");
  show->add_option("files", a->show_files,
                   "results JSON, or rank .jsonl streams / output folders (merged)")
      ->required()
      ->check(CLI::ExistingPath);
  show->add_flag("--astra-sim", a->astra_sim,
                 "Also print ASTRA-sim's 'sys[r] finished, T cycles, ...' lines");

  CLI::App* strip = app.add_subcommand(
      "strip",
      "Write the file(s) with every timing field removed, so two runs of one workload "
      "compare equal with diff (FILE -> FILE.stripped.EXT)");
  strip->add_option("files", a->strip_files, "results JSON, Chrome trace or .jsonl stream")
      ->required()
      ->check(CLI::ExistingFile);
  strip->add_flag("--stdout", a->to_stdout, "Print the stripped text instead of writing files");
  strip->add_flag("--in-place", a->in_place, "Overwrite each file");
  strip->add_option("-o,--output-dir", a->strip_dir, "Write the stripped files into DIR");

  CLI::App* merge = app.add_subcommand(
      "merge", "Combine per-rank .jsonl streams into one results JSON and a Chrome trace");
  merge->add_option("out", a->merge_out, "results JSON to write")->required();
  merge
      ->add_option("files", a->merge_files,
                   "rank streams (.jsonl), or output folders (one per host) holding them")
      ->required()
      ->check(CLI::ExistingPath);
  merge->add_option("--trace-out", a->trace_out,
                    "Chrome trace to write (default: OUT's name with .trace.json)");
  merge
      ->add_option("--clock-offset", a->clock_offsets,
                   "RANK=NS added to every time of that rank, instead of the offset it measured "
                   "at start (repeatable)")
      ->allow_extra_args(false);  // one value per flag, so the streams stay positional

  return [a, show, strip, merge]() -> int {
    if (show->parsed()) return Show(*a);
    if (strip->parsed()) return Strip(*a);
    if (merge->parsed()) return Merge(*a);
    return 2;
  };
}
