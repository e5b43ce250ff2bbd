// RenderConfigYaml: dotted keys nest, values keep the type YAML gives them, and bad pairs are
// refused naming the pair.
#include "stages/command/config_file.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace longhaul::command {
namespace {

TEST(ConfigFileTest, DottedKeysNestAndValuesKeepTheirYamlType) {
  auto yaml = RenderConfigYaml({"model.target_model_path=/models/t", "data.max_length=2048",
                                "model.aux_hidden_state_layer_ids=[1, 29, 57]",
                                "training.learning_rate=1.0e-4", "training.compact_teacher=true",
                                "run_id=\"5\"", "data.chat_template=deepseek-v3",
                                "model.vocab_mapping_path="});
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  YAML::Node doc = YAML::Load(*yaml);
  EXPECT_EQ(doc["model"]["target_model_path"].as<std::string>(), "/models/t");
  EXPECT_EQ(doc["data"]["max_length"].as<int>(), 2048);
  EXPECT_EQ(doc["model"]["aux_hidden_state_layer_ids"].size(), 3u);
  EXPECT_EQ(doc["model"]["aux_hidden_state_layer_ids"][2].as<int>(), 57);
  EXPECT_DOUBLE_EQ(doc["training"]["learning_rate"].as<double>(), 1e-4);
  EXPECT_TRUE(doc["training"]["compact_teacher"].as<bool>());
  EXPECT_EQ(doc["data"]["chat_template"].as<std::string>(), "deepseek-v3");
  EXPECT_EQ(doc["model"]["vocab_mapping_path"].as<std::string>(), "");
  // A quoted value stays a string for the reader: "5", not 5.
  EXPECT_NE(yaml->find("run_id: \"5\""), std::string::npos) << *yaml;
  // Sections in the order first named.
  EXPECT_LT(yaml->find("model:"), yaml->find("data:")) << *yaml;
  EXPECT_LT(yaml->find("data:"), yaml->find("training:")) << *yaml;
}

TEST(ConfigFileTest, BadPairsAreRefusedNamingThePair) {
  auto error = [](std::vector<std::string> sets) {
    auto r = RenderConfigYaml(sets);
    return r.ok() ? std::string("ok") : std::string(r.status().message());
  };
  EXPECT_EQ(error({"training.num_epochs"}), "--config-set 'training.num_epochs': expected KEY=VALUE");
  EXPECT_EQ(error({"training..lr=1"}), "--config-set 'training..lr=1': empty key segment");
  EXPECT_EQ(error({"a.b=1", "a.b=2"}), "--config-set 'a.b=2': 'a.b' is given twice");
  EXPECT_EQ(error({"model=x", "model.path=y"}),
            "--config-set 'model.path=y': 'model' is already a value");
  EXPECT_EQ(error({"model.path=y", "model=x"}),
            "--config-set 'model=x': 'model' is already a section");
  EXPECT_NE(error({"a=[1, 2"}).find("--config-set 'a=[1, 2': the value is not valid YAML"),
            std::string::npos);
}

}  // namespace
}  // namespace longhaul::command
