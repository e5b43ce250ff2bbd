#include "daemon/auth/address.h"

#include <arpa/inet.h>

#include <cstring>

namespace longhaul::auth {

namespace {

// gRPC may percent-encode the brackets of an IPv6 peer ("ipv6:%5B::1%5D:5000").
std::string DecodeBrackets(std::string_view a) {
  std::string out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == '%' && i + 2 < a.size() && a[i + 1] == '5' &&
        (a[i + 2] == 'B' || a[i + 2] == 'D')) {
      out.push_back(a[i + 2] == 'B' ? '[' : ']');
      i += 2;
    } else {
      out.push_back(a[i]);
    }
  }
  return out;
}

}  // namespace

std::string HostOf(std::string_view address) {
  std::string decoded = DecodeBrackets(address);
  std::string_view a = decoded;
  for (std::string_view scheme : {"dns:///", "dns:", "ipv4:", "ipv6:"}) {
    if (a.substr(0, scheme.size()) == scheme) {
      a.remove_prefix(scheme.size());
      break;
    }
  }
  if (a.substr(0, 5) == "unix:") return std::string(a);
  if (!a.empty() && a.front() == '[') {
    size_t end = a.find(']');
    return std::string(a.substr(1, end == std::string_view::npos ? a.size() - 1 : end - 1));
  }
  // One colon: HOST:PORT. More than one: a bare IPv6 address.
  size_t colon = a.find(':');
  if (colon != std::string_view::npos && a.find(':', colon + 1) == std::string_view::npos) {
    return std::string(a.substr(0, colon));
  }
  return std::string(a);
}

bool IsLoopback(std::string_view address) {
  std::string host = HostOf(address);
  if (host.rfind("unix:", 0) == 0) return true;
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return v6.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace longhaul::auth
