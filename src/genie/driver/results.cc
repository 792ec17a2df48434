#include "genie/driver/results.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "genie/common/status.h"
#include "genie/driver/run_results.h"
#include "genie/record/output_guard.h"
#include "genie/report/astra_sim_lines.h"
#include "genie/report/atomic_file.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/completeness.h"
#include "genie/report/localization.h"
#include "genie/report/prediction.h"
#include "genie/report/results_file.h"
#include "genie/report/results_json.h"
#include "genie/report/statistics.h"
#include "genie/report/strip.h"

namespace genie::driver {
namespace {

namespace fs = std::filesystem;

int Fail(const Status& s) {
  fmt::print(stderr, "genie results: {}\n", s.message());
  return s.code() == Status::Code::kIoError ? 1 : 2;
}

// An input that cannot be read is bad input, whatever the reason.
int FailInput(const Status& s) {
  fmt::print(stderr, "genie results: {}\n", s.message());
  return 2;
}

// Says on stdout (beside the figures) and on stderr (so that it shows also when stdout goes to
// a file) that the records cover part of the run only.
void ReportCompleteness(const report::Completeness& c) {
  if (c.complete()) return;
  std::cout << report::DescribeCompleteness(c);
  std::string what;
  if (!c.missing_ranks.empty()) {
    what += "ranks " + report::FormatRanges(c.missing_ranks) + " have no records";
  }
  if (!c.unfinished.empty()) {
    what += std::string(what.empty() ? "" : ", ") + std::to_string(c.unfinished.size()) +
            " rank(s) did not finish every iteration";
  }
  if (c.truncated) what += std::string(what.empty() ? "" : ", ") + "a stream was cut";
  fmt::print(stderr, "genie results: warning: incomplete run ({})\n", what);
}

Result<report::RunRecords> Load(const std::vector<std::string>& files) {
  std::error_code ec;
  if (files.size() == 1 && !fs::is_directory(files[0], ec)) {
    return report::LoadResults(files[0]);
  }
  return report::MergeStreams(files);
}

}  // namespace

std::string StrippedPath(const std::string& path, const std::string& dir) {
  fs::path p(path);
  fs::path name = p.stem().string() + ".stripped" + p.extension().string();
  return ((dir.empty() ? p.parent_path() : fs::path(dir)) / name).string();
}

int ShowResults(const ResultsShowOptions& a) {
  auto r = Load(a.files);
  if (!r.ok()) return FailInput(r.status());
  ReportCompleteness(report::CheckCompleteness(r->run_info, r->ops, r->ranks, r->truncated));
  // Measured beside the prediction / baseline that `genie run --predict/--baseline` recorded.
  std::vector<report::Comparison> compared;
  std::vector<report::IterationAttribution> attributed;
  double expected_gbps = 0;
  std::string expected_source;
  std::error_code ec;
  if (a.files.size() == 1 && !fs::is_directory(a.files[0], ec)) {
    std::ifstream in(a.files[0]);
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    for (const char* key : {"prediction", "baseline"}) {
      if (doc.is_object() && doc.contains(key)) {
        compared.push_back(report::ComparisonFromJson(doc[key]));
      }
    }
    if (doc.is_object() && doc.contains("attribution")) {
      attributed = report::AttributionFromJson(doc["attribution"]);
    }
    if (doc.is_object() && doc.contains("localization")) {
      expected_gbps = doc["localization"].value("expected_gbps", 0.0);
      expected_source = doc["localization"].value("expected_source", "");
    }
  }
  // `genie run --localize`'s probes, judged again (with the run's expected rate when known).
  std::optional<report::Localization> localized;
  if (r->run_info.is_object() && r->run_info.contains("localize")) {
    int world = 0;
    for (const auto& k : r->ranks) world = std::max(world, k.rank + 1);
    auto l = report::Localize(r->run_info["localize"], world, expected_gbps, expected_source);
    if (l.ok()) {
      localized = std::move(*l);
    } else {
      fmt::print(stderr, "genie results: warning: {}\n", l.status().message());
    }
  }
  PrintRunResults(std::cout, *r, compared, localized, nullptr, attributed);
  if (a.astra_sim) report::PrintAstraSimLines(std::cout, r->ranks);
  return 0;
}

int StripResults(const ResultsStripOptions& a) {
  // Every file is read before any is written, so that no output overwrites a file still to be
  // read (a.json and a.stripped.json stripped together).
  std::vector<std::string> texts;
  for (const std::string& file : a.files) {
    auto text = report::StripFileText(file);
    if (!text.ok()) return FailInput(text.status());
    texts.push_back(std::move(*text));
  }
  if (a.to_stdout) {
    for (const auto& t : texts) std::cout << t;
    return 0;
  }
  std::vector<std::string> outs;
  for (const std::string& file : a.files) {
    outs.push_back(a.in_place ? file : StrippedPath(file, a.dir));
  }
  if (!a.in_place) {
    Status s = record::CheckOutputs({a.files, outs, {}, {}});
    if (!s.ok()) return Fail(s);
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    Status s = report::WriteStripped(outs[i], texts[i]);
    if (!s.ok()) return Fail(s);
    std::cout << outs[i] << "\n";
  }
  return 0;
}

int MergeResults(const ResultsMergeOptions& a) {
  std::map<int, TimeNs> offsets;
  for (const std::string& spec : a.clock_offsets) {
    auto eq = spec.find('=');
    try {
      if (eq == std::string::npos) throw std::invalid_argument(spec);
      offsets[std::stoi(spec.substr(0, eq))] = std::stoll(spec.substr(eq + 1));
    } catch (const std::exception&) {
      return FailInput(Status::InvalidArgument(fmt::format(
          "--clock-offset \"{}\": expected RANK=NS, e.g. --clock-offset 3=-1500", spec)));
    }
  }
  std::string trace = a.trace_out;
  if (trace.empty()) {
    fs::path p(a.out);
    trace = (p.parent_path() / (p.stem().string() + ".trace.json")).string();
  }
  // Refused before anything is read or written: an output naming an input would replace it.
  auto inputs = report::ExpandStreamPaths(a.files);
  if (!inputs.ok()) return FailInput(inputs.status());
  Status s = record::CheckOutputs({*inputs, {a.out}, {trace}, {}});
  if (!s.ok()) return Fail(s);
  auto r = report::MergeStreams(a.files, offsets);
  if (!r.ok()) return FailInput(r.status());
  nlohmann::json doc =
      report::BuildResultsJson(r->run_info, r->ops, r->ranks, r->clock_offsets_ns);
  s = report::WriteJsonFile(a.out, doc);
  if (!s.ok()) return Fail(s);
  s = report::WriteChromeTrace(trace, r->ops);
  if (!s.ok()) return Fail(s);
  ReportCompleteness(report::CheckCompleteness(r->run_info, r->ops, r->ranks, r->truncated));
  std::cout << fmt::format("wrote {} and {} ({} ranks, {} ops)\n", a.out, trace,
                           report::TotalsPerRank(r->ranks).size(), r->ops.size());
  return 0;
}

}  // namespace genie::driver
