// ActionAuthorizer: the one check every entry point of the client API makes before it does
// anything. It takes what any transport can give (the bearer token as sent, the caller's
// address, the action) and answers who the caller is, or why not:
//
//   UNAUTHENTICATED    no token, or a token this coordinator does not know
//   PERMISSION_DENIED  a known token whose role is below what the action needs
//
// Messages never contain the token. Implementations are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "daemon/auth/action.h"
#include "daemon/auth/token_store.h"

namespace longhaul::auth {

struct Principal {
  std::string name;  // the token's NAME; "local" or "anonymous" when no tokens are configured
  Role role = Role::kViewer;
  std::string peer;  // the caller's address as the transport gave it
  std::string team;  // the token's TEAM; "" when its line names none (or without tokens)
};

class ActionAuthorizer {
 public:
  virtual ~ActionAuthorizer() = default;
  // `token`: the bearer token without its "Bearer " ("" when none was sent).
  virtual Result<Principal> Authorize(std::string_view token, std::string_view peer,
                                      Action action) const = 0;
};

// Tokens from a TokenStore (not owned; outlives this).
class TokenAuthorizer final : public ActionAuthorizer {
 public:
  explicit TokenAuthorizer(const TokenStore* tokens) : tokens_(tokens) {}
  Result<Principal> Authorize(std::string_view token, std::string_view peer,
                              Action action) const override;

 private:
  const TokenStore* tokens_;
};

// No tokens configured: longhauld then listens on loopback only (or was told --insecure),
// and every caller may do everything. Its principal is "local" for a loopback peer and
// "anonymous" for any other, so the audit trail still says where a call came from.
class OpenAuthorizer final : public ActionAuthorizer {
 public:
  Result<Principal> Authorize(std::string_view token, std::string_view peer,
                              Action action) const override;
};

// The token in an "authorization" header value: "Bearer TOKEN" (scheme case-insensitive).
// "" for an empty header or another scheme; the authorizer then answers UNAUTHENTICATED.
std::string BearerToken(std::string_view authorization);

}  // namespace longhaul::auth
