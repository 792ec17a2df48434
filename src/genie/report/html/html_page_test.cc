#include "genie/report/html/html_page.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "genie/report/html/chart_js.h"
#include "genie/report/html/page_model.h"

namespace genie::report::html {
namespace {

using nlohmann::json;

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = 0; (i = s.find(what, i)) != std::string::npos; i += what.size()) ++n;
  return n;
}

TEST(HtmlPage, JsonCannotCloseTheScript) {
  json j = {{"name", "</script><script>alert(1)</script> & <!--"}};
  const std::string text = ScriptSafeJson(j);
  EXPECT_EQ(text.find('<'), std::string::npos);
  EXPECT_EQ(text.find('>'), std::string::npos);
  EXPECT_EQ(json::parse(text), j);  // the same value
}

TEST(HtmlPage, FillsTheTemplateOnce) {
  // A name holding a placeholder is data, not a place to fill.
  json model =
      PageModel({json{{"kind", "run"}, {"name", "@GENIE_DATA@ @GENIE_CHARTJS@"}}}, "t <b>");
  const std::string page = RenderPage(model, "var Chart = 1; // </script> inside");
  EXPECT_EQ(page.find("@GENIE_TITLE@"), std::string::npos);
  EXPECT_EQ(Count(page, "@GENIE_DATA@"), 1u);  // the name's, inside the data
  EXPECT_NE(page.find("<title>t &lt;b&gt;</title>"), std::string::npos);
  EXPECT_NE(page.find("var Chart = 1; // <\\/script> inside"), std::string::npos);
  // The template's four scripts: error catcher, data, Chart.js, the page's own.
  EXPECT_EQ(Count(page, "</script>"), 4u);
  EXPECT_NE(page.find("id=\"genie-selfcheck\""), std::string::npos);
}

TEST(HtmlPage, WritesASelfContainedFile) {
  auto chart = ChartJs();
  if (!chart.ok()) GTEST_SKIP() << chart.status().message();
  EXPECT_NE(chart->find("Chart.js v3"), std::string::npos);
  const auto out = std::filesystem::path(::testing::TempDir()) / "html_page_test.html";
  Status st = WriteReportFromPanels({json{{"kind", "doctor"}, {"name", "d"}}}, out.string());
  ASSERT_TRUE(st.ok()) << st.message();
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  const std::string page = text.str();
  EXPECT_NE(page.find("Chart.js v3"), std::string::npos);
  // Nothing to fetch: no src= or href= to the network.
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  std::filesystem::remove(out);
}

TEST(HtmlPage, ATraceBecomesOnlyARelativeLink) {
  auto chart = ChartJs();
  if (!chart.ok()) GTEST_SKIP() << chart.status().message();
  const auto dir = std::filesystem::path(::testing::TempDir()) / "html_page_link_test";
  std::filesystem::create_directories(dir);
  const auto out = dir / "r.html";
  for (const std::string& trace : {std::string("javascript:alert(1)"),
                                   (dir / "data:text/html,x").string(),
                                   std::string("JaVaScRiPt:alert(1)")}) {
    Status st = WriteReportFromPanels(
        {json{{"kind", "doctor"}, {"name", "d"}, {"trace", trace}}}, out.string());
    ASSERT_TRUE(st.ok()) << st.message();
    std::ifstream in(out);
    std::stringstream text;
    text << in.rdbuf();
    const std::string page = text.str();
    EXPECT_EQ(page.find("\"trace_href\":\"javascript:"), std::string::npos) << trace;
    EXPECT_EQ(page.find("\"trace_href\":\"data:"), std::string::npos) << trace;
    EXPECT_NE(page.find("\"trace_href\":\""), std::string::npos) << trace;
    EXPECT_EQ(Count(page, "href: p.trace,"), 0u);  // the link is the encoded one only
  }
  std::filesystem::remove_all(dir);
}

TEST(HtmlPage, NeverReplacesWhatItShows) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "html_page_guard_test";
  std::filesystem::create_directories(dir);
  const auto results = dir / "results.json";
  std::ofstream(results) << "{\"format\":\"genie-results\"}\n";
  Status st = WriteReportFromPanels({json{{"kind", "run"}, {"name", results.string()}}},
                                    (dir / "." / "results.json").string());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("one of the inputs"), std::string::npos) << st.message();
  std::ifstream in(results);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "{\"format\":\"genie-results\"}");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace genie::report::html
