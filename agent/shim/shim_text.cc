// The shim's command line and its exit record's text (shim.h).
#include <cstdlib>
#include <string>
#include <vector>

#include "agent/shim/shim.h"
#include "agent/shim/shim_files.h"
#include "core/json_string.h"

namespace longhaul::shim {

std::string ExitRecordJson(int exit_code, int signal, int64_t ended_at_ms,
                           const std::string& reason, bool start_failed, int leftovers_killed,
                           int64_t memory_peak_bytes, int64_t cpu_usec) {
  std::string cut = reason;
  if (cut.size() > kMaxExitReasonBytes) {
    size_t end = kMaxExitReasonBytes;
    // Not inside a UTF-8 sequence: back up over continuation bytes to the sequence's start.
    while (end > 0 && (static_cast<unsigned char>(cut[end]) & 0xC0) == 0x80) --end;
    cut.resize(end);
  }
  return "{\"exit_code\":" + std::to_string(exit_code) + ",\"signal\":" + std::to_string(signal) +
         ",\"ended_at_ms\":" + std::to_string(ended_at_ms) + ",\"reason\":" + JsonQuote(cut) +
         ",\"start_failed\":" + (start_failed ? "true" : "false") +
         (leftovers_killed > 0 ? ",\"leftovers_killed\":" + std::to_string(leftovers_killed) : "") +
         (memory_peak_bytes >= 0 ? ",\"memory_peak_bytes\":" + std::to_string(memory_peak_bytes)
                                 : "") +
         (cpu_usec >= 0 ? ",\"cpu_usec\":" + std::to_string(cpu_usec) : "") + "}\n";
}

bool ParseShimArgs(const std::vector<std::string>& args, ShimOptions* opts, std::string* error) {
  size_t i = 0;
  for (; i < args.size() && args[i] != "--"; ++i) {
    const std::string& a = args[i];
    if ((a == "--dir" || a == "--grace-ms" || a == "--cgroup") && i + 1 < args.size()) {
      const std::string& v = args[++i];
      if (a == "--dir") {
        opts->dir = v;
      } else if (a == "--cgroup") {
        opts->cgroup = v;
      } else {
        char* end = nullptr;
        long long g = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || g < 0) {
          *error = "--grace-ms '" + v + "': expected milliseconds (an integer >= 0)";
          return false;
        }
        opts->grace_ms = g;
      }
    } else {
      *error = "unexpected argument '" + a + "'";
      return false;
    }
  }
  if (opts->dir.empty()) {
    *error = "--dir ATTEMPT_DIR is required";
    return false;
  }
  if (i + 1 >= args.size()) {
    *error = "missing '-- PROGRAM ARGS...'";
    return false;
  }
  opts->argv.assign(args.begin() + static_cast<long>(i) + 1, args.end());
  return true;
}

}  // namespace longhaul::shim
