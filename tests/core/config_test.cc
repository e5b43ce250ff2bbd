// The config file loader bound to CLI11 flags (core/config/), and the daemons' checks of
// their values (the agent's and longhauld's flag sets, with real files in a temp dir).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/lib/agent_flags.h"
#include "core/config/cli_config.h"
#include "core/config/config_checks.h"
#include "core/config/config_file.h"
#include "core/fs.h"
#include "daemon/server/coordinator_flags.h"
#include "tests/testing/test_util.h"

namespace longhaul::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A small program with one flag of each kind, parsed from `args` with `yaml` as its file.
struct Program {
  CLI::App app{"prog"};
  std::string listen = "127.0.0.1:7070";
  int64_t window = 20;
  bool insecure = false;
  std::vector<std::string> labels;
  std::string mode = "local";
  testing::TempDir tmp;
  std::unique_ptr<CliConfig> config;

  std::vector<std::string> Run(const std::string& yaml, std::vector<std::string> args = {}) {
    app.add_option("--listen", listen, "address");
    app.add_option("--event-window", window, "events");
    app.add_flag("--insecure", insecure, "a flag");
    app.add_option("--label", labels, "repeatable");
    app.add_option("--executor", mode, "choice")->check(CLI::IsMember({"local", "slurm"}));
    config = std::make_unique<CliConfig>(app, tmp.Join("absent.yaml"));
    std::string path = tmp.Join("prog.yaml");
    EXPECT_TRUE(WriteFileAtomic(path, yaml).ok());
    args.insert(args.begin(), {"--config", path});
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
    return config->Apply();
  }
};

TEST(CliConfigTest, FileSetsEveryKindOfFlag) {
  Program p;
  EXPECT_THAT(p.Run("listen: 0.0.0.0:9000\nevent-window: 7\ninsecure: true\n"
                    "label: [a=1, b=2]\nexecutor: slurm\n"),
              IsEmpty());
  EXPECT_EQ(p.listen, "0.0.0.0:9000");
  EXPECT_EQ(p.window, 7);
  EXPECT_TRUE(p.insecure);
  EXPECT_THAT(p.labels, ElementsAre("a=1", "b=2"));
  EXPECT_EQ(p.mode, "slurm");
  EXPECT_EQ(p.config->Where("event-window"), p.tmp.Join("prog.yaml") + ":2");
}

TEST(CliConfigTest, CommandLineWinsOverTheFile) {
  Program p;
  EXPECT_THAT(p.Run("listen: 0.0.0.0:9000\nevent-window: 7\n", {"--event-window", "9"}), IsEmpty());
  EXPECT_EQ(p.window, 9);
  EXPECT_EQ(p.listen, "0.0.0.0:9000");
  EXPECT_EQ(p.config->Where("event-window"), "--event-window");
  EXPECT_EQ(p.config->Where("executor"), "--executor (default)");
}

TEST(CliConfigTest, UnknownKeyNamesFileAndLine) {
  Program p;
  auto errors = p.Run("listen: 0.0.0.0:9000\n\n  # comment\nlisten-addr: x:1\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr(p.tmp.Join("prog.yaml") + ":4:1: unknown key 'listen-addr'"));
  EXPECT_EQ(p.listen, "0.0.0.0:9000");  // the good keys still apply
}

TEST(CliConfigTest, WrongTypesAreErrorsWithTheirLines) {
  Program p;
  auto errors = p.Run(
      "event-window: many\ninsecure: sometimes\nlisten: [a:1, b:2]\n"
      "executor: cloud\nlabel: {a: 1}\n");
  ASSERT_EQ(errors.size(), 1u);  // a mapping is a shape error: the file is not applied
  EXPECT_THAT(errors[0], HasSubstr("prog.yaml:5:8: 'label': expected a value or a list"));

  Program q;
  errors = q.Run("event-window: many\ninsecure: sometimes\nlisten: [a:1, b:2]\nexecutor: cloud\n");
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_THAT(errors[0], HasSubstr("prog.yaml:1:1: 'event-window': 'many' is not a valid INT"));
  EXPECT_THAT(errors[1], HasSubstr("prog.yaml:2:1: 'insecure': expected true or false"));
  EXPECT_THAT(errors[2], HasSubstr("prog.yaml:3:1: 'listen' takes one value, not a list"));
  EXPECT_THAT(errors[3], HasSubstr("prog.yaml:4:1: 'executor': 'cloud' is not a valid"));
  EXPECT_EQ(q.window, 20);
}

TEST(CliConfigTest, SyntaxErrorsAndRepeatedKeysNameTheLine) {
  auto bad = ParseConfigText("db: a\nlisten: x: y\n", "f.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("f.yaml:2:"));
  auto twice = ParseConfigText("db: a\ndb: b\n", "f.yaml");
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("f.yaml:2:1: 'db' is given twice"));
  auto empty = ParseConfigText("db:\n", "f.yaml");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("f.yaml:1:1: 'db' has no value"));
  auto comments = ParseConfigText("# nothing yet\n", "f.yaml");
  ASSERT_TRUE(comments.ok());
  EXPECT_THAT(comments->entries, IsEmpty());
}

TEST(CliConfigTest, MissingDefaultFileIsNoFileButMissingGivenOneIsAnError) {
  CLI::App app{"prog"};
  testing::TempDir tmp;
  CliConfig config(app, tmp.Join("absent.yaml"));
  app.parse(std::vector<std::string>{});
  EXPECT_THAT(config.Apply(), IsEmpty());
  EXPECT_EQ(config.path(), "");

  CLI::App app2{"prog"};
  CliConfig config2(app2, tmp.Join("absent.yaml"));
  app2.parse(std::vector<std::string>{tmp.Join("missing.yaml"), "--config"});
  auto errors = config2.Apply();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("missing.yaml"));
}

TEST(CliConfigTest, EffectiveConfigReadsBackAsTheSameValues) {
  Program p;
  ASSERT_THAT(p.Run("event-window: 7\nlabel: [a=1]\n", {"--insecure"}), IsEmpty());
  std::string effective = p.config->Effective();
  EXPECT_THAT(effective, HasSubstr("listen: \"127.0.0.1:7070\"  # --listen (default)"));
  EXPECT_THAT(effective, HasSubstr("insecure: true  # --insecure\n"));
  auto reread = ParseConfigText(effective, "effective");
  ASSERT_TRUE(reread.ok()) << reread.status();
  ASSERT_EQ(reread->entries.size(), 5u);
  EXPECT_EQ(reread->entries[0].values[0], "127.0.0.1:7070");
  EXPECT_EQ(reread->entries[1].values[0], "7");
  EXPECT_THAT(reread->entries[3].values, ElementsAre("a=1"));
}

TEST(ConfigChecksTest, AddressesDirsAndFiles) {
  EXPECT_TRUE(CheckHostPort("localhost:7000").ok());
  EXPECT_TRUE(CheckHostPort("[::1]:0").ok());
  EXPECT_FALSE(CheckHostPort("localhost").ok());
  EXPECT_FALSE(CheckHostPort("host:port").ok());
  EXPECT_FALSE(CheckHostPort("host:70000").ok());
  EXPECT_FALSE(CheckHostPort("::1:70").ok());
  testing::TempDir tmp;
  EXPECT_TRUE(CheckDirUsable(tmp.Join("a/b/c")).ok());
  ASSERT_TRUE(WriteFileAtomic(tmp.Join("file"), "x").ok());
  EXPECT_FALSE(CheckDirUsable(tmp.Join("file/sub")).ok());
  EXPECT_TRUE(CheckReadable(tmp.Join("file")).ok());
  EXPECT_FALSE(CheckReadable(tmp.Join("nofile")).ok());
}

TEST(DaemonFlagsTest, AgentListsEveryProblemWithWhereItCameFrom) {
  testing::TempDir tmp;
  std::string path = tmp.Join("agent.yaml");
  ASSERT_TRUE(WriteFileAtomic(path,
                              "coordinator: nohost\nheartbeat: soon\n"
                              "tls-cert: /nonexistent.pem\nmemory: lots\n"
                              "shared-path: [/lustre/, scratch]\n")
                  .ok());
  CLI::App app{"longhaul-agent"};
  agent::AgentFlags flags;
  agent::AddAgentFlags(app, &flags);
  CliConfig config(app, agent::kAgentConfigPath);
  app.parse(std::vector<std::string>{path, "--config"});
  ASSERT_THAT(config.Apply(), IsEmpty());
  auto errors = agent::CheckAgentFlags(&flags, config);
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  EXPECT_THAT(all, HasSubstr(path + ":1: address 'nohost'"));
  EXPECT_THAT(all, HasSubstr("--state-dir (default): required"));
  EXPECT_THAT(all, HasSubstr(path + ":2: 'soon'"));
  EXPECT_THAT(all, HasSubstr(path + ":3: --tls-cert, --tls-key and --tls-ca go together"));
  EXPECT_THAT(all, HasSubstr(path + ":3: cannot read /nonexistent.pem"));
  EXPECT_THAT(all, HasSubstr(path + ":4: "));
  EXPECT_THAT(all, HasSubstr(path + ":5: 'scratch': expected an absolute path such as /lustre"));
  EXPECT_EQ(flags.shared_paths[0], "/lustre") << "the trailing slash dropped";
}

// longhaul-agent's flags from `args` (last first, as CLI11 takes them) and their check's errors.
std::vector<std::string> CheckAgentArgs(std::vector<std::string> args, agent::AgentFlags* flags) {
  CLI::App app{"longhaul-agent"};
  agent::AddAgentFlags(app, flags);
  CliConfig config(app, agent::kAgentConfigPath);
  app.parse(args);
  std::vector<std::string> errors = config.Apply();
  if (!errors.empty()) return errors;
  return agent::CheckAgentFlags(flags, config);
}

TEST(DaemonFlagsTest, AgentSlurmClassMapsFromTheFileAndTheirErrors) {
  testing::TempDir tmp;
  std::string path = tmp.Join("agent.yaml");
  ASSERT_TRUE(WriteFileAtomic(path,
                              "coordinator: 127.0.0.1:1\n"
                              "slurm-class-qos: [\"high=urgent,low=scavenger\"]\n"
                              "slurm-class-partition: [high=gpu-prio]\n")
                  .ok());
  agent::AgentFlags flags;
  EXPECT_THAT(CheckAgentArgs({tmp.path(), "--state-dir", path, "--config"}, &flags), IsEmpty());
  EXPECT_EQ(flags.slurm.class_qos,
            (std::map<std::string, std::string>{{"high", "urgent"}, {"low", "scavenger"}}));
  EXPECT_EQ(flags.slurm.class_partition,
            (std::map<std::string, std::string>{{"high", "gpu-prio"}}));

  agent::AgentFlags bad;
  std::string all;
  for (const auto& e : CheckAgentArgs(
           {"--slurm-arg=--qos=long", "high=x", "--slurm-class-qos", "urgent=x",
            "--slurm-class-partition", tmp.path(), "--state-dir", "127.0.0.1:1", "--coordinator"},
           &bad)) {
    all += e + "\n";
  }
  EXPECT_THAT(all, HasSubstr("--slurm-class-partition: 'urgent=x': unknown class 'urgent' "
                             "(high, normal or low)"));
  EXPECT_THAT(all, HasSubstr("--slurm-class-qos: --slurm-arg=--qos=long sets --qos for every "
                             "job; map the classes, or pass it to sbatch, not both"));
}

TEST(DaemonFlagsTest, AgentDirsGivenRelativeAreMadeAbsolute) {
  CLI::App app{"longhaul-agent"};
  agent::AgentFlags flags;
  agent::AddAgentFlags(app, &flags);
  CliConfig config(app, agent::kAgentConfigPath);
  app.parse(std::vector<std::string>{"rel/data/", "--data-dir", "rel/agent", "--state-dir",
                                     "127.0.0.1:1", "--coordinator"});
  ASSERT_THAT(config.Apply(), IsEmpty());
  EXPECT_THAT(agent::CheckAgentFlags(&flags, config), IsEmpty());
  std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(flags.state_dir, cwd + "/rel/agent");
  EXPECT_EQ(flags.data_dir, cwd + "/rel/data");
}

TEST(DaemonFlagsTest, CoordinatorChecksDurationsAddressesAndSecurity) {
  testing::TempDir tmp;
  std::string path = tmp.Join("longhauld.yaml");
  ASSERT_TRUE(WriteFileAtomic(path, "state-dir: " + tmp.Join("state") +
                                        "\nlisten: 0.0.0.0:7070\nlost-after: forever\n")
                  .ok());
  CLI::App app{"longhauld"};
  server::CoordinatorFlags flags;
  server::AddCoordinatorFlags(app, &flags);
  CliConfig config(app, server::kCoordinatorConfigPath);
  app.parse(std::vector<std::string>{"0", "--heartbeat", path, "--config"});
  ASSERT_THAT(config.Apply(), IsEmpty());
  auto errors = server::CheckCoordinatorFlags(&flags, config);
  for (auto& e : server::CheckCoordinatorExposure(flags, config)) errors.push_back(e);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_THAT(errors[0], HasSubstr(path + ":3: "));             // lost-after
  EXPECT_THAT(errors[1], HasSubstr(path + ":2: "));             // off loopback, no tokens
  EXPECT_EQ(flags.options.scheduler.heartbeat_interval_ms, 0);  // --heartbeat 0 won
  EXPECT_EQ(flags.options.state_dir, tmp.Join("state"));
}

}  // namespace
}  // namespace longhaul::config
