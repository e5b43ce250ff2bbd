// One HTTP exchange as the router sees it, independent of the server library: a parsed request
// (path and query already split and percent-decoded, header names lower-case) and the response
// to send.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "daemon/auth/authorizer.h"

namespace longhaul::http {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // decoded, without the query
  std::multimap<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string peer;  // "ADDRESS:PORT" of the client, "" when unknown
  bool tls = false;  // it came over HTTPS
  // Who sent it, as the RequestAuthorizer answered: set by Router::Admit. Handlers record it in the
  // audit trail.
  auth::Principal principal;

  // The last value of query parameter `name`, or nullopt.
  std::optional<std::string> Query(const std::string& name) const;
  std::vector<std::string> QueryAll(const std::string& name) const;
  // The header's value, or "" when absent.
  std::string Header(const std::string& lower_name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond Content-Type/-Length
};

// Splits "/a/b%20c?x=1&y=2" into `out->path` and `out->query`. InvalidArgument on a bad
// percent escape.
Status ParseTarget(const std::string& target, Request* out);

}  // namespace longhaul::http
