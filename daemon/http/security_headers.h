// The headers longhauld's HTTP listener puts on every response (API, UI files, errors, watch
// streams), so that a browser runs only the UI's own scripts, never frames the UI, never
// guesses a content type, and never keeps an API answer in its cache.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace longhaul::http {

// The built UI (web/dist) needs nothing else: its scripts and stylesheets are files of its own
// (no inline script), styles set from script go through the CSSOM (allowed), and the page's
// icon is a data: URL.
inline constexpr char kContentSecurityPolicy[] =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'";

// The security headers for a response to `path` ("" when the request was not parsed, e.g. a
// 413): Cache-Control: no-store too for /api/ and for those.
std::vector<std::pair<std::string, std::string>> SecurityHeaders(const std::string& path);

}  // namespace longhaul::http
