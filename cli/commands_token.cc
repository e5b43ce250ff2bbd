// `longhaul token new|hash`: tokens and their tokens-file lines, made locally.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "core/strings.h"
#include "daemon/auth/token_store.h"

namespace longhaul::cli {
namespace {

Result<auth::Role> RoleArg(const std::string& role) {
  std::optional<auth::Role> r = auth::ParseRole(role);
  if (!r) {
    return absl::InvalidArgumentError(
        StrCat("unknown role '", role, "': viewer, operator or admin"));
  }
  return *r;
}

Status CheckName(const std::string& name, const std::string& team) {
  // The tokens file parser is the one judge of a name and a team.
  RETURN_IF_ERROR(
      auth::ParseTokens(auth::TokenLine(auth::Role::kViewer, name, "x"), "NAME").status());
  if (team.empty()) return OkStatus();
  bool spaces = team.find_first_of(" \t\r\n") != std::string::npos;
  if (spaces ||
      !auth::ParseTokens(auth::TokenLine(auth::Role::kViewer, "x", "x", team), "TEAM").ok()) {
    return absl::InvalidArgumentError(
        StrCat("--team '", team, "' may hold only letters, digits and . _ - @"));
  }
  return OkStatus();
}

}  // namespace

int TokenNew(CommandContext& c, const TokenOptions& o) {
  Result<auth::Role> role = RoleArg(o.role);
  if (!role.ok()) return c.Fail(role.status());
  if (Status s = CheckName(o.name, o.team); !s.ok()) return c.Fail(s);
  Result<std::string> token = auth::NewToken();
  if (!token.ok()) return c.Fail(token.status());
  // O_EXCL: never overwrite a token someone may already hold; 0600: only its owner reads it.
  int fd = ::open(o.out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return c.Fail(absl::FailedPreconditionError(
        StrCat("cannot create ", o.out, ": ", std::strerror(errno),
               errno == EEXIST ? " (it exists; a token file is never overwritten)" : "")));
  }
  std::string data = *token + "\n";
  bool ok = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  ok = (::close(fd) == 0) && ok;
  if (!ok) return c.Fail(absl::InternalError(StrCat("cannot write ", o.out)));
  c.out() << auth::TokenLine(*role, o.name, *token, o.team) << '\n';
  c.err() << "longhaul: the token is in " << o.out
          << "; add the line above to longhauld's --tokens file and send it SIGHUP\n";
  return kExitOk;
}

int TokenHash(CommandContext& c, const TokenOptions& o) {
  Result<auth::Role> role = RoleArg(o.role);
  if (!role.ok()) return c.Fail(role.status());
  if (Status s = CheckName(o.name, o.team); !s.ok()) return c.Fail(s);
  std::string line;
  if (c.env.in == nullptr || !std::getline(*c.env.in, line)) line.clear();
  std::string token(StripWhitespace(line));
  if (token.empty()) return c.Fail(absl::InvalidArgumentError("no token on stdin"));
  c.out() << auth::TokenLine(*role, o.name, token, o.team) << '\n';
  return kExitOk;
}

}  // namespace longhaul::cli
