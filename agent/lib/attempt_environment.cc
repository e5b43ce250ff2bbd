#include "agent/lib/attempt_environment.h"

#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/command.h"
#include "core/engine_arg.h"
#include "core/fs.h"
#include "core/hash.h"
#include "core/strings.h"

namespace longhaul::agent {
namespace {

// (mtime in ns, size) of `path`; nullopt when it cannot be read.
std::optional<std::pair<int64_t, int64_t>> ProbeFileStamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::pair<int64_t, int64_t>{
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
      static_cast<int64_t>(st.st_size)};
}

std::string StampText(const std::string& path) {
  auto stamp = ProbeFileStamp(path);
  return stamp ? StrCat(path, "@", stamp->first, ":", stamp->second) : StrCat(path, "@none");
}

}  // namespace

EnvironmentProbe::EnvironmentProbe(std::string agent_version, int64_t timeout_ms)
    : agent_version_(std::move(agent_version)) {
  run_command_ = [timeout_ms](const std::vector<std::string>& argv, const std::string& path,
                              const std::string& profiles_env) -> Result<std::string> {
    CommandInput input;
    input.env["PATH"] = path;
    input.env["LONGHAUL_ENGINE_PROFILES"] = profiles_env;
    ASSIGN_OR_RETURN(CommandResult r, RunCommand(argv, timeout_ms, input));
    if (r.exit_code != 0) {
      std::string err(StripWhitespace(r.err));
      return absl::FailedPreconditionError(StrCat(CommandLine(argv), " exited with ", r.exit_code,
                                                  err.empty() ? "" : StrCat(": ", err)));
    }
    return r.out;
  };
}

std::string EnvironmentProbe::ResolveExecutable(const std::string& program,
                                                const std::string& path) {
  if (program.empty()) return "";
  if (program.find('/') != std::string::npos) {
    return ::access(program.c_str(), X_OK) == 0 ? program : "";
  }
  for (std::string_view dir : StrSplit(path, ':')) {
    std::string candidate = StrCat(dir.empty() ? "." : dir, "/", program);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

Result<std::string> EnvironmentProbe::HashExecutable(const std::string& path) {
  auto stamp = ProbeFileStamp(path);
  if (!stamp) return absl::NotFoundError(StrCat("cannot stat ", path));
  auto it = hashes_.find(path);
  if (it != hashes_.end() && it->second.mtime_ns == stamp->first &&
      it->second.size == stamp->second) {
    return it->second.sha256;
  }
  ASSIGN_OR_RETURN(std::string sha, Sha256File(path));
  ++files_hashed_;
  hashes_[path] = HashEntry{stamp->first, stamp->second, sha};
  return sha;
}

namespace {

std::string EngineQueryKey(const std::string& exe_path, const std::vector<std::string>& command,
                           const std::string& profiles_env) {
  return StrCat(StampText(exe_path), "|", StrJoin(command, " "), "|", profiles_env);
}

}  // namespace

Result<std::string> EnvironmentProbe::AskEngine(const EngineQuery& q) {
  ++versions_asked_;
  Result<std::string> out = run_command_(q.command, q.path, q.profiles_env);
  if (out.ok()) {
    std::string first(StripWhitespace(out->substr(0, out->find('\n'))));
    if (first.empty()) {
      out = absl::FailedPreconditionError(StrCat(CommandLine(q.command), " printed nothing"));
    } else {
      out = first;
      v1::EngineVersionReport& r = reports_[q.profile];
      r.set_profile(q.profile);
      r.set_version(first);
      r.set_checked_at_ms(now_ms_ ? now_ms_() : 0);
    }
  }
  return out;
}

Result<std::string> EnvironmentProbe::EngineVersion(const std::vector<std::string>& argv,
                                                    const std::string& path,
                                                    const std::string& profiles_env,
                                                    const std::string& exe_path) {
  if (exe_path.empty()) return absl::NotFoundError(StrCat(argv[0], " was not found"));
  // lh-serve owns profiles: it finds this one as the stage would and runs its version_command.
  EngineQuery q;
  q.profile = *EngineProfileArg(argv);
  q.command = {exe_path, "--profile", q.profile};
  for (const std::string& dir : EngineProfileDirsArg(argv)) {
    q.command.push_back("--profiles-dir");
    q.command.push_back(dir);
  }
  q.command.push_back("--engine-version");
  q.path = path;
  q.profiles_env = profiles_env;
  std::string key = EngineQueryKey(exe_path, q.command, profiles_env);
  auto it = versions_.find(key);
  if (it != versions_.end()) return it->second;
  Result<std::string> out = AskEngine(q);
  if (!out.ok()) return out;  // asked again next time
  versions_.emplace(key, out);
  if (known_.emplace(key, q).second) SaveKnown();
  return out;
}

void EnvironmentProbe::SaveKnown() {
  if (known_file_.empty()) return;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [key, q] : known_) {
    list.push_back({{"profile", q.profile},
                    {"command", q.command},
                    {"path", q.path},
                    {"profiles_env", q.profiles_env}});
  }
  // Best effort: without it a restarted agent learns the version at the next attempt.
  (void)WriteFileAtomic(known_file_, list.dump());
}

Status EnvironmentProbe::AskKnownEngines() {
  if (known_file_.empty() || !PathExists(known_file_)) return OkStatus();
  ASSIGN_OR_RETURN(std::string text, ReadFile(known_file_));
  nlohmann::json list = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) {
    return absl::DataLossError(StrCat(known_file_,
                                      ": not a JSON list; the engines it named are "
                                      "asked again when an attempt uses them"));
  }
  for (const auto& item : list) {
    if (!item.is_object() || !item.value("command", nlohmann::json()).is_array()) continue;
    EngineQuery q;
    q.profile = item.value("profile", "");
    for (const auto& arg : item["command"]) {
      if (arg.is_string()) q.command.push_back(arg.get<std::string>());
    }
    q.path = item.value("path", "");
    q.profiles_env = item.value("profiles_env", "");
    if (q.profile.empty() || q.command.empty()) continue;
    std::string key = EngineQueryKey(q.command[0], q.command, q.profiles_env);
    known_.emplace(key, q);
    Result<std::string> v = AskEngine(q);
    if (v.ok()) versions_.emplace(key, *v);
  }
  return OkStatus();
}

std::vector<v1::EngineVersionReport> EnvironmentProbe::KnownVersions() const {
  std::vector<v1::EngineVersionReport> out;
  for (const auto& [profile, r] : reports_) out.push_back(r);
  return out;
}

v1::AttemptEnvironment EnvironmentProbe::Probe(const std::vector<std::string>& argv,
                                               const std::string& path,
                                               const std::string& profiles_env) {
  v1::AttemptEnvironment env;
  env.set_agent_version(agent_version_);
  if (argv.empty()) return env;
  env.set_executable(argv[0]);
  std::string exe = ResolveExecutable(argv[0], path);
  if (exe.empty()) {
    env.add_notes(StrCat("executable: ", argv[0], " was not found on the stage's PATH"));
  } else {
    env.set_executable_path(exe);
    Result<std::string> sha = HashExecutable(exe);
    if (sha.ok()) {
      env.set_executable_sha256(*sha);
    } else {
      env.add_notes(StrCat("executable: ", sha.status().message()));
    }
  }
  if (std::optional<std::string> profile = EngineProfileArg(argv)) {
    env.set_engine_profile(*profile);
    Result<std::string> version = EngineVersion(argv, path, profiles_env, exe);
    if (version.ok()) {
      env.set_engine_version(*version);
    } else {
      env.add_notes(StrCat("engine version: ", version.status().message()));
    }
  }
  return env;
}

}  // namespace longhaul::agent
