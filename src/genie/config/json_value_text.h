// JsonValueText: how a configuration value is quoted in an error message ("expected a number,
// found ..."). A scalar as written (long strings cut), a list or object by its kind only: the
// file is the user's, and printing a nested value recurses once per level, so a deeply nested
// one (`[[[[...]]]]`) would overflow the stack while reporting the error. Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace genie::config {

std::string JsonValueText(const nlohmann::json& value);

}  // namespace genie::config
