#include "genie/net/pmi1_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "genie/loop/precise_sleep.h"
#include "genie/net/launcher_kvs.h"

namespace genie::net {
namespace {

TimeNs In(double seconds) {
  return loop::MonotonicNow() + static_cast<TimeNs>(seconds * kNsPerSec);
}

// A PMI-1 server on one end of a socketpair that answers as Hydra's proxy does, records the
// commands it got and serves `kvs` (plus what the client puts). `silent_on` names a command it
// never answers; `fail_on` one it answers with rc=-1.
class FakeServer {
 public:
  std::map<std::string, std::string> kvs;
  std::vector<std::string> commands;
  int barriers = 0;
  std::string silent_on, fail_on, close_on;
  std::vector<std::string> introduction;  // lines sent first to an initack (PMI_PORT)
  int vallen_max = 1024;

  // Serves `fd` on a thread until the client finalizes or hangs up.
  void Serve(int fd) {
    thread_ = std::thread([this, fd] {
      std::string buf;
      char c;
      while (read(fd, &c, 1) == 1) {
        if (c != '\n') {
          buf += c;
          continue;
        }
        std::string reply = Answer(buf);
        buf.clear();
        if (reply == "close") break;
        if (!reply.empty() && write(fd, reply.data(), reply.size()) < 0) break;
        if (reply == "cmd=finalize_ack\n") break;
      }
      close(fd);
    });
  }
  // Waits for the client to finalize or hang up; `commands` is complete after.
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  ~FakeServer() { Join(); }

 private:
  std::string Answer(const std::string& line) {
    std::map<std::string, std::string> m;
    std::istringstream in(line);
    std::string w;
    while (in >> w) m[w.substr(0, w.find('='))] = w.substr(w.find('=') + 1);
    const std::string cmd = m["cmd"];
    commands.push_back(line);
    if (cmd == close_on) return "close";
    if (cmd == silent_on) return "";
    if (cmd == fail_on) return "cmd=" + ReplyName(cmd) + " rc=-1 msg=key_not_found\n";
    if (cmd == "initack") {
      std::string out = "cmd=initack\n";
      for (const auto& l : introduction) out += l + "\n";
      return out;
    }
    if (cmd == "init") return "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n";
    if (cmd == "get_maxes") {
      return "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=" +
             std::to_string(vallen_max) + "\n";
    }
    if (cmd == "get_my_kvsname") return "cmd=my_kvsname rc=0 kvsname=kvs_42_0\n";
    if (cmd == "put") {
      kvs[m["key"]] = m["value"];
      return "cmd=put_result rc=0 msg=success\n";
    }
    if (cmd == "barrier_in") {
      ++barriers;
      return "cmd=barrier_out\n";
    }
    if (cmd == "get") {
      auto it = kvs.find(m["key"]);
      if (it == kvs.end()) return "cmd=get_result rc=-1 msg=key_" + m["key"] + "_not_found\n";
      return "cmd=get_result rc=0 msg=success value=" + it->second + "\n";
    }
    if (cmd == "finalize") return "cmd=finalize_ack\n";
    return "cmd=unknown\n";
  }
  static std::string ReplyName(const std::string& cmd) {
    if (cmd == "put") return "put_result";
    if (cmd == "get") return "get_result";
    return cmd;
  }
  std::thread thread_;
};

struct Pair {
  int client = -1, server = -1;
  Pair() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    client = sv[0];
    server = sv[1];
  }
};

TEST(Pmi1ClientTest, SpeaksTheWholeProtocolInOrder) {
  FakeServer server;
  server.kvs["genie-addr-1"] = "127.0.0.1:4000|boot";
  Pair p;
  server.Serve(p.server);
  auto c = Pmi1Client::Open(p.client, In(5));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->kvsname(), "kvs_42_0");
  EXPECT_EQ((*c)->max_value_length(), 1024);
  EXPECT_EQ((*c)->rank(), -1);
  ASSERT_TRUE((*c)->Put("genie-addr-0", "127.0.0.1:3000|boot", In(5)).ok());
  ASSERT_TRUE((*c)->Barrier(In(5)).ok());
  auto v = (*c)->Get("genie-addr-1", In(5));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "127.0.0.1:4000|boot");
  ASSERT_TRUE((*c)->Finalize(In(5)).ok());
  server.Join();
  EXPECT_EQ(server.kvs["genie-addr-0"], "127.0.0.1:3000|boot");
}

TEST(Pmi1ClientTest, SendsExactlyTheWireLinesHydraExpects) {
  Pair p;
  FakeServer server;
  server.Serve(p.server);
  auto c = Pmi1Client::Open(p.client, In(5));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE((*c)->Put("k", "v", In(5)).ok());
  ASSERT_TRUE((*c)->Barrier(In(5)).ok());
  ASSERT_TRUE((*c)->Get("k", In(5)).ok());
  ASSERT_TRUE((*c)->Finalize(In(5)).ok());
  server.Join();
  const std::vector<std::string> got = server.commands;
  const std::vector<std::string> want = {"cmd=init pmi_version=1 pmi_subversion=1",
                                         "cmd=get_maxes",
                                         "cmd=get_my_kvsname",
                                         "cmd=put kvsname=kvs_42_0 key=k value=v",
                                         "cmd=barrier_in",
                                         "cmd=get kvsname=kvs_42_0 key=k",
                                         "cmd=finalize"};
  EXPECT_EQ(got, want);
}

TEST(Pmi1ClientTest, AFailedGetNamesTheCommandAndTheServersMessage) {
  FakeServer server;
  Pair p;
  server.Serve(p.server);
  auto c = Pmi1Client::Open(p.client, In(5));
  ASSERT_TRUE(c.ok());
  auto v = (*c)->Get("missing", In(5));
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("PMI get_result failed: rc=-1"), std::string::npos)
      << v.status().message();
  EXPECT_NE(v.status().message().find("key_missing_not_found"), std::string::npos);
  ASSERT_TRUE((*c)->Finalize(In(5)).ok());
}

TEST(Pmi1ClientTest, ASilentBarrierTimesOut) {
  FakeServer server;
  server.silent_on = "barrier_in";
  Pair p;
  server.Serve(p.server);
  auto c = Pmi1Client::Open(p.client, In(5));
  ASSERT_TRUE(c.ok());
  const TimeNs t0 = loop::MonotonicNow();
  Status st = (*c)->Barrier(In(0.3));
  EXPECT_EQ(st.code(), Status::Code::kTimeout) << st.ToString();
  EXPECT_NE(st.message().find("barrier_out"), std::string::npos) << st.message();
  EXPECT_LT(loop::MonotonicNow() - t0, 3 * kNsPerSec);
  shutdown(p.client, SHUT_RDWR);  // lets the server thread end
}

TEST(Pmi1ClientTest, AServerThatHangsUpIsUnavailable) {
  FakeServer server;
  server.close_on = "barrier_in";
  Pair p;
  server.Serve(p.server);
  auto c = Pmi1Client::Open(p.client, In(5));
  ASSERT_TRUE(c.ok());
  Status st = (*c)->Barrier(In(5));
  EXPECT_EQ(st.code(), Status::Code::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("closed the connection"), std::string::npos) << st.message();
}

TEST(Pmi1ClientTest, SpacesAndEqualsSignsCannotTravel) {
  FakeServer server;
  Pair p;
  server.Serve(p.server);
  auto c = Pmi1Client::Open(p.client, In(5));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->Put("k", "a b", In(5)).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ((*c)->Put("k=1", "v", In(5)).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ((*c)->Put(std::string(65, 'k'), "v", In(5)).code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE((*c)->Finalize(In(5)).ok());
}

TEST(Pmi1ClientTest, ConnectsThroughPmiPortWithTheInitackIntroduction) {
  const int lfd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(lfd, 1), 0);
  socklen_t len = sizeof(a);
  getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  FakeServer server;
  server.introduction = {"cmd=set size=4", "cmd=set rank=2", "cmd=set debug=0"};
  std::thread accept_one([&] { server.Serve(accept(lfd, nullptr, nullptr)); });
  std::map<std::string, std::string> env = {{"PMI_PORT", port}, {"PMI_ID", "2"}};
  auto c = Pmi1Client::Connect(In(5), [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  accept_one.join();
  close(lfd);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->rank(), 2);
  EXPECT_EQ((*c)->size(), 4);
  EXPECT_EQ((*c)->kvsname(), "kvs_42_0");
  ASSERT_TRUE((*c)->Finalize(In(5)).ok());
  server.Join();
  EXPECT_EQ(server.commands.front(), "cmd=initack pmiid=2");
}

TEST(Pmi1ClientTest, TheEnvironmentIsCheckedBeforeAnythingIsSent) {
  auto none = Pmi1Client::Connect(In(1), [](const char*) -> const char* { return nullptr; });
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("neither PMI_FD nor PMI_PORT"), std::string::npos);
  auto closed = Pmi1Client::Connect(In(1), [](const char* n) -> const char* {
    return std::string(n) == "PMI_FD" ? "987" : nullptr;
  });
  ASSERT_FALSE(closed.ok());
  EXPECT_NE(closed.status().message().find("PMI_FD=987 is not an open descriptor"),
            std::string::npos)
      << closed.status().message();
  auto junk = Pmi1Client::Connect(In(1), [](const char* n) -> const char* {
    return std::string(n) == "PMI_FD" ? "6x" : nullptr;
  });
  EXPECT_EQ(junk.status().code(), Status::Code::kInvalidArgument);
}

// The rendezvous through the launcher, end to end over the fake: rank 0 of 2 publishes its
// address, and gets its peer's (put there by the "other rank") after the barrier.
TEST(LauncherKvsTest, PmiExchangePublishesWaitsAndReadsEveryRank) {
  FakeServer server;
  server.kvs["genie-addr-1"] = "10.0.0.2:5000|b";
  Pair p;
  server.Serve(p.server);
  ASSERT_EQ(setenv("PMI_FD", std::to_string(p.client).c_str(), 1), 0);
  auto job = LauncherJobName("pmi", 5 * kNsPerSec);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(*job, "kvs_42_0");
  auto all = ExchangeThroughLauncher("pmi", 0, 2, "10.0.0.1:4000|a", 5 * kNsPerSec);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(*all, (std::vector<std::string>{"10.0.0.1:4000|a", "10.0.0.2:5000|b"}));
  EXPECT_EQ(server.kvs["genie-tables"], "1");
  EXPECT_EQ(server.kvs["genie-table-0"], "10.0.0.1:4000|a,10.0.0.2:5000|b");
  // One exchange per process: the session is finalized.
  auto again = ExchangeThroughLauncher("pmi", 0, 2, "x", kNsPerSec);
  EXPECT_FALSE(again.ok());
  unsetenv("PMI_FD");
}

int CountPrefix(const std::vector<std::string>& commands, const std::string& prefix) {
  int n = 0;
  for (const auto& c : commands) n += c.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

// Rank 0 of 40 with a store that takes 64-byte values: the table is packed into blocks no
// longer than that, in rank order, and read back whole.
TEST(LauncherKvsTest, RankZeroPacksTheTableIntoValuesTheStoreAllows) {
  FakeServer server;
  server.vallen_max = 64;
  std::vector<std::string> want;
  for (int r = 0; r < 40; ++r) {
    want.push_back("10.0.0." + std::to_string(r) + ":" + std::to_string(4000 + r) + "|boot");
    if (r > 0) server.kvs["genie-addr-" + std::to_string(r)] = want.back();
  }
  Pair p;
  server.Serve(p.server);
  auto c = Pmi1Client::Open(p.client, In(5));
  ASSERT_TRUE(c.ok());
  auto all = PmiAllGather(**c, 0, 40, want[0], In(5));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(*all, want);
  ASSERT_TRUE((*c)->Finalize(In(5)).ok());
  server.Join();
  const int blocks = std::stoi(server.kvs["genie-tables"]);
  EXPECT_GE(blocks, 40 * 21 / 64);
  for (int b = 0; b < blocks; ++b) {
    EXPECT_LE(server.kvs["genie-table-" + std::to_string(b)].size(), 64u);
  }
  EXPECT_EQ(server.barriers, 2);
}

// Any other rank reads only the packed table: a handful of gets, not one per rank.
TEST(LauncherKvsTest, OtherRanksReadOnlyThePackedTable) {
  FakeServer server;
  server.kvs["genie-tables"] = "2";
  server.kvs["genie-table-0"] = "a:1|x,b:2|x";
  server.kvs["genie-table-1"] = "c:3|x";
  Pair p;
  server.Serve(p.server);
  auto c = Pmi1Client::Open(p.client, In(5));
  ASSERT_TRUE(c.ok());
  auto all = PmiAllGather(**c, 1, 3, "b:2|x", In(5));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(*all, (std::vector<std::string>{"a:1|x", "b:2|x", "c:3|x"}));
  ASSERT_TRUE((*c)->Finalize(In(5)).ok());
  server.Join();
  EXPECT_EQ(CountPrefix(server.commands, "cmd=get "), 3);  // the count and two blocks
  // A table that does not match the world size is refused, not used.
  FakeServer bad;
  bad.kvs["genie-tables"] = "1";
  bad.kvs["genie-table-0"] = "a:1|x";
  Pair q;
  bad.Serve(q.server);
  auto d = Pmi1Client::Open(q.client, In(5));
  ASSERT_TRUE(d.ok());
  auto wrong = PmiAllGather(**d, 1, 3, "b:2|x", In(5));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("1 entries for 3 ranks"), std::string::npos)
      << wrong.status().message();
}

}  // namespace
}  // namespace genie::net
