// The examples run: every workflow that README.md or docs/ tell a user to submit is submitted
// here the way the docs do it (`longhaul submit workflows/...` from the source tree, with the
// docs' --set values), on one agent declaring 2 CPUs like the standard machine, and must end
// succeeded within a ceiling far above its normal time: a hang fails, a slow machine does not.
// The workflows that cannot run here (GPUs, engines this machine lacks) are listed with the
// reason and reported as skipped. The list checks itself: a workflow the docs name, or a file
// under workflows/, that is neither run nor skipped with a reason fails the docs test below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

struct Example {
  std::string path;               // as the docs write it, relative to the source tree
  std::vector<std::string> sets;  // the --set NAME=VALUE the docs give it
  std::string skip;               // why it cannot run here; empty: it runs
  // Its normal wall time, measured by this test (submit to end, agent --cpus 2), and the
  // ceiling the test allows: about 10x, to catch a hang, not noise.
  int64_t normal_ms = 0;
  int64_t ceiling_ms = 0;
  // Stages meant to end otherwise than a task succeeded or a service stopped (a sweep's items
  // stopped early, and what only they needed skipped), with the end each is meant to have.
  std::map<std::string, v1::StageStatus> ends = {};
};

// The examples. A new workflow in the docs or under workflows/ must be added here. The times
// were measured with this test on the standard machine (2 cores, shared with other builds).
const std::vector<Example>& Examples() {
  static const auto* examples = new std::vector<Example>{
      // docs/cli.md, docs/caching.md: the four-stage diamond of lh-testjob; 3.1 s.
      {"workflows/examples/hello.yaml", {}, "", 3'000, 30'000},
      // README.md (the quick start), docs/slurm.md, docs/security.md: the campaign on
      // lh-refengine; 20.4 s.
      {"workflows/eagle3-local.yaml", {}, "", 20'000, 200'000},
      // docs/sweeps.md: the same swept over two engines and three draft lengths, 24 stages;
      // 49.2 s. It once hung for ever on 2 CPUs (docs/architecture.md, "Services and their
      // consumers").
      {"workflows/examples/eagle3-sweep.yaml", {}, "", 49'000, 490'000},
      // docs/sweeps.md: six synthetic trainers under early_stop, three stopped at the first
      // rung with their evaluations skipped; 9.7 s.
      {"workflows/examples/sweep-early-stop.yaml",
       {},
       "",
       10'000,
       100'000,
       {{"train-1e0", v1::STAGE_STOPPED_EARLY},
        {"train-3e0", v1::STAGE_STOPPED_EARLY},
        {"train-1e1", v1::STAGE_STOPPED_EARLY},
        {"eval-1e0", v1::STAGE_SKIPPED},
        {"eval-3e0", v1::STAGE_SKIPPED},
        {"eval-1e1", v1::STAGE_SKIPPED}}},
      {"workflows/examples/gpu-smoke.yaml",
       {},
       "needs a GPU node with python3 and PyTorch (docs/gpu-campaign.md); the standard machine "
       "has no GPU"},
      {"workflows/examples/gpu-preflight.yaml",
       {},
       "runs lh-gpucheck, which needs an NVIDIA driver (libcuda.so.1) and a GPU (docs/gpus.md); "
       "the standard machine has neither. gpu_fault_test runs lh-gpucheck on the fake driver"},
      {"workflows/examples/gpu-idle.yaml",
       {},
       "holds a GPU with PyTorch so that longhauld sees it idle (docs/gpus.md); the standard "
       "machine has no GPU. gpu_fault_test stops an idle stage on the fake NVML"},
      {"workflows/eagle3-campaign.yaml",
       {},
       "needs an 8-GPU node with vLLM, SGLang and SpecForge and a target model "
       "(docs/gpu-campaign.md); the standard machine has none of them"},
  };
  return *examples;
}

// A workflow file's path as the docs write it ("workflows/examples/hello.yaml"). Engine
// profiles (workflows/engines/) are lh-serve's, not workflows.
const std::regex& WorkflowPathPattern() {
  static const auto* pattern = new std::regex(R"(workflows/[A-Za-z0-9_./-]+\.ya?ml)");
  return *pattern;
}
bool IsEngineProfile(const std::string& path) { return StartsWith(path, "workflows/engines/"); }

// The workflow files named in `text`.
std::set<std::string> WorkflowPathsIn(const std::string& text) {
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), WorkflowPathPattern());
       it != std::sregex_iterator(); ++it) {
    if (!IsEngineProfile(it->str())) out.insert(it->str());
  }
  return out;
}

// gtest names a parameter by its path, not its bytes.
void PrintTo(const Example& e, std::ostream* os) { *os << e.path; }

const Example* FindExample(const std::string& path) {
  for (const Example& e : Examples()) {
    if (e.path == path) return &e;
  }
  return nullptr;
}

TEST(ExamplesDocsTest, EveryWorkflowTheDocsNameIsRunOrSkippedWithAReason) {
  namespace fs = std::filesystem;
  // Where each path is named: README.md, docs/*.md, and the files under workflows/ themselves.
  std::map<std::string, std::string> named_in;
  std::vector<std::string> pages = {"README.md"};
  for (const auto& entry : fs::directory_iterator(SourceDir() + "/docs")) {
    if (entry.path().extension() == ".md")
      pages.push_back("docs/" + entry.path().filename().string());
  }
  for (const std::string& page : pages) {
    std::string text = ReadTextFile(SourceDir() + "/" + page);
    ASSERT_FALSE(text.empty()) << page;
    for (const std::string& path : WorkflowPathsIn(text)) named_in.emplace(path, page + " names");
  }
  ASSERT_TRUE(named_in.count("workflows/examples/eagle3-sweep.yaml"))
      << "the scan finds nothing: it no longer reads the docs as they are written";
  for (const auto& entry : fs::recursive_directory_iterator(SourceDir() + "/workflows")) {
    std::string rel = fs::relative(entry.path(), SourceDir()).string();
    if (entry.is_regular_file() && std::regex_match(rel, WorkflowPathPattern()) &&
        !IsEngineProfile(rel)) {
      named_in.emplace(rel, "workflows/ holds");
    }
  }
  for (const auto& [path, where] : named_in) {
    if (FindExample(path) == nullptr) {
      ADD_FAILURE() << where << " " << path
                    << ", which tests/integration/examples_test.cc neither runs nor skips with a "
                       "reason: add it to Examples()";
    }
  }
  for (const Example& e : Examples()) {
    EXPECT_TRUE(fs::is_regular_file(SourceDir() + "/" + e.path))
        << e.path << " is in Examples() but not in the source tree";
    if (e.skip.empty()) {
      EXPECT_GT(e.normal_ms, 0) << e.path;
      EXPECT_GE(e.ceiling_ms, 5 * e.normal_ms) << e.path << ": a ceiling that close catches noise";
    }
  }
}

// Each stage ends as the workflow intends on a fresh cluster: a task succeeded, a service was
// stopped once its consumers were done, unless the example says otherwise (Example::ends).
v1::StageStatus IntendedEnd(const Example& e, const v1::Stage& s) {
  auto it = e.ends.find(s.name());
  if (it != e.ends.end()) return it->second;
  return s.kind() == "service" ? v1::STAGE_STOPPED : v1::STAGE_SUCCEEDED;
}

class ExamplesRunTest : public ClusterTest, public ::testing::WithParamInterface<Example> {
 protected:
  // The stages that did not end as intended, with their attempts' reasons and the tail of
  // each one's stdout and stderr.
  std::string NotAsIntended(const Example& e, const v1::Run& run) {
    std::string out;
    for (const v1::Stage& s : run.stages()) {
      if (s.status() == IntendedEnd(e, s)) continue;
      out += StrCat("\n  ", s.name(), ": ", StageStatusName(s.status()), " (wanted ",
                    StageStatusName(IntendedEnd(e, s)), ")", s.reason().empty() ? "" : ": ",
                    s.reason());
      for (const v1::Attempt& a : s.attempts()) {
        out += StrCat("\n    attempt ", a.number(), ": ", AttemptStateName(a.state()), " ",
                      a.reason());
      }
      if (s.attempts_size() == 0) continue;
      std::vector<std::string> logs = {"logs", std::to_string(run.id()), s.name(), "--tail",
                                       "2000"};
      CommandResult stdout_tail = cluster().Cli(logs);
      logs.push_back("--stderr");
      CommandResult stderr_tail = cluster().Cli(logs);
      out += StrCat("\n    ---- stdout (tail)\n", stdout_tail.out, stdout_tail.err,
                    "\n    ---- stderr (tail)\n", stderr_tail.out, stderr_tail.err);
    }
    return out;
  }
};

TEST_P(ExamplesRunTest, SubmittedAsTheDocsSaySucceedsOnATwoCpuAgent) {
  const Example& e = GetParam();
  if (!e.skip.empty()) GTEST_SKIP() << e.path << ": " << e.skip;
  ClusterOptions o;
  o.cpus = 2;  // the standard machine
  o.log_level = "info";
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  // From the source tree, with the path as the docs write it.
  std::vector<std::string> argv = {"/usr/bin/env",      "-C",     SourceDir(),
                                   BinPath("longhaul"), "submit", e.path};
  for (const std::string& set : e.sets) {
    argv.push_back("--set");
    argv.push_back(set);
  }
  auto start = std::chrono::steady_clock::now();
  CommandResult submit = RunCommand(argv, cluster().CliEnv());
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  int64_t id = std::stoll(submit.out);
  Result<v1::Run> run = cluster().WaitForRunEnd(id, e.ceiling_ms);
  int64_t took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  ASSERT_TRUE(run.ok()) << e.path << " did not end within its ceiling of " << e.ceiling_ms / 1000
                        << " s (normally " << e.normal_ms / 1000
                        << " s): " << run.status().message();
  std::cout << e.path << ": " << RunStatusName(run->status()) << " in " << took_ms << " ms (normal "
            << e.normal_ms << " ms, ceiling " << e.ceiling_ms << " ms)\n";
  RecordProperty("took_ms", std::to_string(took_ms));
  EXPECT_EQ(run->status(), v1::RUN_SUCCEEDED)
      << e.path << ": " << run->reason()
      << "; stages that did not end as intended:" << NotAsIntended(e, *run);
  if (run->status() == v1::RUN_SUCCEEDED) {
    EXPECT_EQ(NotAsIntended(e, *run), "");
  }
}

std::string ExampleTestName(const ::testing::TestParamInfo<Example>& info) {
  std::string name = std::filesystem::path(info.param.path).stem().string();
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Workflows, ExamplesRunTest, ::testing::ValuesIn(Examples()),
                         ExampleTestName);

}  // namespace
}  // namespace longhaul::testing
