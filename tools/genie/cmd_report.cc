// genie report: one self-contained HTML page from the files genie already wrote — a run's
// results.json, `genie bench --json`, `genie doctor --json` — several side by side. Nothing is
// re-run. The page model is report/html/page_model.h, the page report/html/html_page.h
// (docs/report.md).
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/launch/local_launcher.h"
#include "genie/report/html/html_page.h"
#include "genie/report/html/page_model.h"
#include "genie/report/settings_comparison.h"
#include "tools/genie/command.h"

GENIE_COMMAND(report, "One self-contained HTML page (charts, tables) from results files") {
  struct Args {
    std::vector<std::string> inputs;
    std::string out = "report.html";
    std::string trace;
    std::string title;
  };
  auto a = std::make_shared<Args>();
  app.add_option("results", a->inputs,
                 "results.json of a run (genie run / simulate / results merge), genie bench "
                 "--json or genie doctor --json files; several are shown side by side")
      ->required();
  app.add_option("-o,--output", a->out, "The HTML file to write (default report.html)");
  app.add_option("--trace", a->trace,
                 "The run's Chrome trace to link (default: X.trace.json beside X.json, or "
                 "trace.json in its folder); one input only");
  app.add_option("--title", a->title, "The page's title (default: the inputs' names)");
  return [a]() -> int {
    if (!a->trace.empty() && a->inputs.size() != 1) {
      fmt::print(stderr, "genie report: --trace goes with one results file; got {}\n",
                 a->inputs.size());
      return genie::launch::kExitBadInput;
    }
    std::vector<nlohmann::json> panels;
    for (const auto& path : a->inputs) {
      auto panel = genie::report::html::LoadPanel(path, a->trace);
      if (!panel.ok()) {  // unreadable or not genie's: bad input
        fmt::print(stderr, "genie report: {}\n", panel.status().message());
        return genie::launch::kExitBadInput;
      }
      panels.push_back(std::move(*panel));
    }
    // Runs that differ in their network settings: the page's table, on the terminal too.
    std::vector<nlohmann::json> entries;
    for (const auto& p : panels) {
      if (p.value("kind", std::string()) == "run" && p.contains("settings_entry")) {
        entries.push_back(p["settings_entry"]);
      }
    }
    const nlohmann::json settings = genie::report::SettingsComparison(entries);
    genie::Status st =
        genie::report::html::WriteReportFromPanels(std::move(panels), a->out, a->title);
    if (!st.ok()) {  // an output refused (bad input), or Chart.js missing / the page not written
      fmt::print(stderr, "genie report: {}\n", st.message());
      return st.code() == genie::Status::Code::kInvalidArgument ? genie::launch::kExitBadInput : 1;
    }
    fmt::print("genie report: wrote {} ({} input{})\n", a->out, a->inputs.size(),
               a->inputs.size() == 1 ? "" : "s");
    fmt::print("{}", genie::report::FormatSettingsComparison(settings));
    return 0;
  };
}
