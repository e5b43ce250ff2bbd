#include "agent/lib/inventory.h"

#include <sched.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {
namespace {

Result<int64_t> ParseInt(std::string_view s, std::string_view what) {
  std::string str(StripWhitespace(s));
  char* end = nullptr;
  long long v = std::strtoll(str.c_str(), &end, 10);
  if (str.empty() || *end != '\0') {
    return absl::InvalidArgumentError(StrCat(what, ": '", str, "' is not an integer"));
  }
  return static_cast<int64_t>(v);
}

}  // namespace

Result<int64_t> ParseMemTotal(const std::string& meminfo) {
  for (const std::string& line : StrSplit(meminfo, '\n')) {
    if (!StartsWith(line, "MemTotal:")) continue;
    std::string rest(StripWhitespace(std::string_view(line).substr(9)));
    if (!EndsWith(rest, "kB")) {
      return absl::InvalidArgumentError(StrCat("/proc/meminfo: odd MemTotal line '", line, "'"));
    }
    ASSIGN_OR_RETURN(int64_t kb, ParseInt(rest.substr(0, rest.size() - 2), "MemTotal"));
    return kb * 1024;
  }
  return absl::NotFoundError("/proc/meminfo: no MemTotal line");
}

Result<int64_t> ParseMemorySize(const std::string& text) {
  std::string s(StripWhitespace(text));
  auto bad = [&] {
    return absl::InvalidArgumentError(
        StrCat("memory size '", text, "': expected a number with K, M, G or T (e.g. 16G)"));
  };
  if (EndsWith(s, "B") || EndsWith(s, "b")) s.pop_back();
  if (EndsWith(s, "i")) s.pop_back();
  int64_t unit = 1;
  if (!s.empty()) {
    switch (s.back()) {
      case 'K':
      case 'k':
        unit = 1LL << 10;
        break;
      case 'M':
      case 'm':
        unit = 1LL << 20;
        break;
      case 'G':
      case 'g':
        unit = 1LL << 30;
        break;
      case 'T':
      case 't':
        unit = 1LL << 40;
        break;
      default:
        break;
    }
    if (unit != 1) s.pop_back();
  }
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v)) return bad();
  return static_cast<int64_t>(v * static_cast<double>(unit));
}

std::string FindOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  for (const std::string& dir : StrSplit(path, ':')) {
    std::string full = StrCat(dir.empty() ? "." : dir, "/", program);
    if (::access(full.c_str(), X_OK) == 0) return full;
  }
  return "";
}

Inventory DetectInventory(const InventoryOverrides& overrides, const std::vector<GpuInfo>& gpus) {
  Inventory inv;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    inv.cpus = CPU_COUNT(&set);
  } else {
    inv.cpus = static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN));
    inv.notes.push_back("sched_getaffinity failed; counted online CPUs");
  }
  auto meminfo = ReadFile("/proc/meminfo");
  auto mem = meminfo.ok() ? ParseMemTotal(*meminfo) : Result<int64_t>(meminfo.status());
  if (mem.ok()) {
    inv.memory_bytes = *mem;
  } else {
    inv.notes.push_back(StrCat("memory not detected: ", ToStd(mem.status().message())));
  }
  inv.gpu_list = gpus;
  inv.gpus = static_cast<int>(gpus.size());
  if (overrides.cpus) inv.cpus = *overrides.cpus;
  if (overrides.memory_bytes) inv.memory_bytes = *overrides.memory_bytes;
  if (overrides.gpus) inv.gpus = *overrides.gpus;
  return inv;
}

}  // namespace longhaul::agent
