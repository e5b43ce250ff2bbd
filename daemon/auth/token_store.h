// TokenStore: the bearer tokens longhauld accepts, read from a file of lines
//
//   ROLE NAME sha256:HEX [TEAM]  # ROLE is viewer, operator or admin; NAME says who holds it;
//                                # TEAM (optional) is the team its runs count for
//
// Blank lines and lines starting with '#' are skipped. Only the SHA-256 of each token is kept,
// on disk and in memory, so the file can be read by whoever manages it without revealing a
// usable token; `longhaul token new` makes a token and its line.
//
// Thread-safe: Lookup may run on any thread while Reload (SIGHUP) swaps in a new table. A
// Reload that fails keeps the table it had.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "daemon/auth/action.h"

namespace longhaul::auth {

struct TokenEntry {
  Role role = Role::kViewer;
  std::string name;
  std::string sha256_hex;  // 64 lower-case hex digits
  std::string team;        // "" when the line names none
};

// Parses the text of a tokens file. InvalidArgument naming "FILE:LINE" and what is wrong for
// a malformed line, an unknown role, a repeated hash or a repeated name.
Result<std::vector<TokenEntry>> ParseTokens(std::string_view text, std::string_view file);

// "sha256:HEX" of `token`.
std::string HashToken(std::string_view token);
// A new token: "lh_" and 64 hex digits (256 bits from the system's CSPRNG).
Result<std::string> NewToken();
// The tokens-file line for `token`.
std::string TokenLine(Role role, std::string_view name, std::string_view token,
                      std::string_view team = "");

class TokenStore {
 public:
  // Reads `path`; fails as ParseTokens does, or NotFound/PermissionDenied naming the path.
  static Result<std::unique_ptr<TokenStore>> Load(const std::string& path);
  // For tests and embedders: a store over given entries (Reload then fails).
  explicit TokenStore(std::vector<TokenEntry> entries, std::string path = "");

  // Reads the file again; on error keeps the current table and says why.
  Status Reload();
  // The entry whose hash matches `token`; nullopt for none. Compares in constant time.
  std::optional<TokenEntry> Lookup(std::string_view token) const;
  size_t size() const;
  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  mutable std::mutex mu_;
  std::shared_ptr<const std::vector<TokenEntry>> entries_;  // guarded by mu_
};

}  // namespace longhaul::auth
