// Attribute access across every integer width and the bool/int flag forms real traces use.
#include "genie/trace/attributes.h"

#include <gtest/gtest.h>

#include "genie/trace/et_reader.h"

namespace genie::trace {
namespace {

TEST(AttributesTest, EveryIntegerWidthReadsTheSameValue) {
  ChakraProtoMsg::Node n;
  auto add = [&n](const std::string& name) {
    Attr* a = n.add_attr();
    a->set_name(name);
    return a;
  };
  add("i32")->set_int32_val(65536);
  add("i64")->set_int64_val(65536);
  add("u32")->set_uint32_val(65536);
  add("u64")->set_uint64_val(65536);
  add("s32")->set_sint32_val(65536);
  add("s64")->set_sint64_val(65536);
  add("f32")->set_fixed32_val(65536);
  add("f64")->set_fixed64_val(65536);
  add("sf32")->set_sfixed32_val(65536);
  add("sf64")->set_sfixed64_val(65536);
  add("dbl")->set_double_val(65536.0);
  for (const char* name : {"i32", "i64", "u32", "u64", "s32", "s64", "f32", "f64", "sf32", "sf64",
                           "dbl"}) {
    auto v = GetUint(n, name);
    ASSERT_TRUE(v.ok()) << name << ": " << v.status().ToString();
    ASSERT_TRUE(v->has_value()) << name;
    EXPECT_EQ(**v, 65536u) << name;
  }
  add("big")->set_uint64_val(uint64_t{1} << 63);
  EXPECT_EQ(**GetUint(n, "big"), uint64_t{1} << 63);
  EXPECT_FALSE(GetInt(n, "big").ok());
  add("neg")->set_sint64_val(-5);
  EXPECT_EQ(**GetInt(n, "neg"), -5);
  EXPECT_NE(GetUint(n, "neg").status().message().find("negative"), std::string::npos);
  EXPECT_FALSE(GetUint(n, "absent")->has_value());
}

TEST(AttributesTest, FlagsAcceptBoolOrInt) {
  ChakraProtoMsg::Node n;
  AddBool(&n, "b", true);
  AddInt32(&n, "i", 0);
  AddInt64(&n, "j", 1);
  EXPECT_TRUE(**GetBool(n, "b"));
  EXPECT_FALSE(**GetBool(n, "i"));
  EXPECT_TRUE(**GetBool(n, "j"));
  AddString(&n, "s", "yes");
  auto bad = GetBool(n, "s");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'s' is stored as string"), std::string::npos);
  EXPECT_FALSE(GetInt(n, "s").ok());
}

TEST(AttributesTest, UnsetValueCountsAsAbsentAndListsConvert) {
  ChakraProtoMsg::Node n;
  n.add_attr()->set_name("outputs");  // STG writes attributes with no value
  EXPECT_EQ(FindAttr(n, "outputs"), nullptr);
  AddBoolList(&n, "involved_dim", {true, false, true});
  EXPECT_EQ(**GetBoolList(n, "involved_dim"), (std::vector<bool>{true, false, true}));
  Attr* a = n.add_attr();
  a->set_name("ints");
  a->mutable_int64_list()->add_values(0);
  a->mutable_int64_list()->add_values(3);
  EXPECT_EQ(**GetBoolList(n, "ints"), (std::vector<bool>{false, true}));
  AddInt64(&n, "pg_as_int", 3);
  EXPECT_EQ(**GetString(n, "pg_as_int"), "3");
}

// The ASTRA-sim input whose comm_size is a uint64 (65536): a reader assuming int64 reads 0.
TEST(AttributesTest, OnecommAllreduceUint64CommSize) {
  auto reader = EtReader::Open(std::string(GENIE_DATA_DIR) +
                               "/traces/astra-sim/onecomm_allreduce/"
                               "one_comm_coll_node_allreduce.17.et");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ChakraProtoMsg::Node node;
  uint64_t offset = 0;
  ASSERT_TRUE(*(*reader)->Next(&node, &offset));
  const Attr* a = FindAttr(node, "comm_size");
  ASSERT_NE(a, nullptr);
  EXPECT_STREQ(AttrTypeName(*a), "uint64");
  EXPECT_EQ(a->int64_val(), 0);  // the long-lived bug elsewhere
  EXPECT_EQ(**GetUint(node, "comm_size"), 65536u);
  EXPECT_EQ(**GetInt(node, "comm_type"), 0);
}

}  // namespace
}  // namespace genie::trace
