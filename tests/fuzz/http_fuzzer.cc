// Fuzzes what longhauld's HTTP listener does with a request before any handler runs
// (daemon/http): ParseTarget (path and query split, percent-decoding), the query accessors,
// and the UI's static files, served both from the built-in table and from a folder. The input
// is "METHOD TARGET": the folder holds index.html, assets/app.js and two symlinks that lead out
// of it, and beside it a file that no request may ever read.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "daemon/http/json.h"
#include "daemon/http/message.h"
#include "daemon/http/static_files.h"
#include "tests/fuzz/fuzz_check.h"

namespace http = longhaul::http;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSecret = "outside-the-ui-folder";

void WriteFile(const fs::path& path, std::string_view data) {
  std::ofstream(path, std::ios::binary) << data;
}

// A temp folder for the process: ROOT/ui (the UI) and ROOT/secret.txt; removed at exit.
// An error response (what longhauld writes back) must be JSON whatever the request held.
void CheckJsonBody(const http::Response& r) {
  if (r.content_type != "application/json") return;
  FUZZ_CHECK(!nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false).is_discarded(),
             "a JSON response body parses");
}

const std::string& UiDir() {
  static const std::string* dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "lh-http-fuzz-XXXXXX").string();
    FUZZ_CHECK(mkdtemp(tmpl.data()) != nullptr, "mkdtemp");
    static std::string root = tmpl;
    fs::create_directories(fs::path(root) / "ui" / "assets");
    WriteFile(fs::path(root) / "ui" / "index.html", "<html>index</html>");
    WriteFile(fs::path(root) / "ui" / "assets" / "app.js", "console.log(1)");
    WriteFile(fs::path(root) / "secret.txt", kSecret);
    WriteFile(fs::path(root) / "ui-secret.txt", kSecret);
    // Symlinks out of the folder: a file, and a folder under assets/.
    fs::create_symlink(fs::path(root) / "secret.txt", fs::path(root) / "ui" / "link.txt");
    fs::create_directory_symlink(fs::path(root), fs::path(root) / "ui" / "assets" / "up");
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(root, ec);
    });
    return new std::string(root + "/ui");
  }();
  return *dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t space = input.find(' ');
  http::Request request;
  request.method = space == std::string_view::npos ? "GET" : std::string(input.substr(0, space));
  std::string target(space == std::string_view::npos ? input : input.substr(space + 1));

  longhaul::Status parsed = http::ParseTarget(target, &request);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.code() == absl::StatusCode::kInvalidArgument, "bad target's code");
    CheckJsonBody(http::ErrorResponse(parsed));  // as the server answers it
    return 0;
  }
  FUZZ_CHECK(request.path.size() <= target.size(), "decoding never grows the path");
  for (const auto& [key, value] : request.query) {
    FUZZ_CHECK(request.Query(key).has_value(), "Query finds every key");
    FUZZ_CHECK(!request.QueryAll(key).empty(), "QueryAll finds every key");
  }

  static const http::StaticFiles from_folder(UiDir());
  static const http::StaticFiles built_in;
  for (const http::StaticFiles* files : {&from_folder, &built_in}) {
    http::Response r = files->Serve(request);
    FUZZ_CHECK(r.status == 200 || r.status == 400 || r.status == 404 || r.status == 405,
               "status");
    // Error bodies echo the request; a 200's body is a file, never one outside the folder.
    FUZZ_CHECK(r.status != 200 || r.body.find(kSecret) == std::string::npos,
               "no file outside the UI folder");
    FUZZ_CHECK(!r.content_type.empty(), "a content type");
    CheckJsonBody(r);
  }
  return 0;
}
