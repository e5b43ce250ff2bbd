#include "daemon/http/host_check.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "core/strings.h"
#include "daemon/http/json.h"

namespace longhaul::http {
namespace {

// Splits "NAME", "NAME:PORT", "[V6]" or "[V6]:PORT"; port -1 when absent. False when the text
// is not of that form (empty name, a bad port, a character no host name has).
bool SplitHost(const std::string& text, std::string* host, int* port) {
  std::string rest;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos) return false;
    *host = text.substr(0, close + 1);
    rest = text.substr(close + 1);
  } else {
    size_t colon = text.find(':');
    *host = text.substr(0, colon);
    rest = colon == std::string::npos ? "" : text.substr(colon);
  }
  if (host->empty() || *host == "[]") return false;
  for (unsigned char c : *host) {
    if (!std::isalnum(c) && c != '.' && c != '-' && c != '_' && c != '[' && c != ']' && c != ':') {
      return false;
    }
  }
  *port = -1;
  if (rest.empty()) return true;
  if (rest[0] != ':' || rest.size() < 2 || rest.size() > 6) return false;
  int p = 0;
  for (size_t i = 1; i < rest.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(rest[i]))) return false;
    p = p * 10 + (rest[i] - '0');
  }
  if (p > 65535) return false;
  *port = p;
  return true;
}

}  // namespace

Result<HostCheck> HostCheck::Create(const std::string& listen, int bound_port, bool tls,
                                    const std::vector<std::string>& extra) {
  HostCheck c;
  c.default_port_ = tls ? 443 : 80;
  for (const char* name : {"localhost", "127.0.0.1", "[::1]"}) {
    c.names_.push_back({name, bound_port});
  }
  std::string host;
  int port = -1;
  size_t colon = listen.rfind(':');
  host =
      absl::AsciiStrToLower(listen.substr(0, colon == std::string::npos ? listen.size() : colon));
  if (!host.empty() && host != "0.0.0.0" && host != "[::]") {
    c.names_.push_back({host, bound_port});
  }
  for (const std::string& e : extra) {
    if (!SplitHost(e, &host, &port)) {
      return absl::InvalidArgumentError(
          StrCat("--http-host '", e, "': expected NAME or NAME:PORT (an IPv6 address in [])"));
    }
    c.names_.push_back({absl::AsciiStrToLower(host), port});
  }
  return c;
}

bool HostCheck::Allowed(const std::string& value) const {
  std::string host;
  int port = -1;
  if (!SplitHost(value, &host, &port)) return false;
  host = absl::AsciiStrToLower(host);
  for (const Name& n : names_) {
    if (n.host != host) continue;
    if (n.port == -1 || n.port == port) return true;
    if (port == -1 && n.port == default_port_) return true;
  }
  return false;
}

std::optional<Response> HostCheck::Check(const std::string& host, bool http11, bool present) const {
  if (!present) {
    if (!http11) return std::nullopt;
    return ErrorResponse(400, absl::StatusCode::kInvalidArgument,
                         "an HTTP/1.1 request needs a Host header");
  }
  if (Allowed(host)) return std::nullopt;
  return ErrorResponse(
      421, absl::StatusCode::kPermissionDenied,
      StrCat("Host '", host,
             "' is not a name of this server (requests for other names are "
             "refused, against DNS rebinding); if it is one, start longhauld with --http-host '",
             host, "'"));
}

}  // namespace longhaul::http
