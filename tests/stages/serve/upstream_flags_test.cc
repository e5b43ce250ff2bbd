// The command lines the project hands to vLLM, SGLang and SpecForge use only what the pinned
// upstream versions define. The accepted flags, config keys and speculative-config keys are
// kept as data under tests/stages/serve/data/upstream/, each file naming the upstream file and
// commit it was read from (docs/engine-profiles.md, "Upstream versions"). A profile or a
// campaign stage that gains a flag upstream does not define fails here, naming the flag.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "core/strings.h"
#include "stages/serve/engine_profile.h"
#include "tests/testing/test_util.h"

namespace longhaul::stages {
namespace {

std::string DataPath(const std::string& name) {
  return testing::SourceDir() + "/tests/stages/serve/data/upstream/" + name;
}

// The non-comment lines of a data file, each split into words.
std::vector<std::vector<std::string>> Lines(const std::string& name) {
  std::string text = testing::ReadTextFile(DataPath(name));
  EXPECT_FALSE(text.empty()) << "missing or empty: " << DataPath(name);
  std::vector<std::vector<std::string>> lines;
  for (const std::string& line : StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> words;
    for (const std::string& w : StrSplit(line, ' ')) {
      if (!w.empty()) words.push_back(w);
    }
    lines.push_back(words);
  }
  return lines;
}

std::set<std::string> Accepted(const std::string& name) {
  std::set<std::string> out;
  for (const auto& words : Lines(name)) out.insert(words.begin(), words.end());
  return out;
}

bool IsFlag(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-' && std::isalpha(static_cast<unsigned char>(arg.back())) &&
         arg.find("${") == std::string::npos && arg != "--";
}

// The flags in `argv` ("--name" of "--name=value") that `accepted` lacks.
std::vector<std::string> Unknown(const std::vector<std::string>& argv,
                                 const std::set<std::string>& accepted) {
  std::vector<std::string> out;
  for (const std::string& arg : argv) {
    std::string flag = arg.substr(0, arg.find('='));
    if (IsFlag(flag) && accepted.count(flag) == 0) out.push_back(flag);
  }
  return out;
}

// Every argv template of a profile, optional sections included.
std::vector<std::string> ProfileArgv(const EngineProfile& p) {
  std::vector<std::string> argv = p.argv;
  for (const ArgvSection& s : p.optional) argv.insert(argv.end(), s.argv.begin(), s.argv.end());
  return argv;
}

struct Engine {
  std::string list;                  // data file of accepted flags
  std::vector<std::string> command;  // how the profile must start; its flags follow
};

const std::map<std::string, Engine>& Engines() {
  static const auto* engines = new std::map<std::string, Engine>{
      {"vllm", {"vllm-serve.txt", {"vllm", "serve"}}},
      {"sglang", {"sglang-launch-server.txt", {"python3", "-m", "sglang.launch_server"}}}};
  return *engines;
}

// `argv` after `command`, which it must start with.
std::vector<std::string> After(const std::vector<std::string>& argv,
                               const std::vector<std::string>& command) {
  EXPECT_TRUE(argv.size() >= command.size() &&
              std::equal(command.begin(), command.end(), argv.begin()))
      << "the profile does not start with " << StrJoin(command, " ");
  return std::vector<std::string>(argv.begin() + std::min(argv.size(), command.size()),
                                  argv.end());
}

TEST(UpstreamFlagsTest, EngineProfilesUseOnlyFlagsTheEnginesDefine) {
  for (const auto& [engine, e] : Engines()) {
    auto p = LoadEngineProfile(testing::SourceDir() + "/workflows/engines/" + engine + ".yaml");
    ASSERT_TRUE(p.ok()) << p.status();
    std::set<std::string> accepted = Accepted(e.list);
    EXPECT_GT(accepted.size(), 100u) << e.list;
    std::vector<std::string> argv = After(ProfileArgv(*p), e.command);
    EXPECT_GE(argv.size(), 10u);
    EXPECT_EQ(Unknown(argv, accepted), std::vector<std::string>{})
        << "workflows/engines/" << engine << ".yaml uses flags that " << e.list
        << " (the pinned upstream version) does not define";
  }
}

TEST(UpstreamFlagsTest, VllmSpeculativeConfigUsesItsKeys) {
  auto p = LoadEngineProfile(testing::SourceDir() + "/workflows/engines/vllm.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<std::string> argv = ProfileArgv(*p);
  auto at = std::find(argv.begin(), argv.end(), "--speculative-config");
  ASSERT_NE(at, argv.end());
  ASSERT_NE(at + 1, argv.end());
  std::string json = *(at + 1);
  std::set<std::string> accepted = Accepted("vllm-speculative-config.txt");
  std::regex key(R"re("([A-Za-z_]+)"\s*:)re");
  int keys = 0;
  for (std::sregex_iterator it(json.begin(), json.end(), key), end; it != end; ++it, ++keys) {
    EXPECT_TRUE(accepted.count((*it)[1])) << "--speculative-config key " << (*it)[1]
                                          << " is not in vllm-speculative-config.txt";
  }
  EXPECT_GE(keys, 3);
  EXPECT_NE(json.find(R"("method": "eagle3")"), std::string::npos) << json;
}

// The stages of the GPU campaign that run SpecForge: the flags of prepare_hidden_states.py and
// of `specforge SUBCOMMAND`, and the keys lh-finetune writes into the trainer's config.
TEST(UpstreamFlagsTest, CampaignUsesOnlyWhatSpecForgeDefines) {
  std::set<std::string> prepare = Accepted("specforge-prepare-hidden-states.txt");
  std::set<std::string> config_keys = Accepted("specforge-config-keys.txt");
  std::map<std::string, std::set<std::string>> cli;
  for (const auto& words : Lines("specforge-cli.txt")) {
    cli[words[0]] = std::set<std::string>(words.begin() + 1, words.end());
  }
  YAML::Node wf = YAML::LoadFile(testing::SourceDir() + "/workflows/eagle3-campaign.yaml");
  std::set<std::string> seen;
  for (const auto& stage : wf["stages"]) {
    std::string name = stage.first.as<std::string>();
    std::vector<std::string> run = stage.second["run"].as<std::vector<std::string>>();
    auto sep = std::find(run.begin(), run.end(), "--");
    std::vector<std::string> ours(run.begin(), sep);
    std::vector<std::string> cmd(sep == run.end() ? sep : sep + 1, run.end());
    for (size_t i = 0; i + 1 < ours.size(); ++i) {
      if (ours[i] != "--config-set") continue;
      std::string key = ours[i + 1].substr(0, ours[i + 1].find('='));
      EXPECT_TRUE(config_keys.count(key)) << name << ": --config-set " << key
                                          << " is not a key of SpecForge's config";
      seen.insert("config");
    }
    for (size_t i = 0; i < cmd.size(); ++i) {
      if (EndsWith(cmd[i], "/prepare_hidden_states.py")) {
        std::vector<std::string> args(cmd.begin() + i + 1, cmd.end());
        EXPECT_EQ(Unknown(args, prepare), std::vector<std::string>{})
            << name << ": flags prepare_hidden_states.py does not define";
        seen.insert("prepare");
      }
    }
    if (cmd.size() >= 2 && cmd[0] == "specforge") {
      ASSERT_TRUE(cli.count(cmd[1])) << name << ": no subcommand specforge " << cmd[1];
      std::vector<std::string> args(cmd.begin() + 2, cmd.end());
      EXPECT_EQ(Unknown(args, cli[cmd[1]]), std::vector<std::string>{})
          << name << ": flags `specforge " << cmd[1] << "` does not define";
      seen.insert(cmd[1]);
    }
  }
  // The checks above ran on the stages they are meant for.
  EXPECT_EQ(seen, (std::set<std::string>{"config", "prepare", "train", "export"}));
}

// The check itself: a flag upstream does not define is reported, '=' values and templates
// are not mistaken for flags.
TEST(UpstreamFlagsTest, AnUnknownFlagIsReported) {
  auto p = ParseEngineProfile(R"(
name: sglang
argv: [python3, -m, sglang.launch_server, --model-path, "${model}", --tp-size, "${tp}",
       "--port=${port}", "${extra_args...}"]
optional:
  - when: drafter
    argv: [--speculative-algorithm, EAGLE3, --speculative-draft-model-paht, "${drafter}"]
defaults: {tp: "1", extra_args: ""}
)",
                              "typo.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  const Engine& sglang = Engines().at("sglang");
  EXPECT_EQ(Unknown(After(ProfileArgv(*p), sglang.command), Accepted(sglang.list)),
            std::vector<std::string>{"--speculative-draft-model-paht"});
  EXPECT_EQ(Unknown({"--tp", "8"}, Accepted("sglang-launch-server.txt")),
            std::vector<std::string>{"--tp"});  // an abbreviation is not the flag
}

}  // namespace
}  // namespace longhaul::stages
