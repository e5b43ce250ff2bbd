// Listening addresses of the daemons' HTTP listeners (longhauld's --http, longhaul-agent's
// --metrics-listen): "HOST:PORT", "[V6]:PORT" or ":PORT", where HOST is an IP address or
// "localhost" (read as 127.0.0.1) and an empty HOST also means 127.0.0.1. Port 0 asks the
// kernel for a free port.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <string>

#include "core/status.h"

namespace longhaul {

// InvalidArgument naming `listen` and what is wrong with it; the caller adds the flag.
Result<boost::asio::ip::tcp::endpoint> ParseListenAddress(const std::string& listen);

// A bound endpoint as "HOST:PORT" that a client on this machine can dial: IPv6 in brackets,
// an unspecified address (0.0.0.0, ::) as 127.0.0.1.
std::string DialableAddress(const boost::asio::ip::tcp::endpoint& bound);

}  // namespace longhaul
