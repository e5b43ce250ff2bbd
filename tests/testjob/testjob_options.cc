#include "tests/testjob/testjob_options.h"

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <string_view>

#include "core/strings.h"

namespace longhaul::testjob {
namespace {

struct Flag {
  const char* name;
  const char* value;  // nullptr: a switch without a value
  const char* help;
};

// The single source of both the parser's accepted names and the --help text.
constexpr Flag kFlags[] = {
    {"--sleep", "SECONDS", "sleep this long (fractions allowed) before exiting"},
    {"--print", "TEXT", "write TEXT and a newline to stdout (repeatable)"},
    {"--stderr", "TEXT", "write TEXT and a newline to stderr (repeatable)"},
    {"--exit", "N", "exit with code N at the end (default 0)"},
    {"--fail-first", "K", "exit with --exit's code (or 1) while $LONGHAUL_ATTEMPT <= K"},
    {"--progress", "N", "N progress events (unit items, total N) spread over --sleep"},
    {"--events", "N", "N progress events written as fast as possible"},
    {"--output", "NAME=VALUE", "report an output (repeatable)"},
    {"--metric", "NAME=VALUE", "report a metric (repeatable)"},
    {"--artifact", "NAME=RELPATH", "create RELPATH in the output dir and report it (repeatable)"},
    {"--spawn-children", "N", "fork N children that sleep until killed; pids to children.pids"},
    {"--pid-dir", "DIR", "where children.pids goes (default $LONGHAUL_WORK_DIR, else .)"},
    {"--ignore-sigterm", nullptr, "ignore SIGTERM (only SIGKILL ends it)"},
    {"--malformed", "N", "write N malformed event lines, each between valid ones"},
    {"--stall-after", "SECONDS", "report progress for SECONDS, then stay alive silently"},
    {"--ready", nullptr, "report ready, then run until SIGTERM (a fake service)"},
    {"--work", "N", "resumable work: items 1..N appended to $LONGHAUL_OUTPUT_DIR/done.txt"},
    {"--step-ms", "MS", "time each --work item takes"},
    {"--checkpoint-every", "K", "checkpoint file and event every K --work items (default 1)"},
    {"--checkpoint-on-usr1", nullptr,
     "on SIGUSR1 (longhaul's notice before a stop), checkpoint after the --work item in hand"},
    {"--pid-file", "PATH", "write this process's pid to PATH"},
    {"--help", nullptr, "show this text"},
};

Status Bad(std::string_view flag, std::string_view value, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(flag, " '", value, "': ", what));
}

Result<int64_t> Int(std::string_view flag, const std::string& v, int64_t min) {
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0) return Bad(flag, v, "expected an integer");
  if (n < min) return Bad(flag, v, StrCat("must be at least ", min));
  return static_cast<int64_t>(n);
}

Result<double> Seconds(std::string_view flag, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno != 0) return Bad(flag, v, "expected a number");
  if (d < 0) return Bad(flag, v, "must not be negative");
  return d;
}

Result<std::pair<std::string, std::string>> NameValue(std::string_view flag, const std::string& v) {
  auto eq = v.find('=');
  if (eq == std::string::npos || eq == 0) return Bad(flag, v, "expected NAME=VALUE");
  return std::make_pair(v.substr(0, eq), v.substr(eq + 1));
}

Status Apply(TestJobOptions& o, std::string_view flag, const std::string& v) {
  if (flag == "--sleep") {
    ASSIGN_OR_RETURN(o.sleep_s, Seconds(flag, v));
  } else if (flag == "--print") {
    o.print.push_back(v);
  } else if (flag == "--stderr") {
    o.stderr_lines.push_back(v);
  } else if (flag == "--exit") {
    ASSIGN_OR_RETURN(int64_t n, Int(flag, v, 0));
    if (n > 255) return Bad(flag, v, "must be at most 255");
    o.exit_code = static_cast<int>(n);
  } else if (flag == "--fail-first") {
    ASSIGN_OR_RETURN(int64_t n, Int(flag, v, 0));
    o.fail_first = static_cast<int>(n);
  } else if (flag == "--progress") {
    ASSIGN_OR_RETURN(o.progress, Int(flag, v, 0));
  } else if (flag == "--events") {
    ASSIGN_OR_RETURN(o.events, Int(flag, v, 0));
  } else if (flag == "--output") {
    ASSIGN_OR_RETURN(auto nv, NameValue(flag, v));
    o.outputs.push_back(std::move(nv));
  } else if (flag == "--metric") {
    ASSIGN_OR_RETURN(auto nv, NameValue(flag, v));
    char* end = nullptr;
    double d = std::strtod(nv.second.c_str(), &end);
    if (nv.second.empty() || *end != '\0') return Bad(flag, v, "the value must be a number");
    o.metrics.emplace_back(nv.first, d);
  } else if (flag == "--artifact") {
    ASSIGN_OR_RETURN(auto nv, NameValue(flag, v));
    if (nv.second.empty() || nv.second[0] == '/') {
      return Bad(flag, v, "the path must be relative to the output dir");
    }
    o.artifacts.push_back(std::move(nv));
  } else if (flag == "--spawn-children") {
    ASSIGN_OR_RETURN(int64_t n, Int(flag, v, 0));
    if (n > 1000) return Bad(flag, v, "must be at most 1000");
    o.spawn_children = static_cast<int>(n);
  } else if (flag == "--pid-dir") {
    o.pid_dir = v;
  } else if (flag == "--malformed") {
    ASSIGN_OR_RETURN(o.malformed, Int(flag, v, 0));
  } else if (flag == "--stall-after") {
    ASSIGN_OR_RETURN(double s, Seconds(flag, v));
    o.stall_after_s = s;
  } else if (flag == "--work") {
    ASSIGN_OR_RETURN(o.work, Int(flag, v, 0));
  } else if (flag == "--step-ms") {
    ASSIGN_OR_RETURN(o.step_ms, Int(flag, v, 0));
  } else if (flag == "--checkpoint-every") {
    ASSIGN_OR_RETURN(o.checkpoint_every, Int(flag, v, 1));
  } else if (flag == "--pid-file") {
    o.pid_file = v;
  } else if (flag == "--checkpoint-on-usr1") {
    o.checkpoint_on_usr1 = true;
  } else if (flag == "--ignore-sigterm") {
    o.ignore_sigterm = true;
  } else if (flag == "--ready") {
    o.ready = true;
  } else if (flag == "--help") {
    o.help = true;
  }
  return OkStatus();
}

}  // namespace

Result<TestJobOptions> ParseTestJobArgs(const std::vector<std::string>& args) {
  TestJobOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::string value;
    bool has_inline_value = false;
    if (auto eq = arg.find('='); StartsWith(arg, "--") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_inline_value = true;
    }
    const Flag* flag = nullptr;
    for (const Flag& f : kFlags) {
      if (arg == f.name) flag = &f;
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(StrCat("unknown argument '", args[i], "' (see --help)"));
    }
    if (flag->value == nullptr) {
      if (has_inline_value) return Bad(arg, value, "takes no value");
    } else if (!has_inline_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(StrCat(arg, ": missing value ", flag->value));
      }
      value = args[++i];
    }
    RETURN_IF_ERROR(Apply(o, arg, value));
  }
  return o;
}

std::string TestJobHelp() {
  std::string out =
      "lh-testjob: a configurable stage program for longhaul's tests and benchmarks.\n"
      "It follows the stage protocol (LONGHAUL_EVENTS, LONGHAUL_OUTPUT_DIR, ...).\n\n"
      "Flags:\n";
  for (const Flag& f : kFlags) {
    std::string left = f.value ? StrCat(f.name, " ", f.value) : std::string(f.name);
    if (left.size() < 26) left.append(26 - left.size(), ' ');
    out += StrCat("  ", left, " ", f.help, "\n");
  }
  return out;
}

}  // namespace longhaul::testjob
