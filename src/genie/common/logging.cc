#include "genie/common/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

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

}  // namespace genie
