#include "genie/common/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <set>

namespace genie {

void SetupLogging(int verbosity, int rank) {
  auto logger = spdlog::stderr_color_mt(rank >= 0 ? "rank" + std::to_string(rank) : "genie");
  const std::string who = rank >= 0 ? "genie[rank " + std::to_string(rank) + "]" : "genie";
  logger->set_pattern(who + " %^%l%$: %v");
  switch (verbosity) {
    case 0: logger->set_level(spdlog::level::warn); break;
    case 1: logger->set_level(spdlog::level::info); break;
    case 2: logger->set_level(spdlog::level::debug); break;
    default: logger->set_level(spdlog::level::trace); break;
  }
  spdlog::set_default_logger(logger);
}

void WarnOnce(const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> said;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!said.insert(message).second) return;
  }
  spdlog::warn("{}", message);
}

}  // namespace genie
