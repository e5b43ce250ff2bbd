// What an attempt runs on, as the agent finds it when it starts the attempt (docs/cli.md,
// "show"; docs/engine-profiles.md, "Engine versions"): the stage's executable resolved on the
// stage's PATH and its SHA-256, the agent's version, and for an `lh-serve --profile NAME` stage
// the version the profile's `version_command` prints.
//
// The engine version comes from lh-serve itself (`lh-serve --profile NAME --engine-version`, which
// finds the profile as the stage will and runs its `version_command`): profiles are stage code.
// Both lookups are cached for the agent's life, so a 1 GB binary is not hashed per attempt and
// an engine is not asked per attempt: the hash by (path, mtime, size), the engine version by
// (lh-serve's path, mtime and size, its --profile and --profiles-dir, the stage's
// $LONGHAUL_ENGINE_PROFILES). An engine upgraded in place is seen after the agent restarts.
// Owned by the agent's event loop; not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "longhaul/v1/agent.pb.h"

namespace longhaul::agent {

class EnvironmentProbe {
 public:
  // Runs `lh-serve --profile NAME ... --engine-version` (argv[0] resolved) with the stage's PATH
  // and $LONGHAUL_ENGINE_PROFILES -> its stdout, or an error. Injected by tests; the default
  // runs it with core/command.h and `timeout_ms`.
  using CommandFn = std::function<Result<std::string>(
      const std::vector<std::string>&, const std::string& path, const std::string& profiles_env)>;

  EnvironmentProbe(std::string agent_version, int64_t timeout_ms = 10'000);
  void set_clock(std::function<int64_t()> now_ms) { now_ms_ = std::move(now_ms); }
  void set_command_runner(CommandFn fn) { run_command_ = std::move(fn); }

  // Where the engine invocations seen so far are kept (one JSON file), so that a restarted
  // agent asks them again at start (AskKnownEngines) and reports the versions in its Hello.
  void set_known_file(std::string path) { known_file_ = std::move(path); }
  // Reads the known file and runs each invocation again (an upgraded engine is seen before any
  // attempt uses it). A missing file is none; an unreadable one is logged by the caller.
  Status AskKnownEngines();
  // The newest version of each profile asked so far, for Hello.
  std::vector<v1::EngineVersionReport> KnownVersions() const;

  // `argv` as the stage runs it, `path` the stage's PATH, `profiles_env` the stage's
  // $LONGHAUL_ENGINE_PROFILES. What cannot be found out goes to `notes`, never an error.
  v1::AttemptEnvironment Probe(const std::vector<std::string>& argv, const std::string& path,
                               const std::string& profiles_env);

  // argv[0] resolved as execvp would: a name with '/' as it is, else the first executable
  // file of that name on `path`. "" when none.
  static std::string ResolveExecutable(const std::string& program, const std::string& path);

  // The SHA-256 of the file at `path`, from the cache while its mtime and size are unchanged.
  Result<std::string> HashExecutable(const std::string& path);
  int64_t files_hashed() const { return files_hashed_; }
  int64_t versions_asked() const { return versions_asked_; }

 private:
  struct HashEntry {
    int64_t mtime_ns = 0;
    int64_t size = 0;
    std::string sha256;
  };
  Result<std::string> EngineVersion(const std::vector<std::string>& argv, const std::string& path,
                                    const std::string& profiles_env, const std::string& exe_path);

  std::string agent_version_;
  CommandFn run_command_;
  std::map<std::string, HashEntry> hashes_;
  // One way of asking an engine's version, as kept in the known file.
  struct EngineQuery {
    std::string profile;
    std::vector<std::string> command;  // lh-serve ... --engine-version
    std::string path;
    std::string profiles_env;
  };
  Result<std::string> AskEngine(const EngineQuery& q);
  void SaveKnown();

  std::map<std::string, Result<std::string>> versions_;     // by cache key
  std::map<std::string, EngineQuery> known_;                // by cache key
  std::map<std::string, v1::EngineVersionReport> reports_;  // by profile
  std::string known_file_;
  std::function<int64_t()> now_ms_;
  int64_t files_hashed_ = 0;
  int64_t versions_asked_ = 0;
};

}  // namespace longhaul::agent
