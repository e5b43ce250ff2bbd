#include "daemon/auth/authorizer.h"

#include <cctype>

#include "core/strings.h"
#include "daemon/auth/address.h"

namespace longhaul::auth {

Result<Principal> TokenAuthorizer::Authorize(std::string_view token, std::string_view peer,
                                             Action action) const {
  if (token.empty()) {
    return absl::UnauthenticatedError(
        StrCat("no token was sent; this coordinator needs one to ", ActionName(action),
               " (set $LONGHAUL_TOKEN or $LONGHAUL_TOKEN_FILE, or pass --token-file)"));
  }
  std::optional<TokenEntry> entry = tokens_->Lookup(token);
  if (!entry) {
    return absl::UnauthenticatedError(
        "the token is not known to this coordinator (revoked, mistyped, or meant for another)");
  }
  Principal p{entry->name, entry->role, std::string(peer), entry->team};
  Role needed = RequiredRole(action);
  if (static_cast<int>(p.role) < static_cast<int>(needed)) {
    return absl::PermissionDeniedError(StrCat(p.name, " (", RoleName(p.role), ") may not ",
                                              ActionName(action), ": that needs the ",
                                              RoleName(needed), " role"));
  }
  return p;
}

Result<Principal> OpenAuthorizer::Authorize(std::string_view, std::string_view peer, Action) const {
  return Principal{IsLoopback(peer) ? "local" : "anonymous", Role::kAdmin, std::string(peer), ""};
}

std::string BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return "";
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return "";
  }
  return std::string(StripWhitespace(authorization.substr(kScheme.size())));
}

}  // namespace longhaul::auth
