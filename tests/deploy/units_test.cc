// The service units as shipped: their ExecStart lines, with the install paths swapped for the
// build's binaries and config files in a temp dir, start a real longhauld and agent that run
// a workflow. And the example configs: every key of each daemon, each accepted as it is.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "core/fs.h"
#include "core/strings.h"
#include "tests/deploy/units.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {
namespace {

using ::testing::HasSubstr;

TEST(UnitsTest, UnitsStartDaemonsThatRunAWorkflow) {
  auto coordinator_keys = ServiceKeys("longhauld.service");
  auto agent_keys = ServiceKeys("longhaul-agent.service");
  EXPECT_EQ(coordinator_keys["Restart"], "on-failure");
  EXPECT_EQ(agent_keys["Restart"], "on-failure");
  EXPECT_EQ(coordinator_keys["User"], "longhaul");
  EXPECT_EQ(agent_keys["StateDirectory"], "longhaul");
  EXPECT_EQ(agent_keys["KillMode"], "process");       // stages outlive a restart of the unit
  EXPECT_EQ(agent_keys.count("PrivateDevices"), 0u);  // GPUs stay visible

  TempDir tmp;
  std::string coord_config = tmp.Join("longhauld.yaml");
  WriteTextFile(coord_config, StrCat("state-dir: ", tmp.Join("coordinator"),
                                     "\nlisten: 127.0.0.1:0\nhttp: 127.0.0.1:0\n"));
  std::vector<std::string> argv = ExecStart("longhauld.service", coord_config);
  ASSERT_THAT(argv, ::testing::ElementsAre(BinPath("longhauld"), "--config", coord_config));
  auto coordinator = Subprocess::Start(argv, {}, tmp.Join("longhauld.log"));
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  std::string addr_file = tmp.Join("coordinator/coordinator.addr");
  ASSERT_TRUE(WaitFor([&] { return !ReadTextFile(addr_file).empty(); }, 20'000))
      << ReadTextFile(tmp.Join("longhauld.log"));
  std::string address = SplitLines(ReadTextFile(addr_file))[0];

  std::string agent_config = tmp.Join("agent.yaml");
  WriteTextFile(agent_config, StrCat("coordinator: ", address, "\nstate-dir: ", tmp.Join("agent"),
                                     "\ncpus: 2\ngpus: 0\nid: unit0\n"));
  auto agent = Subprocess::Start(ExecStart("longhaul-agent.service", agent_config), {},
                                 tmp.Join("agent.log"));
  ASSERT_TRUE(agent.ok()) << agent.status();

  std::string workflow = tmp.Join("wf.yaml");
  WriteTextFile(workflow,
                "name: units\nstages:\n"
                "  first:\n    run: [/bin/sh, -c, 'echo one']\n"
                "  second:\n    needs: [first]\n    run: [/bin/sh, -c, 'echo two']\n");
  std::map<std::string, std::string> env = {{"LONGHAUL_COORDINATOR", address}};
  CommandResult r = RunCommand({BinPath("longhaul"), "submit", workflow, "--watch"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << ReadTextFile(tmp.Join("agent.log"))
                            << ReadTextFile(tmp.Join("longhauld.log"));
  r = RunCommand({BinPath("longhaul"), "agents"}, env);
  EXPECT_THAT(r.out, HasSubstr("unit0"));
  (*agent)->Signal(SIGTERM);
  (*coordinator)->Signal(SIGTERM);
  EXPECT_TRUE((*agent)->Wait(20'000).has_value());
  EXPECT_TRUE((*coordinator)->Wait(20'000).has_value());
}

// `--check-config` on the example file prints the effective config: the same keys, in the
// same order, as the example (so the example names every key), and exits 0.
void CheckExample(const std::string& binary, const std::string& example,
                  const std::vector<std::string>& extra) {
  TempDir tmp;
  std::vector<std::string> argv = {
      BinPath(binary),  "--config",    SourceDir() + "/deploy/config/" + example,
      "--check-config", "--state-dir", tmp.Join("state")};
  argv.insert(argv.end(), extra.begin(), extra.end());
  CommandResult r = RunCommand(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto keys = [](const std::string& text, bool commented) {
    std::vector<std::string> out;
    for (const std::string& line : SplitLines(text)) {
      std::string l = line;
      if (commented && l.rfind("# ", 0) == 0) l = l.substr(2);
      static const std::regex kKey("^([a-z][a-z0-9-]*): .*");
      std::smatch m;
      if (std::regex_match(l, m, kKey)) out.push_back(m[1]);
    }
    return out;
  };
  EXPECT_EQ(keys(r.out, true), keys(ReadTextFile(SourceDir() + "/deploy/config/" + example), true))
      << r.out;
}

TEST(UnitsTest, ExampleConfigsNameEveryKeyAndAreValid) {
  CheckExample("longhauld", "longhauld.yaml", {});
  CheckExample("longhaul-agent", "agent.yaml", {});
}

TEST(UnitsTest, CheckConfigListsEveryErrorWithItsLine) {
  TempDir tmp;
  std::string config = tmp.Join("longhauld.yaml");
  WriteTextFile(config,
                "listen: nowhere\nlost-after: 3 minutes\nhttps: 127.0.0.1:8080\n"
                "tokens: " +
                    tmp.Join("absent.tokens") + "\n");
  CommandResult r = RunCommand({BinPath("longhauld"), "--config", config, "--check-config",
                                "--state-dir", tmp.Join("state")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(config + ":3:1: unknown key 'https'"));
  EXPECT_THAT(r.err, HasSubstr(config + ":1: address 'nowhere'"));
  EXPECT_THAT(r.err, HasSubstr(config + ":2: "));
  EXPECT_THAT(r.err, HasSubstr(config + ":4: cannot read " + tmp.Join("absent.tokens")));
  EXPECT_FALSE(PathExists(tmp.Join("state")));  // nothing created, no database opened
}

}  // namespace
}  // namespace longhaul::testing
