#include "core/net/listen_address.h"

#include <cstdlib>

#include "core/strings.h"

namespace longhaul {

Result<boost::asio::ip::tcp::endpoint> ParseListenAddress(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(StrCat("'", listen, "': expected HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  std::string port = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || host == "localhost") host = "127.0.0.1";
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) {
    return absl::InvalidArgumentError(StrCat("'", listen, "': bad port '", port, "'"));
  }
  boost::system::error_code ec;
  boost::asio::ip::address addr = boost::asio::ip::make_address(host, ec);
  if (ec) {
    return absl::InvalidArgumentError(StrCat("'", listen, "': '", host, "' is not an IP address"));
  }
  return boost::asio::ip::tcp::endpoint(addr, static_cast<unsigned short>(p));
}

std::string DialableAddress(const boost::asio::ip::tcp::endpoint& bound) {
  std::string host = bound.address().to_string();
  if (bound.address().is_v6()) host = "[" + host + "]";
  if (bound.address().is_unspecified()) host = "127.0.0.1";
  return StrCat(host, ":", bound.port());
}

}  // namespace longhaul
