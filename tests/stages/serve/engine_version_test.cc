// A profile's version_command and `lh-serve --engine-version` (EngineVersion): the first line the
// command prints, or an error that says why.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "stages/serve/engine_profile.h"
#include "stages/serve/serve_app.h"
#include "tests/testing/test_util.h"

namespace longhaul::stages {
namespace {

constexpr char kProfileHead[] = "name: v\nargv: [engine, --port, '${port}']\n";

std::string EngineVersionOf(testing::TempDir& dir, const std::string& version_line) {
  testing::WriteTextFile(dir.Join("v.yaml"), StrCat(kProfileHead, version_line));
  ServeOptions o;
  o.profile = "v";
  o.profiles_dirs = {dir.path()};
  Result<std::string> v = EngineVersion(o, "", 5'000);
  return v.ok() ? *v : StrCat("error: ", v.status().message());
}

TEST(EngineVersionTest, TheProfileSaysHowAndTheFirstLineIsTheVersion) {
  Result<EngineProfile> p = ParseEngineProfile(
      StrCat(kProfileHead, "version_command: [python3, -c, 'print(1)']\n"), "v.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->version_command, (std::vector<std::string>{"python3", "-c", "print(1)"}));
  EXPECT_FALSE(ParseEngineProfile(StrCat(kProfileHead, "version_command: []\n"), "v.yaml").ok());

  testing::TempDir dir;
  EXPECT_EQ(EngineVersionOf(dir, "version_command: [/bin/sh, -c, 'echo 0.9.0; echo more']\n"),
            "0.9.0");
}

TEST(EngineVersionTest, NoCommandAFailureOrNothingPrintedSayWhy) {
  testing::TempDir dir;
  EXPECT_NE(EngineVersionOf(dir, "").find("has no version_command"), std::string::npos);
  std::string failed = EngineVersionOf(
      dir,
      "version_command: [/bin/sh, -c, 'echo Traceback >&2; echo No module vllm >&2; exit 1']\n");
  ASSERT_NE(failed.find("exited with 1: "), std::string::npos) << failed;
  EXPECT_EQ(failed.substr(failed.find("exited with 1: ")), "exited with 1: No module vllm")
      << "only stderr's last line";
  EXPECT_NE(EngineVersionOf(dir, "version_command: [/bin/true]\n").find("printed nothing"),
            std::string::npos);
}

}  // namespace
}  // namespace longhaul::stages
