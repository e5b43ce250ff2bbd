// Hostile input against real processes: callers without a token, with a wrong one or with a
// role too low; agents without a certificate, from another CA, with an expired one, or
// claiming another agent's id; tokens headed off loopback in plaintext; shell syntax in a
// param. Each is refused with the documented code and message, and leaves nothing in the
// database (the fixture checks PRAGMA integrity_check after every test).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/tokens.h"

namespace longhaul::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kHello[] =
    "name: hello\n"
    "stages:\n"
    "  greet:\n"
    "    run: [lh-testjob, --print, hello]\n";

int64_t RunCount(Cluster& c) {
  Result<std::string> n = c.Query("SELECT count(*) FROM runs");
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() ? std::stoll(*n) : -1;
}

class SecurityTest : public ClusterTest {
 protected:
  CommandResult Cli(const std::vector<std::string>& args, std::map<std::string, std::string> env) {
    std::vector<std::string> argv = {BinPath("longhaul")};
    argv.insert(argv.end(), args.begin(), args.end());
    env.emplace("LONGHAUL_COORDINATOR", cluster().address());
    return RunCommand(argv, env);
  }
};

TEST_F(SecurityTest, EveryCallNeedsAKnownTokenWithARoleHighEnough) {
  TempDir dir;
  Tokens t = MakeTokens(dir, {{"viewer", "vera"}, {"operator", "olga"}, {"admin", "ada"}});
  ClusterOptions o;
  o.coordinator_flags = {"--tokens", t.file};
  o.client_token = t.by_name["ada"];
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  std::string wf = cluster().WriteFile("hello.yaml", kHello);

  CommandResult r = Cli({"runs"}, {});
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_THAT(r.err, HasSubstr("longhaul: unauthenticated: no token was sent"));
  r = Cli({"submit", wf}, {{"LONGHAUL_TOKEN", "lh_0000000000000000"}});
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_THAT(r.err, HasSubstr("longhaul: unauthenticated: the token is not known"));
  EXPECT_THAT(r.err, Not(HasSubstr("lh_0000000000000000")));

  std::map<std::string, std::string> vera = {{"LONGHAUL_TOKEN", t.by_name["vera"]}};
  r = Cli({"runs"}, vera);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Cli({"submit", wf}, vera);
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_EQ(r.err,
            "longhaul: permission denied: vera (viewer) may not submit runs: that needs the "
            "operator role\n");
  EXPECT_EQ(RunCount(cluster()), 0);
  EXPECT_THAT(ReadTextFile(cluster().dir().Join("logs/longhauld.log")),
              HasSubstr("refused SubmitRun from ipv4:127.0.0.1:"));

  // The operator's token from a file (--token-file) may submit; the viewer may not cancel.
  r = Cli({"--token-file", dir.Join("olga.token"), "submit", wf}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int64_t id = std::stoll(r.out);
  ASSERT_TRUE(cluster().WaitForRunEnd(id).ok());
  r = Cli({"cancel", StrCat(id)}, vera);
  EXPECT_EQ(r.exit_code, 7) << r.err;
  r = Cli({"retry", StrCat(id)}, {{"LONGHAUL_TOKEN_FILE", dir.Join("vera.token")}});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_EQ(RunCount(cluster()), 1);

  // The audit trail: the operator's submit and the admin's cancel (refused: the run has
  // ended), with who and from where; refused calls are in the log only. Only an admin may
  // read it.
  r = Cli({"cancel", StrCat(id)}, {{"LONGHAUL_TOKEN", t.by_name["ada"]}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = Cli({"audit", "--json"}, vera);
  EXPECT_EQ(r.exit_code, 7) << r.err;
  std::string rows;
  ASSERT_TRUE(WaitFor(
      [&] {
        Result<std::string> q = cluster().Query(
            "SELECT principal || ' ' || role || ' ' || action || ' ' || target || ' ' || "
            "CASE WHEN result = 'OK' THEN 'OK' ELSE substr(result, 1, instr(result, ':') - 1) "
            "END || ' ' || substr(peer, 1, 14) FROM audit ORDER BY id");
        rows = q.ok() ? *q : "";
        return SplitLines(rows).size() >= 2;
      },
      20'000))
      << rows;
  EXPECT_EQ(rows, StrCat("olga operator SubmitRun run ", id, " OK ipv4:127.0.0.1\n",
                         "ada admin CancelRun run ", id, " FAILED_PRECONDITION ipv4:127.0.0.1"));
  r = Cli({"audit"}, {{"LONGHAUL_TOKEN", t.by_name["ada"]}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("olga"));
  EXPECT_THAT(r.out, HasSubstr("SubmitRun"));
  EXPECT_THAT(r.out, HasSubstr("workflow " + wf));
}

TEST_F(SecurityTest, SighupReloadsTheTokensAndABrokenFileKeepsTheOldOnes) {
  TempDir dir;
  Tokens t = MakeTokens(dir, {{"viewer", "vera"}, {"admin", "ada"}});
  ClusterOptions o;
  o.coordinator_flags = {"--tokens", t.file};
  o.client_token = t.by_name["ada"];
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  std::string wf = cluster().WriteFile("hello.yaml", kHello);
  std::map<std::string, std::string> vera = {{"LONGHAUL_TOKEN", t.by_name["vera"]}};
  ASSERT_EQ(Cli({"submit", wf}, vera).exit_code, 7);

  std::string log = cluster().dir().Join("logs/longhauld.log");
  WriteTextFile(t.file, "operator vera sha256:nothex\n");
  ::kill(cluster().coordinator_pid(), SIGHUP);
  ASSERT_TRUE(WaitFor(
      [&] { return ReadTextFile(log).find("tokens not reloaded") != std::string::npos; }, 20'000));
  EXPECT_THAT(ReadTextFile(log), HasSubstr(t.file + ":1: expected sha256:"));
  EXPECT_EQ(Cli({"runs"}, vera).exit_code, 0);  // the old table is still in force

  CommandResult line = RunCommand({BinPath("longhaul"), "token", "hash", "operator", "vera"}, {},
                                  10'000, t.by_name["vera"] + "\n");
  ASSERT_EQ(line.exit_code, 0) << line.err;
  WriteTextFile(t.file, line.out);
  ::kill(cluster().coordinator_pid(), SIGHUP);
  ASSERT_TRUE(WaitFor(
      [&] { return ReadTextFile(log).find("tokens reloaded") != std::string::npos; }, 20'000));
  EXPECT_EQ(Cli({"submit", wf}, vera).exit_code, 0);
  // ada's token is gone from the file: the harness's own admin client is refused now.
  Result<v1::ListRunsResponse> runs = cluster().ListRuns();
  EXPECT_EQ(runs.status().code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(SecurityTest, ShellSyntaxInAParamReachesTheStageAsOneLiteralArgument) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string canary = cluster().dir().Join("pwned");
  std::string evil = StrCat("; rm -rf / ; $(touch ", canary, ") `touch ", canary, "` && echo x");
  std::string wf = cluster().WriteFile("evil.yaml",
                                       "name: evil\n"
                                       "params:\n"
                                       "  text: plain\n"
                                       "stages:\n"
                                       "  echo:\n"
                                       "    run: [lh-testjob, --print, '${params.text}']\n");
  CommandResult r = cluster().Cli({"submit", wf, "--set", "text=" + evil});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int64_t id = std::stoll(r.out);
  Result<v1::Run> run = cluster().WaitForRunEnd(id);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  r = cluster().Cli({"logs", StrCat(id), "echo"});
  EXPECT_EQ(r.out, evil + "\n");
  EXPECT_FALSE(std::filesystem::exists(canary));
}

TEST_F(SecurityTest, LongHauldRefusesToListenOffLoopbackWithoutTokensUnlessInsecure) {
  TempDir dir;
  CommandResult r = RunCommand(
      {BinPath("longhauld"), "--state-dir", dir.Join("s"), "--listen", "0.0.0.0:0"}, {}, 20'000);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out + r.err, HasSubstr("refusing to listen on 0.0.0.0:0, which is not a "
                                       "loopback address: without --tokens anyone"));
  EXPECT_FALSE(std::filesystem::exists(dir.Join("s/longhaul.db")));
}

TEST_F(SecurityTest, CliRefusesToSendATokenInPlaintextOffLoopback) {
  TempDir dir;
  // Nothing needs to listen there: the CLI refuses before it connects.
  CommandResult r = RunCommand({BinPath("longhaul"), "--coordinator", "192.0.2.2:7070", "runs"},
                               {{"LONGHAUL_TOKEN", "lh_secret"}}, 20'000);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("refusing to send the token (from $LONGHAUL_TOKEN) in plaintext "
                               "to 192.0.2.2:7070, which is not a loopback address"));
  EXPECT_THAT(r.err, Not(HasSubstr("lh_secret")));
  // 127.0.0.2 is loopback: the token goes (and nothing listens, so: unreachable).
  r = RunCommand({BinPath("longhaul"), "--coordinator", "127.0.0.2:1", "runs"},
                 {{"LONGHAUL_TOKEN", "lh_secret"}}, 20'000);
  EXPECT_EQ(r.exit_code, 4) << r.err;
}

}  // namespace
}  // namespace longhaul::testing
