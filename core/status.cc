#include "core/status.h"

#include "core/strings.h"

namespace longhaul {

Status Annotate(const Status& s, std::string_view context) {
  if (s.ok()) return s;
  return Status(s.code(), StrCat(context, ": ", s.message()));
}

}  // namespace longhaul
