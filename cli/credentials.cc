#include "cli/credentials.h"

#include "core/fs.h"
#include "core/strings.h"
#include "daemon/auth/address.h"

namespace longhaul::cli {
namespace {

std::string Var(const std::map<std::string, std::string>& vars, const std::string& name) {
  auto it = vars.find(name);
  return it == vars.end() ? "" : it->second;
}

Result<std::string> ReadTokenFile(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return Annotate(text.status(), StrCat("token file ", path));
  std::string token = std::string(StripWhitespace(StrSplit(*text, '\n')[0]));
  if (token.empty()) {
    return absl::InvalidArgumentError(StrCat("token file ", path, " is empty"));
  }
  return token;
}

}  // namespace

Result<ClientCredentials> ResolveCredentials(const std::string& token_file_flag,
                                             const std::string& tls_ca_flag,
                                             const std::map<std::string, std::string>& vars) {
  ClientCredentials c;
  std::string env_token = Var(vars, "LONGHAUL_TOKEN");
  std::string env_file = Var(vars, "LONGHAUL_TOKEN_FILE");
  if (!token_file_flag.empty()) {
    ASSIGN_OR_RETURN(c.token, ReadTokenFile(token_file_flag));
    c.token_from = token_file_flag;
  } else if (!env_token.empty()) {
    c.token = env_token;
    c.token_from = "$LONGHAUL_TOKEN";
  } else if (!env_file.empty()) {
    ASSIGN_OR_RETURN(c.token, ReadTokenFile(env_file));
    c.token_from = env_file;
  }
  c.tls_ca_file = tls_ca_flag.empty() ? Var(vars, "LONGHAUL_TLS_CA") : tls_ca_flag;
  if (!c.tls_ca_file.empty()) {
    Result<std::string> pem = ReadFile(c.tls_ca_file);
    if (!pem.ok()) return Annotate(pem.status(), StrCat("TLS CA ", c.tls_ca_file));
    if (pem->find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
      return absl::InvalidArgumentError(
          StrCat("TLS CA ", c.tls_ca_file, ": no PEM certificate in it"));
    }
    c.tls_ca_pem = std::move(*pem);
  }
  return c;
}

Status CheckTokenTransport(const std::string& address, const ClientCredentials& creds) {
  if (creds.token.empty() || !creds.tls_ca_pem.empty() || auth::IsLoopback(address)) {
    return OkStatus();
  }
  return absl::FailedPreconditionError(StrCat(
      "refusing to send the token (from ", creds.token_from, ") in plaintext to ", address,
      ", which is not a loopback address: give --tls-ca FILE (or $LONGHAUL_TLS_CA) to connect "
      "over TLS"));
}

}  // namespace longhaul::cli
