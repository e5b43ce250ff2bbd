#include "daemon/http/static_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "core/strings.h"
#include "daemon/http/json.h"

namespace longhaul::http {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(),
                                                suffix) == 0;
}

// A path that can only name a file under the UI folder: no "." or ".." segment, no
// backslash, no NUL or other control byte, and no '%' left after the one decoding (a double
// encoded "%252e%252e" is an attempt, not a file name).
bool SafePath(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  for (char c : path) {
    if (c == '\\' || c == '%' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i + 1);
    std::string seg = path.substr(i + 1, j == std::string::npos ? std::string::npos : j - i - 1);
    if (seg == ".." || seg == ".") return false;
    if (j == std::string::npos) break;
    i = j;
  }
  return true;
}

// The bytes of regular file `path` when it lies inside `root` (already resolved) once every
// symlink is resolved. NotFound when there is no such file; PermissionDenied when it resolves
// outside `root` or is not a regular file. The last component is opened with O_NOFOLLOW, so
// it cannot be swapped for a symlink between the check and the open.
Result<std::string> ReadInside(const std::string& root, const std::string& path) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) {
    return absl::NotFoundError(StrCat("no UI file ", path));
  }
  std::string real(resolved);
  if (real.size() <= root.size() || real.compare(0, root.size(), root) != 0 ||
      real[root.size()] != '/') {
    return absl::PermissionDeniedError(StrCat(path, " leads outside the UI folder"));
  }
  int fd = ::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return absl::PermissionDeniedError(StrCat("cannot open UI file ", path));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::PermissionDeniedError(StrCat(path, " is not a regular file"));
  }
  std::string bytes;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      if (n < 0) return absl::PermissionDeniedError(StrCat("cannot read UI file ", path));
      return bytes;
    }
    bytes.append(buf, static_cast<size_t>(n));
  }
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

Result<std::string> StaticFiles::Find(const std::string& path) const {
  if (ui_dir_.empty()) {
    for (size_t i = 0; i < kEmbeddedUiFileCount; ++i) {
      if (path == kEmbeddedUiFiles[i].path) {
        return std::string(reinterpret_cast<const char*>(kEmbeddedUiFiles[i].data),
                           kEmbeddedUiFiles[i].size);
      }
    }
    return absl::NotFoundError(StrCat("no UI file ", path));
  }
  char root[PATH_MAX];
  if (::realpath(ui_dir_.c_str(), root) == nullptr) {
    return absl::NotFoundError(StrCat("no UI folder ", ui_dir_));
  }
  return ReadInside(root, ui_dir_ + path);
}

Response StaticFiles::Serve(const Request& request) const {
  if (request.method != "GET" && request.method != "HEAD") {
    Response r = ErrorResponse(405, absl::StatusCode::kInvalidArgument,
                               request.method + " " + request.path + ": the UI's files are GET only");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  std::string path = request.path == "/" ? "/index.html" : request.path;
  if (!SafePath(path)) {
    return ErrorResponse(
        400, absl::StatusCode::kInvalidArgument,
        "UI path '" + path + "' has '..', '.', a backslash, a '%' or a control byte");
  }
  Result<std::string> data = absl::NotFoundError("a folder");
  if (!EndsWith(path, "/")) data = Find(path);
  if (!data.ok() && (!absl::IsNotFound(data.status()) || path.rfind("/assets/", 0) == 0)) {
    // Refused (a symlink out of the folder, not a regular file) or a missing asset.
    return ErrorResponse(404, absl::StatusCode::kNotFound, std::string(data.status().message()));
  }
  if (!data.ok()) {  // a client-side route: the app's page
    path = "/index.html";
    data = Find(path);
    if (!data.ok()) {
      return ErrorResponse(404, absl::StatusCode::kNotFound,
                           "no index.html in " + (ui_dir_.empty() ? "the built-in UI" : ui_dir_));
    }
  }
  Response r;
  r.content_type = ContentTypeFor(path);
  r.body = std::move(*data);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  // Vite names assets by their content hash: they never change under one name.
  r.headers.emplace_back("Cache-Control", path.rfind("/assets/", 0) == 0
                                              ? "public, max-age=31536000, immutable"
                                              : "no-cache");
  return r;
}

}  // namespace longhaul::http
