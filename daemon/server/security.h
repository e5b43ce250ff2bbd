// What longhauld checks about its own set-up before it listens (docs/security.md): a client
// API that is reachable from other machines needs tokens, TLS for those tokens, and agents
// that prove who they are; --insecure waives each of these, loudly.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::server {

struct SecurityOptions {
  std::string tokens_file;    // "ROLE NAME sha256:HEX" lines; empty: no tokens
  bool insecure = false;      // allow what the checks below refuse
  std::string tls_cert_file;  // PEM certificate (chain) of the coordinator
  std::string tls_key_file;   // its PEM private key
  std::string agent_listen;   // a separate listener for agents, mutual TLS; empty: none
  std::string agent_ca_file;  // the CA that signs agent certificates
  // Read by the coordinator from the files above when it starts, for every listener that
  // serves TLS (the gRPC client API, the HTTP API).
  std::string tls_cert_pem;
  std::string tls_key_pem;
  std::string agent_ca_pem;
};

// FailedPrecondition with what to do when the set-up would expose the cluster: a client
// listener off loopback without tokens, tokens there without TLS, agents there without mutual
// TLS (each unless `insecure`); InvalidArgument for flags that need each other. On success,
// the lines longhauld should log about its exposure (warnings for what --insecure allowed).
Result<std::vector<std::string>> CheckSecurity(const std::string& listen,
                                               const SecurityOptions& security);

// The same for the HTTP listener on `http_listen` (empty: none): off loopback it needs tokens
// and TLS (--tls-cert/--tls-key, which it shares with the client API), each unless `insecure`.
// On success, the lines to log (warnings for what --insecure allowed).
Result<std::vector<std::string>> CheckHttpSecurity(const std::string& http_listen,
                                                   const SecurityOptions& security);

// Reads the PEM files named in `security` into its *_pem fields; errors name the file.
Status LoadTlsFiles(SecurityOptions* security);

}  // namespace longhaul::server
