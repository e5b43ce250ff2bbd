#include "cli/source_state.h"

#include <filesystem>
#include <optional>

#include "core/command.h"
#include "core/hash.h"
#include "core/strings.h"

namespace longhaul::cli {
namespace {

struct GitCall {
  std::string git;
  std::string dir;
  int64_t timeout_ms;

  Result<CommandResult> operator()(std::vector<std::string> args) const {
    std::vector<std::string> argv = {git, "-C", dir};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandInput input;
    input.env["GIT_OPTIONAL_LOCKS"] = "0";  // `status` must not take the index lock
    input.env["LC_ALL"] = "C";
    return RunCommand(argv, timeout_ms, input);
  }
};

v1::SourceState UnknownSource(const Status& s) {
  v1::SourceState out;
  out.set_kind("unknown");
  out.set_note(std::string(s.message()));
  return out;
}

}  // namespace

v1::SourceState ReadSourceState(const std::string& file, const std::string& git,
                                int64_t timeout_ms) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(file, ec);
  std::string dir = ec ? "." : abs.parent_path().string();
  GitCall call{git, dir.empty() ? "." : dir, timeout_ms};
  v1::SourceState out;
  Result<CommandResult> top = call({"rev-parse", "--show-toplevel"});
  if (!top.ok()) {
    if (absl::IsNotFound(top.status())) {
      out.set_kind("no_git");
      out.set_note(std::string(top.status().message()));
      return out;
    }
    return UnknownSource(top.status());
  }
  if (top->exit_code != 0) {
    out.set_kind("not_a_repository");
    return out;
  }
  out.set_kind("git");
  out.set_root(std::string(StripWhitespace(top->out)));
  Result<CommandResult> head = call({"rev-parse", "--verify", "--quiet", "HEAD"});
  if (!head.ok()) return UnknownSource(head.status());
  if (head->exit_code == 0) out.set_commit(std::string(StripWhitespace(head->out)));
  Result<CommandResult> branch = call({"symbolic-ref", "--quiet", "--short", "HEAD"});
  if (!branch.ok()) return UnknownSource(branch.status());
  if (branch->exit_code == 0) out.set_branch(std::string(StripWhitespace(branch->out)));
  Result<CommandResult> status = call({"status", "--porcelain", "--untracked-files=no"});
  if (!status.ok()) return UnknownSource(status.status());
  out.set_dirty(!StripWhitespace(status->out).empty());
  Result<CommandResult> tracked = call({"ls-files", "--error-unmatch", "--", abs.string()});
  if (tracked.ok() && tracked->exit_code != 0) {
    out.set_note("the workflow file is not tracked by git");
  }
  if (!out.dirty() || out.commit().empty()) return out;
  Result<CommandResult> diff = call({"diff", "--no-color", "--no-ext-diff", "HEAD"});
  if (!diff.ok() || diff->exit_code != 0) {
    out.set_note(diff.ok() ? StrCat("git diff HEAD exited with ", diff->exit_code)
                           : std::string(diff.status().message()));
    return out;
  }
  out.set_diff_sha256(Sha256Hex(diff->out));
  out.set_diff_bytes(static_cast<int64_t>(diff->out.size()));
  if (static_cast<int64_t>(diff->out.size()) > kSourceDiffLimit) {
    out.set_diff(diff->out.substr(0, kSourceDiffLimit));
    out.set_diff_truncated(true);
  } else {
    out.set_diff(std::move(diff->out));
  }
  return out;
}

std::string SourceStateLine(const v1::SourceState& s) {
  if (s.kind().empty()) return "not recorded";
  if (s.kind() == "not_a_repository") return "not in a git repository";
  if (s.kind() == "no_git") return "not recorded: git is not installed";
  if (s.kind() != "git") return StrCat("unknown (", s.note(), ")");
  std::string out = s.commit().empty() ? "no commit yet" : s.commit().substr(0, 12);
  out += StrCat(" (", s.branch().empty() ? "detached" : s.branch());
  if (s.dirty()) {
    out += StrCat(", dirty: diff ", s.diff_sha256().substr(0, 12), ", ", s.diff_bytes(), " bytes",
                  s.diff_truncated() ? StrCat(", first ", kSourceDiffLimit, " kept") : "");
  } else {
    out += ", clean";
  }
  out += StrCat(") in ", s.root());
  if (!s.note().empty()) out += StrCat("; ", s.note());
  return out;
}

}  // namespace longhaul::cli
