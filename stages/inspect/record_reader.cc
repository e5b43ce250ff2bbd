#include "stages/inspect/record_reader.h"

#include <cerrno>
#include <fstream>

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::inspect {

using nlohmann::json;

Status ForEachJsonRecord(const std::string& path, const RecordFn& fn, const BadLineFn& bad) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoStatus("open", path, errno);
  std::string line;
  int line_no = 0;
  bool first = true;
  while (std::getline(in, line)) {
    ++line_no;
    std::string_view body = StripWhitespace(line);
    if (body.empty()) continue;
    if (first && body.front() == '[') {
      std::string all = line + "\n";
      all.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      json doc = json::parse(all, nullptr, /*allow_exceptions=*/false);
      if (doc.is_discarded() || !doc.is_array()) {
        bad(StrCat(path, ":", line_no), "starts with '[' but is not a valid JSON array");
        return OkStatus();
      }
      for (size_t i = 0; i < doc.size(); ++i) fn(doc[i], StrCat(path, ": record ", i));
      return OkStatus();
    }
    first = false;
    json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
    std::string where = StrCat(path, ":", line_no);
    if (doc.is_discarded()) {
      std::string shown(body.substr(0, 60));
      bad(where, StrCat("not valid JSON: ", shown, body.size() > 60 ? "..." : ""));
      continue;
    }
    fn(doc, where);
  }
  if (in.bad()) return ErrnoStatus("read", path, errno);
  return OkStatus();
}

}  // namespace longhaul::inspect
