#include "genie/config/json_value_text.h"

namespace genie::config {

std::string JsonValueText(const nlohmann::json& value) {
  if (value.is_array()) return "a list of " + std::to_string(value.size()) + " values";
  if (value.is_object()) return "an object of " + std::to_string(value.size()) + " keys";
  constexpr size_t kMaxChars = 60;
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

}  // namespace genie::config
