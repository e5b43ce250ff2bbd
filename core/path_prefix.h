// Absolute path prefixes, as agents declare shared file systems (--shared-path): "/lustre/"
// is "/lustre", and a prefix holds whole components ("/data" holds "/data/x", not
// "/database").
#pragma once

#include <string>
#include <string_view>

namespace longhaul {

// `path` without trailing slashes; "/" (or "//") stays "/".
inline std::string TrimTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// True when `path` is `prefix` or lies below it. `prefix` has no trailing slash (but "/").
inline bool UnderPrefix(std::string_view path, std::string_view prefix) {
  if (prefix == "/") return !path.empty() && path[0] == '/';
  return path.size() >= prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
         (path.size() == prefix.size() || path[prefix.size()] == '/');
}

}  // namespace longhaul
