#include "stages/serve/serve_app.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <tuple>

#include "core/duration.h"
#include "core/fs.h"
#include "core/strings.h"
#include "stages/common/endpoint.h"
#include "stages/serve/profile_finder.h"

namespace longhaul::stages {
namespace {

bool IsWildcard(const std::string& host) { return host == "0.0.0.0" || host == "::"; }

bool IsIpAddress(const std::string& host) {
  in6_addr a6;
  in_addr a4;
  return ::inet_pton(AF_INET, host.c_str(), &a4) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

std::string HostForUrl(const std::string& host) {
  return host.find(':') != std::string::npos ? StrCat("[", host, "]") : host;
}

}  // namespace

Result<int> PickFreePort(const std::string& host) {
  bool v6 = host.find(':') != std::string::npos;
  int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoStatus("socket for", host, errno);
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    if (::inet_pton(AF_INET6, host.c_str(), &a->sin6_addr) != 1) {
      ::close(fd);
      return absl::InvalidArgumentError(StrCat("bad IPv6 address '", host, "'"));
    }
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    if (::inet_pton(AF_INET, host.c_str(), &a->sin_addr) != 1) {
      ::close(fd);
      return absl::InvalidArgumentError(
          StrCat("--host '", host, "': expected an IP address to bind"));
    }
    len = sizeof *a;
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus("bind a free port on", host, err);
  }
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus("getsockname on", host, err);
  }
  ::close(fd);
  return v6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
            : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

Result<SupervisorConfig> PrepareServe(const ServeOptions& o, const std::string& exe_dir) {
  const char* env_dirs = std::getenv("LONGHAUL_ENGINE_PROFILES");
  auto dirs =
      ProfileSearchPath(o.profiles_dirs, env_dirs ? env_dirs : "", BuiltinProfilesDir(), exe_dir);
  ASSIGN_OR_RETURN(std::string path, FindProfile(o.profile, dirs));
  ASSIGN_OR_RETURN(EngineProfile profile, LoadEngineProfile(path));
  for (auto [flag, text, slot] :
       {std::tuple{"--load-timeout", &o.load_timeout, &profile.load_timeout_ms},
        std::tuple{"--probe-timeout", &o.probe_timeout, &profile.probe_timeout_ms},
        std::tuple{"--stop-grace", &o.stop_grace, &profile.stop_grace_ms}}) {
    if (text->empty()) continue;
    auto ms = ParseDurationMs(*text);
    if (!ms.ok() || *ms <= 0) {
      return absl::InvalidArgumentError(StrCat(flag, " '", *text, "': expected a duration > 0"));
    }
    *slot = *ms;
  }

  // Variables: the profile's defaults, then the dedicated flags, then --set.
  TemplateVars vars = profile.defaults;
  const std::set<std::string> builtins = {"model", "drafter", "host", "port"};
  for (const auto& b : builtins) vars.emplace(b, "");
  // On an agent with --advertise-host, bind where other nodes reach this one, so that the
  // service's dependents may run on other agents.
  if (vars["host"].empty() && !o.node_host.empty()) {
    vars["host"] = IsIpAddress(o.node_host) ? o.node_host : "0.0.0.0";
  }
  if (vars["host"].empty()) vars["host"] = "127.0.0.1";
  if (!o.model.empty()) vars["model"] = o.model;
  if (!o.drafter.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(o.drafter, ec)) {
      return absl::InvalidArgumentError(StrCat("--drafter ", o.drafter, ": no such directory"));
    }
    vars["drafter"] = o.drafter;
  }
  if (!o.host.empty()) vars["host"] = o.host;
  bool port_set = false;
  for (const auto& kv : o.sets) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(StrCat("--set '", kv, "': expected KEY=VALUE"));
    }
    std::string key = kv.substr(0, eq);
    if (profile.defaults.count(key) == 0 && builtins.count(key) == 0) {
      std::vector<std::string> known(builtins.begin(), builtins.end());
      for (const auto& [k, v] : profile.defaults) {
        if (builtins.count(k) == 0) known.push_back(k);
      }
      return absl::InvalidArgumentError(
          StrCat("--set ", key, ": profile '", profile.name, "' (", path,
                 ") has no such variable (known: ", StrJoin(known, ", "), ")"));
    }
    vars[key] = kv.substr(eq + 1);
    if (key == "port") port_set = true;
  }
  // A default may name other variables ("served_model_name: ${model}"); expand them now that
  // every flag has been applied. A few passes settle chains; a cycle is left as an error.
  for (int pass = 0; pass < 5; ++pass) {
    bool changed = false;
    for (auto& [k, v] : vars) {
      if (v.find("${") == std::string::npos) continue;
      ASSIGN_OR_RETURN(std::string expanded,
                       SubstituteVars(v, vars, StrCat(path, ": defaults.", k)));
      if (expanded != v) changed = true;
      v = std::move(expanded);
    }
    if (!changed) break;
  }
  for (const auto& [k, v] : vars) {
    if (v.find("${") != std::string::npos) {
      return absl::InvalidArgumentError(
          StrCat(path, ": defaults.", k, " refers to itself through '", v, "'"));
    }
  }
  if (vars["model"].empty()) {
    return absl::InvalidArgumentError(
        StrCat("no model: give --model (profile '", profile.name, "' has no default)"));
  }
  int port = 0;
  if (port_set) {
    char* end = nullptr;
    long v = std::strtol(vars["port"].c_str(), &end, 10);
    if (*end != '\0' || v < 1 || v > 65535) {
      return absl::InvalidArgumentError(StrCat("--set port=", vars["port"], ": not a port"));
    }
    port = static_cast<int>(v);
  } else if (profile.port) {
    port = *profile.port;
  } else {
    ASSIGN_OR_RETURN(port, PickFreePort(vars["host"]));
  }
  vars["port"] = std::to_string(port);

  SupervisorConfig cfg;
  ASSIGN_OR_RETURN(cfg.command, RenderCommand(profile, vars));
  ASSIGN_OR_RETURN(cfg.model,
                   SubstituteVars(profile.probe_model, vars, StrCat(path, ": probe.model")));
  const std::string& host = vars["host"];
  std::string check_host = IsWildcard(host) ? (host == "::" ? "::1" : "127.0.0.1") : host;
  ASSIGN_OR_RETURN(cfg.check_url,
                   ParseEndpoint(StrCat("http://", HostForUrl(check_host), ":", port)));
  std::string advertise = o.advertise_host;
  if (advertise.empty()) {
    advertise = host;
    if (IsWildcard(host) && !o.node_host.empty()) {
      advertise = o.node_host;
    } else if (IsWildcard(host)) {
      char name[256] = {0};
      if (::gethostname(name, sizeof name - 1) == 0) advertise = name;
    }
  }
  cfg.endpoint = StrCat("http://", HostForUrl(advertise), ":", port);
  cfg.log_dir = o.log_dir;
  cfg.echo = o.echo;
  cfg.profile = std::move(profile);
  return cfg;
}

}  // namespace longhaul::stages
