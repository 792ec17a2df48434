// genie results show | strip | merge: read, compare and combine genie's results files (results
// JSON, per-rank JSON-lines streams, Chrome traces). See docs/results.md. This file only parses
// flags; driver/results.h does the work.
#include <memory>
#include <string>
#include <vector>

#include "genie/driver/results.h"
#include "tools/genie/command.h"

GENIE_COMMAND(results, "Show, strip (for diffing) and merge genie results files") {
  struct ResultsArgs {
    genie::driver::ResultsShowOptions show;
    genie::driver::ResultsStripOptions strip;
    genie::driver::ResultsMergeOptions merge;
  };
  auto a = std::make_shared<ResultsArgs>();
  app.require_subcommand(1);

  CLI::App* show = app.add_subcommand(
      "show",
      "Print the summary of a results JSON or of rank streams (.jsonl; several are "
      "merged)");
  show->add_option("files", a->show.files,
                   "results JSON, or rank .jsonl streams / output folders (merged)")
      ->required()
      ->check(CLI::ExistingPath);
  show->add_flag("--astra-sim", a->show.astra_sim,
                 "Also print ASTRA-sim's 'sys[r] finished, T cycles, ...' lines");

  CLI::App* strip = app.add_subcommand(
      "strip",
      "Write the file(s) with every timing field removed, so two runs of one workload "
      "compare equal with diff (FILE -> FILE.stripped.EXT)");
  strip->add_option("files", a->strip.files, "results JSON, Chrome trace or .jsonl stream")
      ->required()
      ->check(CLI::ExistingFile);
  strip->add_flag("--stdout", a->strip.to_stdout,
                  "Print the stripped text instead of writing files");
  strip->add_flag("--in-place", a->strip.in_place, "Overwrite each file");
  strip->add_option("-o,--output-dir", a->strip.dir, "Write the stripped files into DIR");

  CLI::App* merge = app.add_subcommand(
      "merge", "Combine per-rank .jsonl streams into one results JSON and a Chrome trace");
  merge->add_option("out", a->merge.out, "results JSON to write")->required();
  merge
      ->add_option("files", a->merge.files,
                   "rank streams (.jsonl), or output folders (one per host) holding them")
      ->required()
      ->check(CLI::ExistingPath);
  merge->add_option("--trace-out", a->merge.trace_out,
                    "Chrome trace to write (default: OUT's name with .trace.json)");
  merge
      ->add_option("--clock-offset", a->merge.clock_offsets,
                   "RANK=NS added to every time of that rank, instead of the offset it measured "
                   "at start (repeatable)")
      ->allow_extra_args(false);  // one value per flag, so the streams stay positional

  return [a, show, strip, merge]() -> int {
    if (show->parsed()) return genie::driver::ShowResults(a->show);
    if (strip->parsed()) return genie::driver::StripResults(a->strip);
    if (merge->parsed()) return genie::driver::MergeResults(a->merge);
    return 2;
  };
}
