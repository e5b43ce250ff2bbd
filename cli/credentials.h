// What the CLI proves itself with, and the rule that keeps a token off the wire in plaintext.
//
// The token: --token-file FILE, else $LONGHAUL_TOKEN, else $LONGHAUL_TOKEN_FILE (the file's
// first line, whitespace trimmed). The CA to verify the coordinator's TLS certificate:
// --tls-ca FILE, else $LONGHAUL_TLS_CA; with one, the CLI connects over TLS.
#pragma once

#include <map>
#include <string>

#include "core/status.h"

namespace longhaul::cli {

struct ClientCredentials {
  std::string token;        // "" for none
  std::string token_from;   // where it came from, for messages: "$LONGHAUL_TOKEN", a path
  std::string tls_ca_file;  // "" for plaintext
  std::string tls_ca_pem;
};

// Errors name the file and what is wrong (missing, unreadable, empty, not PEM).
Result<ClientCredentials> ResolveCredentials(const std::string& token_file_flag,
                                             const std::string& tls_ca_flag,
                                             const std::map<std::string, std::string>& vars);

// FailedPrecondition when a token would go in plaintext to an address that is not loopback
// (127.0.0.0/8, ::1, localhost): the CLI refuses before connecting.
Status CheckTokenTransport(const std::string& address, const ClientCredentials& creds);

}  // namespace longhaul::cli
