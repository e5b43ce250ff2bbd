// TLS for the client API and mutual TLS for agents, with certificates from
// deploy/gen-certs.sh: an agent is accepted only with a certificate from the cluster CA, still
// valid, that names the id it claims.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void GenCerts(const std::string& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {SourceDir() + "/deploy/gen-certs.sh", dir});
  CommandResult r = RunCommand(args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
}

std::vector<std::string> AgentTls(const std::string& dir, const std::string& name,
                                  const std::string& ca_dir) {
  return {"--tls-cert", StrCat(dir, "/agent-", name, ".crt"),
          "--tls-key",  StrCat(dir, "/agent-", name, ".key"),
          "--tls-ca",   ca_dir + "/ca.crt"};
}

class SecureClusterTest : public ClusterTest {
 protected:
  void SetUp() override {
    ca_ = certs_.Join("ca");
    other_ = certs_.Join("other");
    ASSERT_NO_FATAL_FAILURE(
        GenCerts(ca_, {"--host", "127.0.0.2", "--agent", "n0", "--agent", "n1"}));
    ASSERT_NO_FATAL_FAILURE(GenCerts(ca_, {"--agent", "old", "--not-before", "20200101000000Z",
                                           "--not-after", "20200102000000Z"}));
    ASSERT_NO_FATAL_FAILURE(GenCerts(other_, {"--agent", "n1"}));
    ClusterOptions o;
    o.coordinator_flags = {"--tls-cert",     ca_ + "/coordinator.crt",
                           "--tls-key",      ca_ + "/coordinator.key",
                           "--agent-listen", "127.0.0.1:0",
                           "--agent-ca",     ca_ + "/ca.crt"};
    o.client_tls_ca_file = ca_ + "/ca.crt";
    o.agent_addr_file = "agent.addr";
    o.per_agent_flags = {AgentTls(ca_, "n0", ca_)};
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
    agent_addr_ = SplitLines(ReadTextFile(cluster().coordinator_state_dir() + "/agent.addr"))[0];
  }

  // Starts a longhaul-agent with `flags` that dials `addr`; returns its log's path.
  std::string StartHostileAgent(const std::string& name, const std::string& id,
                                const std::string& addr, std::vector<std::string> flags) {
    std::string log = cluster().dir().Join("logs/hostile-" + name + ".log");
    std::vector<std::string> argv = {BinPath("longhaul-agent"),
                                     "--coordinator",
                                     addr,
                                     "--state-dir",
                                     cluster().dir().Join("hostile-" + name),
                                     "--id",
                                     id,
                                     "--cpus",
                                     "1",
                                     "--gpus",
                                     "0",
                                     "--log-level",
                                     "debug"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto p = Subprocess::Start(argv, {}, log);
    EXPECT_TRUE(p.ok()) << p.status();
    if (p.ok()) hostile_.push_back(std::move(*p));
    return log;
  }

  // Waits until the agent has failed three times to open its stream, then checks that it
  // never got in.
  void ExpectNeverConnects(const std::string& log, const std::string& id) {
    EXPECT_TRUE(WaitFor(
        [&] {
          std::string text = ReadTextFile(log);
          size_t count = 0;
          for (size_t at = 0;
               (at = text.find("cannot reach the coordinator", at)) != std::string::npos; ++at)
            ++count;
          return count >= 3;
        },
        30'000))
        << ReadTextFile(log);
    EXPECT_THAT(ReadTextFile(log), Not(HasSubstr("connected to")));
    Result<std::vector<v1::AgentInfo>> agents = cluster().ListAgents();
    ASSERT_TRUE(agents.ok()) << agents.status();
    for (const auto& a : *agents) EXPECT_NE(a.id(), id) << "agent " << id << " got in";
    Result<std::string> rows =
        cluster().Query(StrCat("SELECT count(*) FROM agents WHERE id='", id, "'"));
    ASSERT_TRUE(rows.ok()) << rows.status();
    EXPECT_EQ(*rows, "0");
  }

  TempDir certs_;
  std::string ca_, other_, agent_addr_;
  std::vector<std::unique_ptr<Subprocess>> hostile_;
};

TEST_F(SecureClusterTest, ClientApiOverTlsAndAgentWithItsOwnCertificateRunsStages) {
  std::string wf = cluster().WriteFile("hello.yaml",
                                       "name: hello\nstages:\n  greet:\n"
                                       "    run: [lh-testjob, --print, hello]\n");
  CommandResult r = cluster().Cli({"submit", wf, "--watch"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Without the CA the CLI cannot complete the TLS handshake: unreachable, nothing sent.
  r = RunCommand({BinPath("longhaul"), "--coordinator", cluster().address(), "runs"}, {}, 20'000);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_THAT(ReadTextFile(cluster().dir().Join("logs/longhauld.log")),
              HasSubstr("agents connect on 127.0.0.1:"));
}

TEST_F(SecureClusterTest, AgentWithoutACertificateIsRefused) {
  std::string log = StartHostileAgent("nocert", "n1", agent_addr_, {});
  ExpectNeverConnects(log, "n1");
}

TEST_F(SecureClusterTest, AgentWithACertificateFromAnotherCaIsRefused) {
  std::vector<std::string> tls = AgentTls(other_, "n1", ca_);
  std::string log = StartHostileAgent("otherca", "n1", agent_addr_, tls);
  ExpectNeverConnects(log, "n1");
}

TEST_F(SecureClusterTest, AgentWithAnExpiredCertificateIsRefused) {
  std::string log = StartHostileAgent("expired", "old", agent_addr_, AgentTls(ca_, "old", ca_));
  ExpectNeverConnects(log, "old");
}

TEST_F(SecureClusterTest, AgentClaimingAnotherIdThanItsCertificateIsRefused) {
  std::string log = StartHostileAgent("liar", "n1", agent_addr_, AgentTls(ca_, "n0", ca_));
  std::string coordinator_log = cluster().dir().Join("logs/longhauld.log");
  EXPECT_TRUE(WaitFor(
      [&] {
        return ReadTextFile(coordinator_log)
                   .find(
                       "it claims id 'n1' but its certificate is for "
                       "'n0'") != std::string::npos;
      },
      30'000))
      << ReadTextFile(log);
  Result<std::vector<v1::AgentInfo>> agents = cluster().ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  for (const auto& a : *agents) EXPECT_NE(a.id(), "n1");
  EXPECT_EQ(*cluster().Query("SELECT count(*) FROM agents WHERE id='n1'"), "0");
}

TEST_F(SecureClusterTest, TheClientPortDoesNotServeAgentsOnceThereIsAnAgentListener) {
  std::string log =
      StartHostileAgent("clientport", "n1", cluster().address(), AgentTls(ca_, "n1", ca_));
  ExpectNeverConnects(log, "n1");
}

}  // namespace
}  // namespace longhaul::testing
