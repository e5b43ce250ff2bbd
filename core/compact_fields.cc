#include "core/compact_fields.h"

#include <mutex>
#include <set>

namespace longhaul {

const std::string& InternedString::Intern(std::string_view s) {
  if (s.empty()) return Empty();
  static std::mutex mu;
  static auto* values = new std::set<std::string, std::less<>>();  // never freed: read at exit
  std::lock_guard<std::mutex> lock(mu);
  auto it = values->find(s);
  if (it == values->end()) it = values->emplace(s).first;
  return *it;
}

}  // namespace longhaul
