// fd_limit: the soft RLIMIT_NOFILE is raised to the hard one, and a rank whose connections do
// not fit is refused with the limit, the count and the fix named.
#include "genie/net/fd_limit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace genie::net {
namespace {

// Restores the process's limit however the test ends.
struct KeepLimit {
  rlimit saved{};
  KeepLimit() { getrlimit(RLIMIT_NOFILE, &saved); }
  ~KeepLimit() { setrlimit(RLIMIT_NOFILE, &saved); }
};

TEST(FdLimit, RaisesTheSoftLimitToTheHardOne) {
  KeepLimit keep;
  rlimit low = keep.saved;
  low.rlim_cur = std::min<rlim_t>(keep.saved.rlim_max, 256);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  FdLimit raised = RaiseFdLimit();
  EXPECT_EQ(raised.soft, static_cast<uint64_t>(keep.saved.rlim_max));
  EXPECT_EQ(raised.hard, static_cast<uint64_t>(keep.saved.rlim_max));
}

TEST(FdLimit, TooManyConnectionsAreRefusedNamingTheLimitAndTheFix) {
  KeepLimit keep;
  rlimit low = keep.saved;
  low.rlim_cur = std::min<rlim_t>(keep.saved.rlim_max, 256);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  EXPECT_TRUE(CheckFdBudget(3, 100, 1).ok());
  Status st = CheckFdBudget(3, 1020, 4);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  for (const char* want : {"rank 3", "needs 1084 file descriptors", "1020 connections",
                           "RLIMIT_NOFILE allows 256", "ulimit -n 1084", "--channels"}) {
    EXPECT_NE(st.message().find(want), std::string::npos) << want << " in " << st.message();
  }
}

}  // namespace
}  // namespace genie::net
