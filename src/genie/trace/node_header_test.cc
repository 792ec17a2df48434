// ScanNodeHeader agrees with protobuf's full parse for packed and unpacked deps.
#include "genie/trace/node_header.h"

#include <gtest/gtest.h>

#include "et_def.pb.h"

namespace genie::trace {
namespace {

TEST(NodeHeaderTest, MatchesFullParse) {
  ChakraProtoMsg::Node n;
  n.set_id(123456789012ull);
  n.set_name("x");
  n.set_type(ChakraProtoMsg::COMM_RECV_NODE);
  for (uint64_t d : {5ull, 1ull << 40, 7ull}) n.add_data_deps(d);
  n.add_ctrl_deps(9);
  n.set_duration_micros(77);
  n.mutable_inputs()->set_values("abc");
  n.add_attr()->set_name("a");
  NodeHeader h;
  ASSERT_TRUE(ScanNodeHeader(n.SerializeAsString(), &h).ok());
  EXPECT_EQ(h.id, 123456789012ull);
  EXPECT_EQ(h.type, 6u);
  EXPECT_EQ(h.data_deps, (std::vector<uint64_t>{5, 1ull << 40, 7}));
  EXPECT_EQ(h.ctrl_deps, (std::vector<uint64_t>{9}));
}

TEST(NodeHeaderTest, UnpackedDepsAndErrors) {
  // id=3 (08 03), data_deps unpacked 1 and 2 (28 01 28 02), ctrl packed [4] (22 01 04).
  std::string bytes("\x08\x03\x28\x01\x28\x02\x22\x01\x04", 9);
  NodeHeader h;
  ASSERT_TRUE(ScanNodeHeader(bytes, &h).ok());
  EXPECT_EQ(h.id, 3u);
  EXPECT_EQ(h.data_deps, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(h.ctrl_deps, (std::vector<uint64_t>{4}));
  EXPECT_FALSE(ScanNodeHeader(std::string("\x08\xff", 2), &h).ok());          // varint cut
  EXPECT_FALSE(ScanNodeHeader(std::string("\x12\x05\x41", 3), &h).ok());      // string too long
  EXPECT_FALSE(ScanNodeHeader(std::string("\x0b", 1), &h).ok());              // wire type 3
  EXPECT_FALSE(ScanNodeHeader(std::string("\x22\x03\x01", 3), &h).ok());      // packed too long
}

}  // namespace
}  // namespace genie::trace
