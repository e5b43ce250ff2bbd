#include "stages/command/checkpoint_watcher.h"

#include <glob.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/strings.h"

namespace longhaul::command {
namespace fs = std::filesystem;

bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      // Compare without leading zeros: longer is larger, then digit by digit.
      size_t si = i, sj = j;
      while (si + 1 < ei && a[si] == '0') ++si;
      while (sj + 1 < ej && b[sj] == '0') ++sj;
      if (ei - si != ej - sj) return ei - si < ej - sj;
      int c = a.compare(si, ei - si, b, sj, ej - sj);
      if (c != 0) return c < 0;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::optional<int64_t> StepOf(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  if (name.empty()) name = fs::path(path).parent_path().filename().string();
  size_t end = name.size();
  while (end > 0 && !std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  if (end == 0) return std::nullopt;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
  return ParseInt64(std::string_view(name).substr(begin, end - begin));  // nullopt: too long
}

CheckpointWatcher::CheckpointWatcher(std::string dir, std::string pattern)
    : dir_(std::move(dir)), pattern_(std::move(pattern)) {
  for (const std::string& p : List()) reported_.insert(p);
}

std::vector<std::string> CheckpointWatcher::List() const {
  std::vector<std::string> out;
  if (pattern_.empty()) return out;
  std::string full = pattern_.front() == '/' ? pattern_ : dir_ + "/" + pattern_;
  glob_t g{};
  if (::glob(full.c_str(), GLOB_NOSORT, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  // A half-written checkpoint some tools stage beside the real one.
  out.erase(std::remove_if(out.begin(), out.end(),
                           [](const std::string& p) {
                             return p.size() >= 4 && p.compare(p.size() - 4, 4, ".tmp") == 0;
                           }),
            out.end());
  std::sort(out.begin(), out.end(), NaturalLess);
  return out;
}

std::optional<std::string> CheckpointWatcher::Newest() const {
  auto all = List();
  if (all.empty()) return std::nullopt;
  return all.back();
}

CheckpointWatcher::Signature CheckpointWatcher::Sign(const std::string& path) {
  Signature s;
  std::error_code ec;
  auto add = [&](const fs::path& p) {
    auto st = fs::symlink_status(p, ec);
    if (ec || !fs::is_regular_file(st)) return;
    s.bytes += fs::file_size(p, ec);
    ++s.files;
    auto t = fs::last_write_time(p, ec);
    if (!ec) {
      s.mtime_ns = std::max<int64_t>(
          s.mtime_ns,
          std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
    }
  };
  if (fs::is_directory(path, ec)) {
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      add(it->path());
    }
  } else {
    add(path);
  }
  return s;
}

std::vector<Checkpoint> CheckpointWatcher::Take(bool all) {
  std::vector<Checkpoint> out;
  std::map<std::string, Signature> next;
  for (const std::string& p : List()) {
    if (reported_.count(p)) continue;
    Signature sig = Sign(p);
    auto it = seen_.find(p);
    // An empty directory was just created: its files are still to come.
    if (all || (sig.files > 0 && it != seen_.end() && it->second == sig)) {
      reported_.insert(p);
      out.push_back({p, StepOf(p)});
    } else {
      next[p] = sig;
    }
  }
  seen_ = std::move(next);
  return out;
}

std::vector<Checkpoint> CheckpointWatcher::Poll() { return Take(false); }
std::vector<Checkpoint> CheckpointWatcher::Final() { return Take(true); }

}  // namespace longhaul::command
