// Endpoint URLs as the stages take them on their command lines: "http://host:port[/base]".
// Only plain HTTP: the engines run on the cluster's private network and longhaul talks to
// them directly. Parsed by core/net/url.h; this adds what an endpoint means to a stage.
#pragma once

#include <string_view>

#include "core/net/url.h"
#include "core/status.h"

namespace longhaul::stages {

// Parses "http://host[:port][/base]" into a URL whose path is the base the API paths go under
// (url.Target("/v1/completions")): without a trailing '/', and without a trailing "/v1", so
// "--endpoint http://h:8000/v1" and "http://h:8000" mean the same server. InvalidArgument
// "endpoint 'URL': PROBLEM" for https, a query, or anything ParseHttpUrl refuses.
Result<net::HttpUrl> ParseEndpoint(std::string_view url);

}  // namespace longhaul::stages
