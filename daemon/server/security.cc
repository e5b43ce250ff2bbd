#include "daemon/server/security.h"

#include "core/fs.h"
#include "core/strings.h"
#include "daemon/auth/address.h"

namespace longhaul::server {

Result<std::vector<std::string>> CheckSecurity(const std::string& listen,
                                               const SecurityOptions& s) {
  if (s.tls_cert_file.empty() != s.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  bool tls = !s.tls_cert_file.empty();
  if (!s.agent_listen.empty() && (s.agent_ca_file.empty() || !tls)) {
    return absl::InvalidArgumentError(
        "--agent-listen needs --agent-ca (the CA that signs agent certificates) and "
        "--tls-cert/--tls-key (the coordinator's own certificate)");
  }
  if (s.agent_listen.empty() && !s.agent_ca_file.empty()) {
    return absl::InvalidArgumentError("--agent-ca is used only with --agent-listen");
  }
  std::vector<std::string> notes;
  bool tokens = !s.tokens_file.empty();
  if (auth::IsLoopback(listen)) {
    if (!tokens) {
      notes.push_back(StrCat("no --tokens: serving the client API on loopback only (", listen,
                             "); every user of this machine may submit, cancel and read runs"));
    }
    if (s.agent_listen.empty()) {
      notes.push_back(StrCat("agents connect in plaintext on ", listen,
                             " and are trusted by the id they give"));
    }
    return notes;
  }
  auto refuse = [&](const std::string& why, const std::string& fix) -> Status {
    return absl::FailedPreconditionError(
        StrCat("refusing to listen on ", listen, ", which is not a loopback address: ", why, "; ",
               fix, ", or pass --insecure to accept the risk (docs/security.md)"));
  };
  std::vector<std::string> waived;
  if (!tokens) {
    if (!s.insecure) {
      return refuse("without --tokens anyone who reaches it could run any program on every agent",
                    "give --tokens FILE");
    }
    waived.push_back("no tokens: anyone who reaches it may run any program on every agent");
  } else if (!tls) {
    if (!s.insecure) {
      return refuse("tokens would cross the network in plaintext", "give --tls-cert and --tls-key");
    }
    waived.push_back("no TLS: tokens cross the network in plaintext");
  }
  if (s.agent_listen.empty()) {
    if (!s.insecure) {
      return refuse("agents connecting there would be trusted by the id they claim",
                    "give --agent-listen with --agent-ca so that agents prove their id");
    }
    waived.push_back("agents are trusted by the id they claim");
  }
  for (const std::string& w : waived) notes.push_back(StrCat("--insecure on ", listen, ": ", w));
  return notes;
}

Result<std::vector<std::string>> CheckHttpSecurity(const std::string& listen,
                                                   const SecurityOptions& s) {
  std::vector<std::string> notes;
  if (listen.empty() || auth::IsLoopback(listen)) return notes;
  auto refuse = [&](const std::string& why, const std::string& fix) -> Status {
    return absl::FailedPreconditionError(StrCat(
        "refusing to serve HTTP on ", listen, ", which is not a loopback address: ", why, "; ", fix,
        ", reach it through an SSH tunnel (ssh -L 8080:127.0.0.1:8080 HOST), or pass "
        "--insecure to accept the risk (docs/security.md)"));
  };
  if (s.tokens_file.empty()) {
    if (!s.insecure) {
      return refuse("without --tokens anyone who reaches it could run any program on every agent",
                    "give --tokens FILE and --tls-cert/--tls-key");
    }
    notes.push_back(StrCat("--insecure on HTTP ", listen,
                           ": no tokens: anyone who reaches it may run any program on every "
                           "agent"));
  }
  if (s.tls_cert_file.empty()) {
    if (!s.insecure) {
      return refuse("tokens and the login cookie would cross the network in plaintext",
                    "give --tls-cert and --tls-key");
    }
    notes.push_back(StrCat("--insecure on HTTP ", listen,
                           ": no TLS: tokens and cookies cross the network in plaintext"));
  }
  return notes;
}

Status LoadTlsFiles(SecurityOptions* s) {
  auto load = [](const std::string& path, const char* flag, std::string* out) -> Status {
    if (path.empty()) return OkStatus();
    Result<std::string> text = ReadFile(path);
    if (!text.ok()) return Annotate(text.status(), StrCat(flag, " ", path));
    if (text->find("-----BEGIN ") == std::string::npos) {
      return absl::InvalidArgumentError(StrCat(flag, " ", path, ": not a PEM file"));
    }
    *out = std::move(*text);
    return OkStatus();
  };
  RETURN_IF_ERROR(load(s->tls_cert_file, "--tls-cert", &s->tls_cert_pem));
  RETURN_IF_ERROR(load(s->tls_key_file, "--tls-key", &s->tls_key_pem));
  RETURN_IF_ERROR(load(s->agent_ca_file, "--agent-ca", &s->agent_ca_pem));
  return OkStatus();
}

}  // namespace longhaul::server
