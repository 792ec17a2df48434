// A run's localisation: the ranks' "localize" records (driver/localize.h: each direction of every
// pair the workload used, measured alone after the run) gathered into the doctor's scan
// matrices and judged by the doctor's rules (doctor_findings.h), so a slow iteration's cause is
// named — a host and its side (transmit, receive, both), a pair, a lossy or slow-to-answer
// link, and on a leaf-spine testbed (rank 0's record carries each direction's path) a slow
// switch-to-switch link and its direction (path_blame.h). Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "genie/common/status.h"
#include "genie/report/doctor_findings.h"

namespace genie::report {

struct Localization {
  DoctorScan scan;
  DoctorVerdict verdict;
  int pairs = 0;  // pairs of ranks probed
  // Of those, pairs whose ranks share a host: their traffic never crossed the fabric, so their
  // figures are not judged.
  int same_host_pairs = 0;
};

// `records`: one "localize" record per rank, any order (a missing rank leaves its row
// unmeasured). `expected_gbps`: one link's goodput when known (a testbed's), else 0.
Result<Localization> Localize(const nlohmann::json& records, int world_size,
                              double expected_gbps = 0, const std::string& expected_source = "");
// A headline, the per-host table and the findings, for a terminal.
std::string FormatLocalization(const Localization& l);
// results.json "localization": the doctor's JSON of the probe, plus the pairs count.
nlohmann::json LocalizationJson(const Localization& l);

}  // namespace genie::report
