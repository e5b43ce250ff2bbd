// GroupProcess with real child processes (/bin/sh): output bytes and their end, the exit code
// or signal, the environment it is given, PATH lookup errors, and a signal to the group
// reaching a grandchild.
#include "stages/common/group_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <string>

#include "core/strings.h"
#include "tests/testing/test_util.h"

namespace longhaul::stages {
namespace {

using testing::TempDir;
using testing::WaitFor;

struct Observed {
  std::string out, err;
  int ends = 0;
  bool all_ended = false;
  bool exited = false;
  int code = 0, sig = 0;
};

// Handlers recording into `r`; the io_context stops once the child has exited and both pipes
// have ended.
GroupProcess::Handlers Record(boost::asio::io_context& io, Observed& r) {
  auto maybe_stop = [&io, &r] {
    if (r.exited && r.all_ended) io.stop();
  };
  GroupProcess::Handlers h;
  h.on_output = [&r](bool is_err, std::string_view b) { (is_err ? r.err : r.out) += b; };
  h.on_output_end = [&r, maybe_stop](bool, bool all) {
    ++r.ends;
    r.all_ended = all;
    maybe_stop();
  };
  h.on_exit = [&r, maybe_stop](int code, int sig) {
    r.exited = true;
    r.code = code;
    r.sig = sig;
    maybe_stop();
  };
  return h;
}

TEST(GroupProcessTest, DeliversOutputEndAndExitCode) {
  boost::asio::io_context io;
  Observed r;
  GroupProcess::Options o;
  o.argv = {"sh", "-c", "printf 'a\\rb\\n'; echo oops >&2; exit 3"};
  auto p = GroupProcess::Start(io, o, Record(io, r));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_GT((*p)->pid(), 0);
  io.run_for(std::chrono::seconds(20));
  EXPECT_TRUE((*p)->exited());
  EXPECT_EQ(r.out, "a\rb\n");  // raw bytes, as written
  EXPECT_EQ(r.err, "oops\n");
  EXPECT_EQ(r.ends, 2);
  EXPECT_TRUE(r.all_ended);
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.sig, 0);
}

TEST(GroupProcessTest, AddsAndRemovesEnvironmentVariables) {
  ::setenv("LH_GROUP_PROCESS_TEST_DROP", "inherited", 1);
  boost::asio::io_context io;
  Observed r;
  GroupProcess::Options o;
  o.argv = {"/bin/sh", "-c", "echo \"[$LH_GROUP_PROCESS_TEST_DROP][$LH_GROUP_PROCESS_TEST_ADD]\""};
  o.env = {{"LH_GROUP_PROCESS_TEST_ADD", "added"}};
  o.unset_env = {"LH_GROUP_PROCESS_TEST_DROP"};
  auto p = GroupProcess::Start(io, o, Record(io, r));
  ASSERT_TRUE(p.ok()) << p.status();
  io.run_for(std::chrono::seconds(20));
  ::unsetenv("LH_GROUP_PROCESS_TEST_DROP");
  EXPECT_EQ(r.out, "[][added]\n");
}

TEST(GroupProcessTest, SignalToTheGroupReachesGrandchildren) {
  TempDir dir;
  std::string pid_file = dir.Join("grandchild.pid");
  boost::asio::io_context io;
  Observed r;
  GroupProcess::Options o;
  // The grandchild keeps no pipe open, so only the group signal can end it.
  o.argv = {"/bin/sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $! > " + pid_file + "; wait"};
  auto p = GroupProcess::Start(io, o, Record(io, r));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(WaitFor([&] { return !testing::ReadTextFile(pid_file).empty(); }, 10'000));
  pid_t grandchild = std::stoi(testing::ReadTextFile(pid_file));
  EXPECT_TRUE((*p)->GroupAlive());
  (*p)->SignalGroup(SIGTERM);
  io.run_for(std::chrono::seconds(20));
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.sig, SIGTERM);
  EXPECT_EQ(r.code, -1);
  EXPECT_TRUE(WaitFor([&] { return !testing::ProcessAlive(grandchild); }, 10'000));
  EXPECT_TRUE(WaitFor([&] { return !(*p)->GroupAlive(); }, 10'000));
}

TEST(GroupProcessTest, ProgramErrorsNameTheProgram) {
  boost::asio::io_context io;
  Observed r;
  GroupProcess::Options o;
  o.what = "engine command";
  o.argv = {"no-such-program-for-group-process"};
  auto missing = GroupProcess::Start(io, o, Record(io, r));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ToStd(missing.status().message()),
            "engine command not found on PATH: no-such-program-for-group-process");

  o.argv = {"/nonexistent/dir/prog"};
  auto no_file = GroupProcess::Start(io, o, Record(io, r));
  ASSERT_FALSE(no_file.ok());
  EXPECT_EQ(no_file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(ToStd(no_file.status().message()).find("engine command /nonexistent/dir/prog"),
            std::string::npos);

  o.argv = {};
  EXPECT_EQ(GroupProcess::Start(io, o, Record(io, r)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace longhaul::stages
