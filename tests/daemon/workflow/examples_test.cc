// Every workflow shipped under workflows/ parses. Engine profiles (workflows/engines/) are
// not workflows and have their own format.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/fs.h"
#include "core/strings.h"
#include "daemon/workflow/workflow.h"
#include "tests/testing/test_util.h"

namespace longhaul::workflow {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> WorkflowFiles() {
  std::vector<std::string> files;
  fs::path root = fs::path(testing::SourceDir()) / "workflows";
  if (!fs::exists(root)) return files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_directory() && it->path().filename() == "engines") {
      it.disable_recursion_pending();
      continue;
    }
    std::string ext = it->path().extension().string();
    if (it->is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ExampleWorkflowsTest, EveryFileUnderWorkflowsParses) {
  std::vector<std::string> files = WorkflowFiles();
  ASSERT_FALSE(files.empty()) << "no workflow files under " << testing::SourceDir();
  for (const std::string& path : files) {
    Result<std::string> text = ReadFile(path);
    ASSERT_TRUE(text.ok()) << text.status();
    Result<Workflow> wf = ParseWorkflow(*text, path);
    EXPECT_TRUE(wf.ok()) << wf.status();
  }
}

TEST(ExampleWorkflowsTest, HelloIsADiamondPassingAnOutput) {
  std::string path = testing::SourceDir() + "/workflows/examples/hello.yaml";
  Result<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  Result<Workflow> wf = ParseWorkflow(*text, path);
  ASSERT_TRUE(wf.ok()) << wf.status();
  ASSERT_GE(wf->stages.size(), 3u);
  // The last stage joins two branches that share the first stage.
  const StageSpec& last = wf->stages.back();
  EXPECT_GE(last.needs.size(), 2u);
  bool uses_output = false;
  for (const StageSpec& s : wf->stages) {
    for (const std::string& arg : s.run) uses_output |= arg.find(".outputs.") != std::string::npos;
  }
  EXPECT_TRUE(uses_output);
}

}  // namespace
}  // namespace longhaul::workflow
