#include "genie/common/logging.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>

namespace genie {
namespace {

// A warning every simulation of a prediction would repeat is said once per process.
TEST(WarnOnce, SaysEachMessageOnce) {
  std::ostringstream out;
  auto before = spdlog::default_logger();
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  auto logger = std::make_shared<spdlog::logger>("warn-once-test", sink);
  logger->set_pattern("%v");
  spdlog::set_default_logger(logger);
  static int run = 0;  // the process remembers what it said: fresh messages each repetition
  const std::string a = "rank 0: a cycle " + std::to_string(run);
  const std::string b = "rank 1: a cycle " + std::to_string(run++);
  WarnOnce(a);
  WarnOnce(b);
  WarnOnce(a);
  spdlog::set_default_logger(before);
  EXPECT_EQ(out.str(), a + "\n" + b + "\n");
}

}  // namespace
}  // namespace genie
