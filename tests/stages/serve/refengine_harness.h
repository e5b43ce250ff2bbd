// Test helpers for the client stages against the real lh-refengine: lh-serve started with
// the repository's refengine profile, and the stage binaries run as processes.
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/strings.h"
#include "tests/stages/common/stage_events.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {

// lh-refengine and the other stage binaries are found on PATH through the build's bin dir,
// as the agent arranges for real stages.
inline std::map<std::string, std::string> StageEnv(const std::string& events) {
  const char* path = std::getenv("PATH");
  return {{"PATH", BinDir() + ":" + (path ? path : "/usr/bin:/bin")}, {"LONGHAUL_EVENTS", events}};
}

// One lh-serve process; its events, log and engine logs live in `dir`/`name`.*.
class ServeProcess {
 public:
  ServeProcess(const TempDir& dir, std::string name) : dir_(dir), name_(std::move(name)) {}

  void Start(std::vector<std::string> args) {
    std::vector<std::string> argv = {BinPath("lh-serve"), "--profile", "refengine",
                                     "--log-dir",         dir_.path(), "--no-echo"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto p = Subprocess::Start(argv, StageEnv(events()), dir_.Join(name_ + ".log"));
    ASSERT_TRUE(p.ok()) << p.status();
    proc_ = std::move(*p);
  }
  bool WaitReady(int64_t timeout_ms = 60'000) {
    return WaitFor([&] { return Ready(); }, timeout_ms);
  }
  bool Ready() const { return HasReadyEvent(events()); }
  std::string Output(const std::string& name) const { return OutputValue(events(), name); }
  pid_t EnginePid() const {
    std::smatch m;
    std::string log = Log();
    if (std::regex_search(log, m, std::regex("started, pid ([0-9]+)"))) return std::stoi(m[1]);
    return 0;
  }
  int Stop() {
    proc_->Signal(SIGTERM);
    return ExitCode(30'000);
  }
  int ExitCode(int64_t timeout_ms) {
    auto st = proc_->Wait(timeout_ms);
    if (!st) return -1;
    return WIFEXITED(*st) ? WEXITSTATUS(*st) : 128 + WTERMSIG(*st);
  }
  std::string Log() const { return ReadTextFile(dir_.Join(name_ + ".log")); }
  std::string events() const { return dir_.Join(name_ + ".events.jsonl"); }

 private:
  const TempDir& dir_;
  std::string name_;
  std::unique_ptr<Subprocess> proc_;
};

// Runs a stage binary to completion with events to `events`.
inline CommandResult RunStage(const std::string& binary, std::vector<std::string> args,
                              const std::string& events, int64_t timeout_ms = 120'000) {
  std::vector<std::string> argv = {BinPath(binary)};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, StageEnv(events), timeout_ms);
}

// A prompts file of `n` single-turn conversations, cycling through a few questions.
inline void WriteQuestions(const std::string& path, int n) {
  const char* qs[] = {"What is the capital of France?",
                      "Why is the sky blue?",
                      "Explain how a bridge carries load.",
                      "How do I sort a list?",
                      "Think step by step: what is 17 times 23?",
                      "Describe the water cycle.",
                      "Tell me about an animal that lives in the wetland.",
                      "Where is the capital?"};
  std::string text;
  for (int i = 0; i < n; ++i) {
    text += nlohmann::json{{"id", StrCat("q", i)},
                           {"conversations", {{{"role", "user"}, {"content", qs[i % 8]}}}}}
                .dump() +
            "\n";
  }
  WriteTextFile(path, text);
}

}  // namespace longhaul::testing
