// The UI's files compiled into longhauld: a table generated from web/dist at build time by
// cmake/EmbedFiles.cmake (see web/CMakeLists.txt). No dependencies, so the generated source
// compiles alone.
#pragma once

#include <cstddef>

namespace longhaul::http {

// One file; `path` starts with '/' ("/index.html", "/assets/index-3f2a.js").
struct EmbeddedFile {
  const char* path;
  const unsigned char* data;
  size_t size;
};
extern const EmbeddedFile kEmbeddedUiFiles[];
extern const size_t kEmbeddedUiFileCount;

}  // namespace longhaul::http
