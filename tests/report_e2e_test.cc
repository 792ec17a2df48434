// `genie report` and the --report flags end to end: pages for a plain run, a bench sweep, a
// doctor scan, several files side by side and (as root, on a testbed) a predicted run with a
// fault schedule, each opened in headless Chromium (Debian `chromium`). The page checks itself
// after drawing — every chart has data and has put pixels on its canvas, no script error — and
// writes the verdict into #genie-selfcheck, which the test reads from `--dump-dom`. A screenshot
// of each page is kept with the pages under <build>/test-output/report_e2e/ (artefacts).
// Skips with a message where Chromium is missing or cannot start; the root tests skip without
// root. Nothing is left behind: the testbed is taken down also when a check fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

using nlohmann::json;

// Where the pages and screenshots stay after the test.
std::string ArtefactDir() {
  static const std::string dir = [] {
    std::string d = std::string(GENIE_BINARY_DIR) + "/test-output/report_e2e";
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// What the page said about itself, and what it showed.
struct Opened {
  std::string dom;
  json check;  // {"ok", "charts": [{"id", "points", "pixels"}], "errors": [...], "panels"}
  bool has(const std::string& text) const { return dom.find(text) != std::string::npos; }
};

class Chromium {
 public:
  // "" when it can start here, else why not. Asked once per ctest run: ctest runs each test
  // case in a process of its own, and a start costs ~5 s; the first case that saw it start
  // leaves a stamp named after ctest's pid (this process's parent) for the others.
  static const std::string& Unavailable() {
    static const std::string why = [] {
      if (std::string missing = ToolMissing("chromium", "chromium"); !missing.empty()) {
        return missing;
      }
      const std::string stamp = ArtefactDir() + "/chromium-starts." + std::to_string(getppid());
      if (std::filesystem::exists(stamp)) return std::string();
      CliResult r = RunCli(Command("--dump-dom 'data:text/html,<p>genie-ok</p>'"));
      if (r.output.find("genie-ok") == std::string::npos) {
        return "chromium --headless cannot start here: " + r.output.substr(0, 400);
      }
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(ArtefactDir(), ec)) {
        if (e.path().filename().string().rfind("chromium-starts.", 0) == 0) {
          std::filesystem::remove(e.path(), ec);
        }
      }
      std::ofstream{stamp};
      return std::string();
    }();
    return why;
  }

  // Opens `page` headless: its DOM after the scripts ran, and a screenshot beside it. One
  // Chromium for both: each start costs ~5 s on 2 cores, most of a page test's time.
  static Opened Open(const std::string& page) {
    Opened o;
    const std::string png = page.substr(0, page.rfind('.')) + ".png";
    CliResult r =
        RunCli(Command("--dump-dom --screenshot=" + png + " file://" + page), Stderr::kApart);
    o.dom = r.output;
    const std::string open = "<pre id=\"genie-selfcheck\"";
    size_t at = o.dom.find(open);
    if (at != std::string::npos) at = o.dom.find('>', at);
    const size_t end = at == std::string::npos ? at : o.dom.find("</pre>", at);
    if (end != std::string::npos) {
      std::string text = o.dom.substr(at + 1, end - at - 1);
      // The DOM serializer escapes &, < and > in text.
      for (const auto& [from, to] :
           {std::pair<std::string, std::string>{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
        for (size_t i = 0; (i = text.find(from, i)) != std::string::npos; i += to.size()) {
          text.replace(i, from.size(), to);
        }
      }
      o.check = json::parse(text, nullptr, false);
    }
    return o;
  }

 private:
  // A profile of its own per call: parallel tests must not share Chromium's profile lock.
  static std::string Command(const std::string& what) {
    const std::string profile =
        "/tmp/genie-report-chromium-" + std::to_string(getpid()) + "-" + std::to_string(++calls_);
    return "timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
           "--no-first-run --user-data-dir=" +
           profile + " --window-size=1400,2600 --virtual-time-budget=10000 " + what +
           " 2>/dev/null; rm -rf " + profile;
  }
  static inline int calls_ = 0;
};

// The self-check passed and every chart named in `charts` is there, drawn, with data.
void ExpectDrawn(const Opened& o, const std::vector<std::string>& charts) {
  ASSERT_TRUE(o.check.is_object()) << "no self-check in the page's DOM:\n" << o.dom.substr(0, 2000);
  EXPECT_TRUE(o.check["errors"].empty()) << o.check.dump(1);
  for (const auto& id : charts) {
    bool found = false;
    for (const auto& c : o.check["charts"]) {
      if (c["id"] != id) continue;
      found = true;
      EXPECT_GT(c["points"].get<int>(), 0) << id << ": no data";
      EXPECT_GT(c["pixels"].get<int>(), 0) << id << ": nothing drawn";
    }
    EXPECT_TRUE(found) << "chart " << id << " missing: " << o.check.dump(1);
  }
  EXPECT_EQ(o.check["ok"], true) << o.check.dump(1);
}

class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Chromium::Unavailable().empty()) GTEST_SKIP() << Chromium::Unavailable();
    dir_ = FreshDir("report");
  }
  std::string dir_;
};

TEST_F(Report, APlainRunAndABenchSweepAloneAndSideBySide) {
  CliResult g =
      RunCli(Genie("gen collective --type all_reduce --size 1MiB --ranks 4 -o " + dir_ + "/ar"));
  ASSERT_EQ(g.exit_code, 0) << g.output;
  const std::string plain = ArtefactDir() + "/plain-run.html";
  CliResult run = RunCli(Genie("run " + dir_ + "/ar -n 4 --warmup 1 -o " + dir_ +
                               "/out --trace-out " + dir_ + "/out/trace.json --report " + plain));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // The terminal says what each line is over.
  EXPECT_NE(run.output.find("step time, per iteration"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("exposed comm per rank, total over 4 iterations"), std::string::npos)
      << run.output;
  Opened o = Chromium::Open(plain);
  ExpectDrawn(o, {"p0-step", "p0-busbw", "p0-sizes"});
  EXPECT_TRUE(o.has("4 ranks, 4 measured iterations")) << o.dom.substr(0, 3000);
  EXPECT_TRUE(o.has("id=\"p0-trace\"")) << "the Perfetto trace link";
  EXPECT_TRUE(o.has("all_reduce"));

  const std::string bench = ArtefactDir() + "/bench-sweep.html";
  CliResult b = RunCli(Genie("bench --ranks 4 -b 1K -e 1M -f 4 -n 3 --json " + dir_ +
                             "/bench.json --report " + bench));
  ASSERT_EQ(b.exit_code, 0) << b.output;
  Opened ob = Chromium::Open(bench);
  ExpectDrawn(ob, {"p0-busbw", "p0-time"});
  EXPECT_TRUE(ob.has("Avg bus bandwidth"));

  // Both, and genie report reads the files the commands wrote.
  const std::string both = ArtefactDir() + "/side-by-side.html";
  CliResult r =
      RunCli(Genie("report " + dir_ + "/out/results.json " + dir_ + "/bench.json -o " + both));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Opened o2 = Chromium::Open(both);
  ExpectDrawn(o2, {"p0-step", "p0-busbw", "p1-busbw", "p1-time"});
  EXPECT_EQ(o2.check["panels"], 2);

  // The same run with another congestion control: the page leads with the setting that differs.
  std::string cc;
  std::ifstream("/proc/sys/net/ipv4/tcp_congestion_control") >> cc;
  const std::string other = cc == "reno" ? "cubic" : "reno";
  CliResult run2 = RunCli(Genie("run " + dir_ + "/ar -n 4 --warmup 1 --tcp-congestion " + other +
                                " -o " + dir_ + "/out2"));
  ASSERT_EQ(run2.exit_code, 0) << run2.output;
  const std::string settings = ArtefactDir() + "/settings-side-by-side.html";
  CliResult r2 = RunCli(Genie("report " + dir_ + "/out/results.json " + dir_ +
                              "/out2/results.json -o " + settings));
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  Opened o3 = Chromium::Open(settings);
  ExpectDrawn(o3, {"p0-step", "p1-step"});
  EXPECT_TRUE(o3.has("id=\"settings-differ\"")) << o3.dom.substr(0, 3000);
  EXPECT_TRUE(o3.has("<td>" + other + "</td>")) << o3.dom.substr(0, 3000);
}

TEST_F(Report, ADoctorScan) {
  // Three ranks on this machine: figures of its loopback, but a scan's page all the same.
  const std::string page = ArtefactDir() + "/doctor-scan.html";
  CliResult r = RunCli(Genie("launch -n 3 -- doctor --allow-shared-host --bytes 1MiB --pings 3 "
                             "--json " + dir_ + "/d.json --report " + page));
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;  // 1: a finding (loopback)
  Opened o = Chromium::Open(page);
  ExpectDrawn(o, {"p0-hosts"});
  EXPECT_TRUE(o.has("id=\"p0-heatmap\""));
  const json d = json::parse(ReadFile(dir_ + "/d.json"));
  for (const auto& host : d["hosts"]) EXPECT_TRUE(o.has(host.get<std::string>())) << host;
}

// Opens no page: runs without Chromium (and does not start one to ask whether it can).
TEST(ReportWithoutChromium, RefusesWhatIsNotGenies) {
  const std::string dir = FreshDir("report");
  std::ofstream(dir + "/junk.json") << "{\"a\": 1}";
  CliResult r = RunCli(Genie("report " + dir + "/junk.json -o " + dir + "/x.html"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("junk.json"), std::string::npos) << r.output;
  CliResult missing = RunCli(Genie("report " + dir + "/none.json -o " + dir + "/x.html"));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.html"));
}

// As root on a star:4 testbed at 400 Mbit/s: a run with --predict, a rate fault on h2 from
// measured iteration 3 (1-based) and --localize; then a doctor scan with h2 slowed.
class ReportOnTestbed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Chromium::Unavailable().empty()) GTEST_SKIP() << Chromium::Unavailable();
    GENIE_SKIP_IF(NamespacesMissing());
    name_ = "rp" + std::to_string(getpid());
    dir_ = FreshDir("report-" + name_);
    CliResult up =
        RunCli(Genie("testbed up --name " + name_ + " --topology star:4 --rate 400mbit"));
    ASSERT_EQ(up.exit_code, 0) << up.output;
  }
  void TearDown() override {
    if (name_.empty()) return;
    RunCli(Genie("testbed down " + name_) + " >/dev/null 2>&1");
    EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output,
              "0\n");
  }
  std::string name_, dir_;
};

TEST_F(ReportOnTestbed, APredictedRunWithAFaultScheduleAndADoctorScan) {
  GENIE_SKIP_IF(Sanitized("measured vs predicted times"));
  CliResult g =
      RunCli(Genie("gen collective --type all_reduce --size 4MiB --ranks 4 -o " + dir_ + "/ar"));
  ASSERT_EQ(g.exit_code, 0) << g.output;
  std::ofstream(dir_ + "/faults.yml")
      << "faults:\n  - {iteration: 3, link: h2, rate: 40mbit, direction: both}\n";
  const std::string page = ArtefactDir() + "/predicted-fault.html";
  CliResult r = RunCli(Genie("launch --testbed " + name_ + " -n 4 -- run " + dir_ +
                             "/ar -n 6 --warmup 1 -o " + dir_ + "/out --predict --localize " +
                             "--faults " + dir_ + "/faults.yml --report " + page));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json results = json::parse(ReadFile(dir_ + "/out/results.json"));
  const auto flagged = results["prediction"]["flagged_iterations"].get<std::vector<int>>();
  ASSERT_FALSE(flagged.empty()) << results["prediction"].dump(1);
  Opened o = Chromium::Open(page);
  ExpectDrawn(o, {"p0-step", "p0-busbw"});
  // The flagged iterations, as results.json has them, and the fault and the named host.
  std::string list;
  for (int i : flagged) list += (list.empty() ? "" : ",") + std::to_string(i);
  EXPECT_TRUE(o.has("data-flagged=\"" + list + "\"")) << list;
  EXPECT_TRUE(o.has("Fault events"));
  // Each fault event (its description, as results.json has it) in the page's fault table.
  for (const auto& f : results["provenance"]["testbed"]["faults"]) {
    EXPECT_TRUE(o.has(f["fault"].get<std::string>())) << f.dump();
  }
  EXPECT_TRUE(o.has("class=\"l named\" data-host=\"h2\"")) << "h2 named in the heat map";
  EXPECT_TRUE(o.has("tbf drops"));  // the testbed's counters
  // The ops furthest behind the model: the all-reduce of a faulted iteration heads the table.
  EXPECT_TRUE(o.has("The ops furthest behind the prediction")) << o.dom.substr(0, 3000);
  EXPECT_TRUE(o.has(results["prediction"]["iterations"][5]["ops_behind"][0]["name"].get<std::string>()));

  // The doctor's page of the same testbed with h2 slowed. 1 MiB per direction, not the default
  // 4 MiB: a tenth of the rate is named as surely (measured: the same single finding, slow_link
  // h2), and the pairs through h2 take 0.2 s each instead of 0.8 s (a 6 s scan, not 22 s).
  CliResult f = RunCli(Genie("testbed fault " + name_ + " h2 --rate 40mbit"));
  ASSERT_EQ(f.exit_code, 0) << f.output;
  const std::string scan = ArtefactDir() + "/doctor-fault.html";
  CliResult d = RunCli(Genie("launch --testbed " + name_ + " -n 4 -- doctor --bytes 1MiB --json " +
                             dir_ + "/d.json --report " + scan));
  RunCli(Genie("testbed fault " + name_ + " clear") + " >/dev/null 2>&1");
  EXPECT_EQ(d.exit_code, 1) << d.output;  // a finding
  Opened od = Chromium::Open(scan);
  ExpectDrawn(od, {"p0-hosts"});
  EXPECT_TRUE(od.has("data-host=\"h2\"")) << "h2 named";
}

}  // namespace
}  // namespace genie::testing
