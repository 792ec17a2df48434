// A host's settings from a sysctl tree: the socket option wins over the host's default, and
// what cannot be read is left empty.
#include "genie/record/host_settings.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace genie::record {
namespace {

std::string FakeProcSys(const std::string& cc, const std::string& ecn) {
  const std::string root =
      (std::filesystem::temp_directory_path() / ("genie-host-settings-" + cc)).string();
  std::filesystem::create_directories(root + "/net/ipv4");
  std::ofstream(root + "/net/ipv4/tcp_congestion_control") << cc << "\n";
  std::ofstream(root + "/net/ipv4/tcp_ecn") << ecn << "\n";
  return root;
}

TEST(HostSettings, TheHostDefaultIsInEffectWithoutASocketOption) {
  const HostSettings s = ReadHostSettings("h3", "", FakeProcSys("bbr", "2"));
  EXPECT_EQ(s.host, "h3");
  EXPECT_EQ(s.tcp_congestion, "bbr");
  EXPECT_EQ(s.tcp_congestion_source, kFromHostDefault);
  EXPECT_EQ(s.tcp_congestion_default, "bbr");
  EXPECT_EQ(s.tcp_ecn, "2");
  EXPECT_EQ(s.ToJson().value("tcp_congestion", ""), "bbr");
}

TEST(HostSettings, GeniesSocketOptionOverridesTheDefault) {
  const HostSettings s = ReadHostSettings("h0", "cubic", FakeProcSys("bbr", "1"));
  EXPECT_EQ(s.tcp_congestion, "cubic");
  EXPECT_EQ(s.tcp_congestion_source, kFromSocketOption);
  EXPECT_EQ(s.tcp_congestion_default, "bbr");
  EXPECT_EQ(s.tcp_ecn, "1");
}

TEST(HostSettings, UnreadableSysctlsAreLeftEmpty) {
  const HostSettings s = ReadHostSettings("h0", "", "/nonexistent-proc-sys");
  EXPECT_EQ(s.tcp_congestion, "");
  EXPECT_EQ(s.tcp_ecn, "");
  // This machine's own tree has both.
  EXPECT_FALSE(ReadHostSettings("here", "").tcp_congestion.empty());
}

}  // namespace
}  // namespace genie::record
