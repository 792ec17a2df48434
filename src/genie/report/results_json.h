// The results JSON of a run (docs/results.md): provenance, completeness (are all ranks and
// iterations there: completeness.h), per-rank totals and per-iteration figures, every
// communication op with its algbw/busbw, per-iteration step time with min/median/max, and a
// per-collective-type table. Written by `genie simulate`/`genie run`
// (rank 0) and `genie results merge`; read back by `genie results show`.
// Entries are ordered by (iteration, rank, node), never by time, so two runs of one workload
// differ only in timing fields (see strip.h). Pure apart from the file write; any thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"
#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"
#include "genie/report/completeness.h"
#include "genie/report/statistics.h"

namespace genie::report {

inline constexpr const char* kResultsFormat = "genie-results";
inline constexpr int kResultsVersion = 1;

// run_info: provenance (see provenance.h). clock_offsets_ns: per-rank offsets (rank -> ns, as a
// JSON object) already applied to the times, recorded for merged multi-host runs.
nlohmann::json BuildResultsJson(const nlohmann::json& run_info,
                                const std::vector<record::OpEvent>& ops,
                                const std::vector<record::RankSummary>& ranks,
                                const nlohmann::json& clock_offsets_ns = nlohmann::json::object());

// The pieces of BuildResultsJson, for a writer that streams "collectives" from ops it does not
// hold (streamed_outputs.h): the document without "collectives", given the ops' type table and
// completeness; the order of "collectives"; one entry of it.
nlohmann::json ResultsJsonWithoutCollectives(const nlohmann::json& run_info,
                                             const std::vector<TypeRow>& types,
                                             const Completeness& completeness,
                                             const std::vector<record::RankSummary>& ranks,
                                             const nlohmann::json& clock_offsets_ns);
bool ResultsOrder(const record::OpEvent& a, const record::OpEvent& b);
nlohmann::json CollectiveEntry(const record::OpEvent& e);

Status WriteResultsJson(const std::string& path, const nlohmann::json& run_info,
                        const std::vector<record::OpEvent>& ops,
                        const std::vector<record::RankSummary>& ranks);

// Writes any JSON document to `path` (pretty-printed) atomically (atomic_file.h), naming the
// path on failure.
Status WriteJsonFile(const std::string& path, const nlohmann::json& doc);

}  // namespace genie::report
