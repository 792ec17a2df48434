// Connection spines: on a leaf-spine testbed whose leaves hash ports too (`--hash l4`, the
// default), the spine of each connection of a run, so that its prediction routes every message
// on the spine its connection really took instead of splitting it over all of them. Each rank
// records its connections' addresses and ports once connected (the "connections" stream
// record, driver/run.cc); these read them back, from a run's merged records or from a job's
// folder, and ask the testbed's leaves (testbed/ecmp.h QueryConnectionSpines).
// The spines come out by rank (src rank, dst rank, channel): Simulate (SimulateInput) and the
// jobs simulation (SimJob) put them on the NPUs the ranks sit on. Main thread only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/config/network_config.h"
#include "genie/testbed/ecmp.h"
#include "genie/testbed/shell.h"

namespace genie::driver {

// One flow per connection record entry: each rank's sending side of each of its connections.
// `records`: an array of "connections" records ({"rank", "connections": [{"peer", "channel",
// "local", "remote"}]}, results.json's provenance `connections`); anything else is skipped.
std::vector<testbed::ConnectionFlow> RecordedFlows(const nlohmann::json& records);

// The "connections" records of the rank streams (rank-N.jsonl) in `folder`, as an array: a job
// still running has written them once connected. Empty when there are none (yet).
nlohmann::json ConnectionRecordsIn(const std::string& folder);

// The spines of `records`' connections on testbed `testbed_name` (by rank), when it is a
// leaf-spine hashing ports (testbed/ecmp.h EcmpPerConnection); empty otherwise, or without
// records. `note` (may be null) gets what to say ("ECMP l4: 112 connections on their spine, as
// the leaves answer"), or why they stay split. `shell`: the leaves' `ip` (null: the system's).
std::vector<config::EcmpConnection> ConnectionSpines(const std::string& testbed_name,
                                                     const nlohmann::json& records,
                                                     std::string* note,
                                                     testbed::Shell* shell = nullptr);

}  // namespace genie::driver
