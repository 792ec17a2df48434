#include "genie/record/json_check.h"

#include <gtest/gtest.h>

#include <string>

namespace genie::record {
namespace {

using nlohmann::json;

TEST(JsonNestingDepthTest, CountsBracketsOutsideStrings) {
  EXPECT_EQ(JsonNestingDepth("1"), 0);
  EXPECT_EQ(JsonNestingDepth("{\"a\": [1, {\"b\": []}]}"), 4);
  EXPECT_EQ(JsonNestingDepth("{\"a\": \"[[[[{{{{\"}"), 1);
  EXPECT_EQ(JsonNestingDepth("{\"a\": \"\\\"[[[[\"}"), 1);  // an escaped quote stays inside
  // Stops counting past the limit: a gigantic nesting costs no more than the limit.
  EXPECT_EQ(JsonNestingDepth(std::string(1000000, '['), 10), 11);
}

TEST(ParseJsonTest, RefusesDeepNestingInsteadOfRecursingIntoIt) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  auto r = ParseJson(deep, "deep.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
  EXPECT_NE(r.status().message().find("deep.json"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("nested more than 64"), std::string::npos);

  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJson(ok, "ok.json").ok());
  auto bad = ParseJson("{\"a\":", "cut.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cut.json: not valid JSON"), std::string::npos);
}

TEST(FieldReaderTest, ErrorsNameThePlaceTheFieldAndWhatToDo) {
  json j = {{"rank", "zero"}, {"iteration", 1.5}, {"big", 1e30}, {"n", 3.0}, {"s", "x"}};
  int rank = 0;
  {
    FieldReader r(j, "f.jsonl: line 3", "rerun");
    r.Required("rank", &rank);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(),
              "f.jsonl: line 3: field \"rank\" should be an integer, found a string (\"zero\"); "
              "rerun");
  }
  {
    FieldReader r(j, "w", "");
    int n = 0;
    r.Required("n", &n);  // a whole-valued float is an integer
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(n, 3);
    r.Required("iteration", &n);
    EXPECT_NE(r.status().message().find("\"iteration\" should be an integer, found a number "
                                        "with a fraction"),
              std::string::npos)
        << r.status().message();
  }
  {
    FieldReader r(j, "w", "");
    int64_t v = 0;
    r.Optional("big", &v);
    EXPECT_NE(r.status().message().find("\"big\" is out of range"), std::string::npos)
        << r.status().message();
  }
  {
    const json x = {{"x", 70000}};
    FieldReader r(x, "w", "");
    int v = 0;
    r.Required("missing", &v);
    EXPECT_EQ(r.status().message(), "w: field \"missing\" is missing");
  }
  {
    const json neg = {{"u", -1}};
    FieldReader r(neg, "w", "");
    uint64_t u = 7;
    r.Optional("u", &u);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(u, 7u);
  }
  {
    json arr = json::array({1, 2});
    FieldReader r(arr, "w", "");
    EXPECT_EQ(r.status().message(), "w: should be a JSON object, found an array");
    int v = 0;
    r.Optional("a", &v);  // no-op after an error, no throw
  }
  {
    FieldReader r(j, "w", "");
    EXPECT_EQ(r.Array("s"), nullptr);
    EXPECT_NE(r.status().message().find("\"s\" should be an array, found a string"),
              std::string::npos);
  }
}

TEST(FieldReaderTest, NullCountsAsAbsentAndLenientReadsNeverThrow) {
  json j = {{"a", nullptr}, {"s", 5}, {"i", "7"}, {"u", -3}};
  FieldReader r(j, "w", "");
  std::string s = "keep";
  r.Optional("a", &s);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(s, "keep");
  EXPECT_EQ(StringField(j, "s", "fb"), "fb");
  EXPECT_EQ(IntField(j, "i", 9), 9);
  EXPECT_EQ(UintField(j, "u", 4), 4u);
  EXPECT_EQ(StringField(json(), "s"), "");
  EXPECT_EQ(IntField(json::array(), "i", 1), 1);
  EXPECT_FALSE(HasField(j, "a"));
  EXPECT_TRUE(HasField(j, "s"));
}

}  // namespace
}  // namespace genie::record
