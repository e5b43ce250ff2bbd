#include "stages/common/endpoint.h"

#include "core/strings.h"

namespace longhaul::stages {

Result<net::HttpUrl> ParseEndpoint(std::string_view url) {
  ASSIGN_OR_RETURN(
      net::HttpUrl out,
      net::ParseHttpUrl(url, {.what = "endpoint", .allow_https = false, .allow_query = false}));
  std::string_view path = out.path;
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (EndsWith(path, "/v1")) path.remove_suffix(3);
  out.path = std::string(path);
  return out;
}

}  // namespace longhaul::stages
