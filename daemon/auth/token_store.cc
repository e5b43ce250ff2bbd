#include "daemon/auth/token_store.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <set>

#include "core/fs.h"
#include "core/hash.h"
#include "core/strings.h"

namespace longhaul::auth {
namespace {

constexpr std::string_view kHashPrefix = "sha256:";

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == '@';
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

Result<std::vector<TokenEntry>> ParseTokens(std::string_view text, std::string_view file) {
  std::vector<TokenEntry> entries;
  std::set<std::string> hashes, names;
  int line_no = 0;
  for (std::string_view line : StrSplit(text, '\n')) {
    ++line_no;
    std::string_view body = StripWhitespace(line);
    if (body.empty() || body.front() == '#') continue;
    auto where = [&] { return StrCat(file, ":", line_no, ": "); };
    std::vector<std::string_view> f = Fields(body);
    if (f.size() != 3 && f.size() != 4) {
      return absl::InvalidArgumentError(
          StrCat(where(), "expected 'ROLE NAME sha256:HEX [TEAM]', got ", f.size(), " fields"));
    }
    std::optional<Role> role = ParseRole(f[0]);
    if (!role) {
      return absl::InvalidArgumentError(
          StrCat(where(), "unknown role '", f[0], "' (viewer, operator or admin)"));
    }
    for (size_t field : {size_t{1}, size_t{3}}) {
      if (field >= f.size()) continue;
      for (char c : f[field]) {
        if (!IsNameChar(c)) {
          return absl::InvalidArgumentError(StrCat(where(), field == 1 ? "name '" : "team '",
                                                   f[field],
                                                   "' may hold only letters, digits and . _ - @"));
        }
      }
    }
    std::string_view hash = f[2];
    if (hash.substr(0, kHashPrefix.size()) != kHashPrefix ||
        hash.size() != kHashPrefix.size() + 64 || !IsLowerHex(hash.substr(kHashPrefix.size()))) {
      return absl::InvalidArgumentError(
          StrCat(where(), "expected sha256: and 64 lower-case hex digits, got '",
                 hash.substr(0, 16), hash.size() > 16 ? "...'" : "'",
                 " (the file holds token hashes, never tokens: see `longhaul token new`)"));
    }
    TokenEntry e{*role, std::string(f[1]), std::string(hash.substr(kHashPrefix.size())),
                 f.size() == 4 ? std::string(f[3]) : ""};
    if (!names.insert(e.name).second) {
      return absl::InvalidArgumentError(StrCat(where(), "name '", e.name, "' appears twice"));
    }
    if (!hashes.insert(e.sha256_hex).second) {
      return absl::InvalidArgumentError(
          StrCat(where(), "the token of '", e.name, "' is also given to an earlier name"));
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

std::string HashToken(std::string_view token) { return StrCat(kHashPrefix, Sha256Hex(token)); }

Result<std::string> NewToken() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    return absl::InternalError("cannot draw random bytes for a token (OpenSSL RAND_bytes)");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "lh_";
  for (unsigned char b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

std::string TokenLine(Role role, std::string_view name, std::string_view token,
                      std::string_view team) {
  std::string line = StrCat(RoleName(role), " ", name, " ", HashToken(token));
  if (!team.empty()) line += StrCat(" ", team);
  return line;
}

Result<std::unique_ptr<TokenStore>> TokenStore::Load(const std::string& path) {
  auto store = std::make_unique<TokenStore>(std::vector<TokenEntry>{}, path);
  RETURN_IF_ERROR(store->Reload());
  return store;
}

TokenStore::TokenStore(std::vector<TokenEntry> entries, std::string path)
    : path_(std::move(path)),
      entries_(std::make_shared<const std::vector<TokenEntry>>(std::move(entries))) {}

Status TokenStore::Reload() {
  if (path_.empty()) return absl::FailedPreconditionError("this token store has no file");
  Result<std::string> text = ReadFile(path_);
  if (!text.ok()) return Annotate(text.status(), StrCat("tokens file ", path_));
  ASSIGN_OR_RETURN(std::vector<TokenEntry> entries, ParseTokens(*text, path_));
  auto table = std::make_shared<const std::vector<TokenEntry>>(std::move(entries));
  std::lock_guard<std::mutex> lock(mu_);
  entries_ = std::move(table);
  return OkStatus();
}

std::optional<TokenEntry> TokenStore::Lookup(std::string_view token) const {
  std::shared_ptr<const std::vector<TokenEntry>> table;
  {
    std::lock_guard<std::mutex> lock(mu_);
    table = entries_;
  }
  std::string hash = Sha256Hex(token);
  std::optional<TokenEntry> found;
  for (const TokenEntry& e : *table) {
    // Every entry is compared, each in constant time: timing says nothing about the table.
    if (CRYPTO_memcmp(e.sha256_hex.data(), hash.data(), hash.size()) == 0) found = e;
  }
  return found;
}

size_t TokenStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_->size();
}

}  // namespace longhaul::auth
