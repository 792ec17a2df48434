#include "genie/net/interface_address.h"

#include <gtest/gtest.h>

namespace genie::net {
namespace {

TEST(InterfaceAddressTest, InterfaceNameResolvesToItsIpv4Address) {
  auto a = ResolveBindAddress("lo", 0);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a, "127.0.0.1");
}

TEST(InterfaceAddressTest, AddressLiteralsPassThroughUnchanged) {
  for (const char* literal : {"127.0.0.2", "10.1.2.3", "::1", "fd00::2", "fe80::1%lo"}) {
    auto a = ResolveBindAddress(literal, 3);
    ASSERT_TRUE(a.ok()) << literal << ": " << a.status().ToString();
    EXPECT_EQ(*a, literal);
  }
}

TEST(InterfaceAddressTest, LocalRankPicksTheEntryModuloTheirCount) {
  const std::string spec = "lo,127.0.0.5";
  EXPECT_EQ(ResolveBindAddress(spec, 0).value(), "127.0.0.1");
  EXPECT_EQ(ResolveBindAddress(spec, 1).value(), "127.0.0.5");
  EXPECT_EQ(ResolveBindAddress(spec, 2).value(), "127.0.0.1");
  EXPECT_EQ(ResolveBindAddress(spec, 7).value(), "127.0.0.5");
  EXPECT_EQ(ResolveBindAddress(" lo , 127.0.0.5 ", 1).value(), "127.0.0.5");  // spaces ignored
}

TEST(InterfaceAddressTest, UnknownInterfaceIsAnErrorListingTheExistingOnes) {
  auto a = ResolveBindAddress("nosuchif0", 0);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Status::Code::kNotFound);
  const std::string& m = a.status().message();
  EXPECT_NE(m.find("'nosuchif0'"), std::string::npos) << m;
  EXPECT_NE(m.find("lo 127.0.0.1"), std::string::npos) << m;
  // With several entries, the message says which one this rank took.
  auto b = ResolveBindAddress("127.0.0.1,nosuchif0", 3);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(
      b.status().message().find("entry 2 of bind spec '127.0.0.1,nosuchif0' for local rank 3;"),
      std::string::npos)
      << b.status().message();
  // inet_aton shorthands are not addresses here: "10" would be 0.0.0.10.
  EXPECT_FALSE(ResolveBindAddress("10", 0).ok());
}

TEST(InterfaceAddressTest, InterfaceWithoutAnAddressIsAnError) {
  // Any such interface will do (ifb0, a down dummy, ...); not every host has one.
  const std::string all = DescribeInterfaces();
  const size_t mark = all.find(" (no address)");
  if (mark == std::string::npos) GTEST_SKIP() << "every interface has an address: " << all;
  const size_t begin = all.rfind(", ", mark);
  const std::string name = all.substr(begin == std::string::npos ? 0 : begin + 2,
                                      mark - (begin == std::string::npos ? 0 : begin + 2));
  auto a = ResolveBindAddress(name, 0);
  ASSERT_FALSE(a.ok()) << name;
  EXPECT_NE(a.status().message().find("'" + name + "' has no IPv4 or IPv6 address"),
            std::string::npos)
      << a.status().message();
}

TEST(InterfaceAddressTest, MalformedSpecsAreInvalid) {
  for (const char* spec : {"", "lo,,127.0.0.1", "lo,", " "}) {
    auto a = ResolveBindAddress(spec, 0);
    ASSERT_FALSE(a.ok()) << "'" << spec << "'";
    EXPECT_EQ(a.status().code(), Status::Code::kInvalidArgument) << spec;
  }
  EXPECT_FALSE(ResolveBindAddress("lo", -1).ok());
}

// An address no interface here has (TEST-NET-1): bad input naming it and the host's own
// addresses, so that the user can pick one; not an I/O failure (the exit code follows the code).
TEST(InterfaceAddressTest, AnAddressThisHostLacksIsBadInputListingTheHostsAddresses) {
  EXPECT_TRUE(CheckBindable(3, "127.0.0.1", "listen").ok());
  Status st = CheckBindable(3, "192.0.2.77", "listen");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << st.ToString();
  const std::string& m = st.message();
  EXPECT_NE(m.find("rank 3: cannot listen on 192.0.2.77: it is not an address of this host"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("lo 127.0.0.1"), std::string::npos) << m;
  EXPECT_NE(m.find("give --bind one of these addresses or an interface name"), std::string::npos)
      << m;
  EXPECT_NE(AddressNotOnThisHost(0, "192.0.2.77:29500", "serve the rendezvous store", "MASTER_ADDR")
                .message()
                .find("give MASTER_ADDR one of these addresses;"),
            std::string::npos);
}

}  // namespace
}  // namespace genie::net
