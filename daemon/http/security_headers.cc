#include "daemon/http/security_headers.h"

namespace longhaul::http {

std::vector<std::pair<std::string, std::string>> SecurityHeaders(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> h = {
      {"Content-Security-Policy", kContentSecurityPolicy},
      {"X-Content-Type-Options", "nosniff"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
  };
  if (path.empty() || path.rfind("/api/", 0) == 0) h.emplace_back("Cache-Control", "no-store");
  return h;
}

}  // namespace longhaul::http
