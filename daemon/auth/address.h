// Address classification shared by longhauld (may it listen here without tokens?), the
// authorizer (where did a call come from?) and the CLI (may a token go there in plaintext?).
#pragma once

#include <string>
#include <string_view>

namespace longhaul::auth {

// The host part of "HOST:PORT", "[V6]:PORT", a gRPC peer ("ipv4:1.2.3.4:5", "ipv6:[::1]:5",
// "ipv6:%5B::1%5D:5", "unix:/path"), or "dns:///HOST:PORT"; brackets removed. A bare host
// comes back as is.
std::string HostOf(std::string_view address);

// True for 127.0.0.0/8, ::1, ::ffff:127.x.y.z, "localhost" and unix sockets. Anything else,
// including the wildcard addresses 0.0.0.0 and ::, is reachable from elsewhere. Takes what
// HostOf takes.
bool IsLoopback(std::string_view address);

}  // namespace longhaul::auth
