// The status UI's files: built into longhauld (web/dist turned into a C++ table at build time,
// see web/CMakeLists.txt), or read from a folder (--ui-dir) while developing the UI.
// GET / and every path that names no file (client-side routes) get index.html; a missing file
// under /assets/ is a 404. A path with a "." or ".." segment, a backslash, a '%' (left by
// double encoding) or a control byte is a 400; one that resolves outside the UI folder (a
// symlink) or names no regular file is a 404. Files are never read outside the folder.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "daemon/http/embedded_file.h"
#include "daemon/http/message.h"

namespace longhaul::http {

// "text/html; charset=utf-8", "text/javascript; charset=utf-8", ... by the path's extension;
// "application/octet-stream" when unknown.
std::string ContentTypeFor(const std::string& path);

class StaticFiles {
 public:
  // `ui_dir` empty: serve the embedded table.
  explicit StaticFiles(std::string ui_dir = "") : ui_dir_(std::move(ui_dir)) {}
  // Answers a GET or HEAD for a path outside /api/.
  Response Serve(const Request& request) const;

 private:
  // The file's bytes; NotFound when there is none at `path`, PermissionDenied when the path
  // resolves (through a symlink) outside the UI folder or names no regular file.
  Result<std::string> Find(const std::string& path) const;

  std::string ui_dir_;
};

}  // namespace longhaul::http
