// Testbed status: what `genie testbed status NAME` shows — the description (hosts, NICs,
// addresses), each link end's live state (carrier as `ip -j link show` says it, the rate its
// tbf is set to now as `tc -j qdisc show` says it: a fault may have changed it) beside its
// counters, and each host's TCP counters. The parsers of `ip`/`tc` output and the formatter are
// pure (status_test.cc feeds them captured output); QueryLinkStates asks the machine.
//
// Threading: any thread, one Shell per thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"
#include "genie/testbed/counters.h"
#include "genie/testbed/layout.h"
#include "genie/testbed/shell.h"

namespace genie::testbed {

// One link end as it is now.
struct LinkEndState {
  std::string state = "?";  // operstate: UP, DOWN, LOWERLAYERDOWN; "?" when unknown
  uint64_t rate_bps = 0;    // its tbf's rate (the layout's when it has none or unknown)
};

// `ip -j link show DEV`'s operstate; "?" when the text does not say (not JSON, empty).
std::string OperStateFromIpJson(std::string_view text);
// `tc -j qdisc show dev DEV`'s tbf rate in bit/s (the last tbf listed); nullopt when there is
// no tbf or the text is not tc's JSON.
std::optional<uint64_t> TbfRateFromTcJson(std::string_view text);

// Every link end's state, in layout order (each link's a, then b). A command that fails leaves
// that end's state "?" and its rate the layout's.
std::vector<LinkEndState> QueryLinkStates(const Layout& layout, Shell& shell);

// The status as text: a heading line, the hosts' NICs, the link ends (`ends` as
// QueryLinkStates returns them) with their counters, each host's TCP counters.
std::string FormatStatus(const Layout& layout, const Counters& counters,
                         const std::vector<LinkEndState>& ends);
// `genie testbed status --json`: the description with the counters.
nlohmann::json StatusJson(const Layout& layout, const Counters& counters);

// What `genie testbed status NAME [--json]` prints for the testbed that is up under `name`:
// FormatStatus's text, or StatusJson's document (indented, one newline after). Errors: the
// testbed is not up (control.h's Load), its counters cannot be read.
Result<std::string> StatusText(const std::string& name, bool json, Shell& shell);

}  // namespace genie::testbed
