#include "core/utf8.h"

namespace longhaul {

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ToValidUtf8(std::string_view s, size_t* replaced) {
  std::string out;
  out.reserve(s.size());
  size_t bad = 0;
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++bad;
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  if (replaced != nullptr) *replaced = bad;
  return out;
}

}  // namespace longhaul
