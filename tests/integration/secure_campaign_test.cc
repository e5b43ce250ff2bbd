// The whole set-up of docs/security.md on loopback: tokens, TLS for the client API and an agent
// with its own certificate from deploy/gen-certs.sh. The local campaign and its pivot run as
// they do without any of it; callers without the right token change nothing, and the database
// afterwards holds only what the operator did (the fixture runs integrity_check).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"
#include "tests/integration/cluster.h"
#include "tests/integration/tokens.h"

namespace longhaul::testing {
namespace {

using ::testing::HasSubstr;

class SecureCampaignTest : public ClusterTest {};

TEST_F(SecureCampaignTest, TheCampaignAndItsPivotRunWithTokensTlsAndAgentCertificates) {
  TempDir certs;
  CommandResult gen = RunCommand(
      {SourceDir() + "/deploy/gen-certs.sh", certs.path(), "--agent", "n0"});
  ASSERT_EQ(gen.exit_code, 0) << gen.out << gen.err;
  Tokens t = MakeTokens(certs, {{"viewer", "vera"}, {"operator", "olga"}});
  ClusterOptions o;
  o.cpus = 4;
  o.coordinator_flags = {"--tokens",       t.file,
                         "--tls-cert",     certs.Join("coordinator.crt"),
                         "--tls-key",      certs.Join("coordinator.key"),
                         "--agent-listen", "127.0.0.1:0",
                         "--agent-ca",     certs.Join("ca.crt")};
  o.client_token = t.by_name["olga"];
  o.client_tls_ca_file = certs.Join("ca.crt");
  o.agent_addr_file = "agent.addr";
  o.per_agent_flags = {{"--tls-cert", certs.Join("agent-n0.crt"), "--tls-key",
                        certs.Join("agent-n0.key"), "--tls-ca", certs.Join("ca.crt")}};
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));

  std::string workflow = SourceDir() + "/workflows/eagle3-local.yaml";
  CommandResult r = cluster().Cli({"submit", workflow}, 60'000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int64_t first = std::stoll(r.out);
  Result<v1::Run> a = cluster().WaitForRunEnd(first, 240'000);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->status(), v1::RUN_SUCCEEDED) << DescribeRun(*a);
  for (const auto& s : a->stages()) {
    for (const auto& att : s.attempts()) EXPECT_EQ(att.agent_id(), "n0") << s.name();
  }

  // The hostile callers, over the same TLS: no token, an unknown one, a viewer's.
  std::vector<std::string> base = {BinPath("longhaul"), "--coordinator", cluster().address(),
                                   "--tls-ca", certs.Join("ca.crt")};
  auto cli = [&](std::vector<std::string> args, std::map<std::string, std::string> env) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, env, 30'000);
  };
  std::string pivot_id = std::to_string(first);
  r = cli({"pivot", pivot_id, "--set", "spec_engine=refengine"}, {});
  EXPECT_EQ(r.exit_code, 6) << r.err;
  r = cli({"pivot", pivot_id, "--set", "spec_engine=refengine"},
          {{"LONGHAUL_TOKEN", "lh_not_a_token_of_ours"}});
  EXPECT_EQ(r.exit_code, 6) << r.err;
  r = cli({"pivot", pivot_id, "--set", "spec_engine=refengine"},
          {{"LONGHAUL_TOKEN", t.by_name["vera"]}});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_THAT(r.err, HasSubstr("permission denied"));
  EXPECT_EQ(*cluster().Query("SELECT count(*) FROM runs"), "1");

  // The operator's pivot reuses everything upstream, as on an open cluster.
  r = cluster().Cli({"pivot", pivot_id, "--set", "spec_engine=refengine"}, 60'000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int64_t pivot = std::stoll(r.out);
  Result<v1::Run> b = cluster().WaitForRunEnd(pivot, 240'000);
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(b->status(), v1::RUN_SUCCEEDED) << DescribeRun(*b);
  int cached = 0;
  for (const auto& s : b->stages()) cached += s.status() == v1::STAGE_CACHED;
  EXPECT_GE(cached, 4) << DescribeRun(*b);

  // Only the operator's two mutations are in the audit trail.
  std::string rows;
  ASSERT_TRUE(WaitFor(
      [&] {
        Result<std::string> q =
            cluster().Query("SELECT principal || ' ' || action || ' ' || result FROM audit "
                            "ORDER BY id");
        rows = q.ok() ? *q : "";
        return SplitLines(rows).size() >= 2;
      },
      20'000))
      << rows;
  EXPECT_EQ(rows, "olga SubmitRun OK\nolga PivotRun OK");
  EXPECT_EQ(*cluster().Query("SELECT count(*) FROM runs"), "2");
}

}  // namespace
}  // namespace longhaul::testing
