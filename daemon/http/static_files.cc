#include "daemon/http/static_files.h"

#include <fstream>
#include <sstream>

#include "daemon/http/json.h"

namespace longhaul::http {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(),
                                                suffix) == 0;
}

// No "..", no backslashes, no NUL: a path can only name a file under the UI folder.
bool SafePath(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  if (path.find('\\') != std::string::npos || path.find('\0') != std::string::npos) return false;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i + 1);
    std::string seg = path.substr(i + 1, j == std::string::npos ? std::string::npos : j - i - 1);
    if (seg == "..") return false;
    if (j == std::string::npos) break;
    i = j;
  }
  return true;
}

}  // namespace

std::string ContentTypeFor(const std::string& path) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".webmanifest", "application/manifest+json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".jpg", "image/jpeg"},
      {".ico", "image/x-icon"},
      {".woff2", "font/woff2"},
      {".woff", "font/woff"},
      {".txt", "text/plain; charset=utf-8"},
  };
  for (const auto& [ext, type] : kTypes) {
    if (EndsWith(path, ext)) return type;
  }
  return "application/octet-stream";
}

std::optional<std::string> StaticFiles::Find(const std::string& path) const {
  if (ui_dir_.empty()) {
    for (size_t i = 0; i < kEmbeddedUiFileCount; ++i) {
      if (path == kEmbeddedUiFiles[i].path) {
        return std::string(reinterpret_cast<const char*>(kEmbeddedUiFiles[i].data),
                           kEmbeddedUiFiles[i].size);
      }
    }
    return std::nullopt;
  }
  std::ifstream in(ui_dir_ + path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream data;
  data << in.rdbuf();
  if (in.bad()) return std::nullopt;  // a folder, or unreadable
  return data.str();
}

Response StaticFiles::Serve(const Request& request) const {
  if (request.method != "GET" && request.method != "HEAD") {
    Response r = ErrorResponse(405, absl::StatusCode::kInvalidArgument,
                               request.method + " " + request.path + ": the UI's files are GET only");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  std::string path = request.path == "/" ? "/index.html" : request.path;
  std::optional<std::string> data;
  if (SafePath(path) && !EndsWith(path, "/")) data = Find(path);
  if (!data && path.rfind("/assets/", 0) == 0) {
    return ErrorResponse(404, absl::StatusCode::kNotFound, "no UI file " + path);
  }
  if (!data) {  // a client-side route: the app's page
    path = "/index.html";
    data = Find(path);
    if (!data) {
      return ErrorResponse(404, absl::StatusCode::kNotFound,
                           "no index.html in " + (ui_dir_.empty() ? "the built-in UI" : ui_dir_));
    }
  }
  Response r;
  r.content_type = ContentTypeFor(path);
  r.body = std::move(*data);
  // Vite names assets by their content hash: they never change under one name.
  r.headers.emplace_back("Cache-Control", path.rfind("/assets/", 0) == 0
                                              ? "public, max-age=31536000, immutable"
                                              : "no-cache");
  return r;
}

}  // namespace longhaul::http
