#include "agent/lib/retention.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "agent/lib/attempt_dir.h"
#include "core/strings.h"

namespace longhaul::agent {
namespace {

namespace fs = std::filesystem;

// True when `path` is strictly inside `root` once both are resolved.
bool Inside(const std::string& path, const std::string& root) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  if (ec) return false;
  fs::path r = fs::weakly_canonical(root, ec);
  if (ec) return false;
  auto [rend, pit] = std::mismatch(r.begin(), r.end(), p.begin(), p.end());
  return rend == r.end() && pit != p.end();
}

// Measures, then (unless a dry run) removes `path`. Counts it when it is gone afterwards.
bool RemoveTree(const std::string& path, bool dry_run, v1::AttemptsRemoved* out) {
  out->set_bytes(out->bytes() + DiskUsage(path));
  if (dry_run) return true;
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) {
    out->add_errors(StrCat(path, ": ", ec.message()));
    return false;
  }
  return true;
}

}  // namespace

int64_t DiskUsage(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return 0;
  int64_t total = static_cast<int64_t>(st.st_blocks) * 512;
  if (!S_ISDIR(st.st_mode)) return total;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    if (::lstat(it->path().c_str(), &st) == 0) total += static_cast<int64_t>(st.st_blocks) * 512;
  }
  return total;
}

v1::AttemptsRemoved RemoveAttemptFiles(const v1::RemoveAttempts& req, const std::string& state_dir,
                                       const std::string& data_dir) {
  v1::AttemptsRemoved out;
  out.set_request_id(req.request_id());
  for (int64_t id : req.attempt_ids()) {
    AttemptDir dir(state_dir, id);
    if (!dir.Exists()) continue;  // never here, or removed before
    if (!dir.IsDone()) {
      out.add_errors(StrCat(dir.path(), ": the coordinator does not have its exit yet; kept"));
      continue;
    }
    if (RemoveTree(dir.path(), req.dry_run(), &out)) out.set_attempt_dirs(out.attempt_dirs() + 1);
  }
  for (const std::string& d : req.output_dirs()) {
    if (!Inside(d, data_dir)) {
      out.add_errors(StrCat(d, ": not inside the agent's data dir ", data_dir, "; kept"));
      continue;
    }
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(d, ec))) continue;
    if (!RemoveTree(d, req.dry_run(), &out)) continue;
    out.set_output_dirs(out.output_dirs() + 1);
    // DATA/runs/RUN/STAGE/attempt-N: the parents it leaves empty go too (rmdir fails on a
    // directory that is not empty, which is what keeps a sibling's files).
    for (fs::path p = fs::path(d).parent_path(); !req.dry_run() && Inside(p, data_dir);
         p = p.parent_path()) {
      if (::rmdir(p.c_str()) != 0) break;
    }
  }
  return out;
}

}  // namespace longhaul::agent
