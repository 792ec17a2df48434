// Each host's TCP defaults, read in its namespace: the command asked and its two answers.
#include "genie/testbed/host_sysctls.h"

#include <gtest/gtest.h>

namespace genie::testbed {
namespace {

class AnsweringShell : public Shell {
 public:
  explicit AnsweringShell(CommandResult answer) : answer_(std::move(answer)) {}
  CommandResult Run(const Argv& argv) override {
    commands.push_back(argv);
    return answer_;
  }
  std::vector<Argv> commands;

 private:
  CommandResult answer_;
};

Layout Star2() {
  TestbedSpec spec;
  spec.name = "hs";
  EXPECT_TRUE(ParseTopology("star:2", &spec).ok());
  auto layout = LayOut(spec);
  EXPECT_TRUE(layout.ok());
  return *layout;
}

TEST(HostSysctls, ReadsEachHostsCongestionControlAndEcnInItsNamespace) {
  const Layout layout = Star2();
  AnsweringShell shell({0, "cubic\n2\n", ""});
  auto read = ReadHostSysctls(layout, shell);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[1].host, layout.hosts[1].name);
  EXPECT_EQ((*read)[1].tcp_congestion, "cubic");
  EXPECT_EQ((*read)[1].tcp_ecn, "2");
  EXPECT_EQ(ToString(shell.commands[0]),
            ToString(InNamespace(
                layout.hosts[0].netns,
                {"sysctl", "-n", "net.ipv4.tcp_congestion_control", "net.ipv4.tcp_ecn"})));
}

TEST(HostSysctls, ANamespaceThatCannotBeReadIsNamed) {
  const Layout layout = Star2();
  AnsweringShell shell({1, "", "Cannot open network namespace"});
  auto read = ReadHostSysctls(layout, shell);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("host " + layout.hosts[0].name), std::string::npos);
}

}  // namespace
}  // namespace genie::testbed
