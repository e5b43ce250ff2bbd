#include "agent/gpu/xid_table.h"

#include "core/fs.h"
#include "core/strings.h"

namespace longhaul::agent {

const char* XidClassName(XidClass c) {
  switch (c) {
    case XidClass::kHardware:
      return "hardware";
    case XidClass::kApplication:
      return "application";
    case XidClass::kInfo:
      return "info";
    case XidClass::kUnknown:
      break;
  }
  return "unknown";
}

XidTable XidTable::Builtin() {
  auto table = Parse(BuiltinXidTableCsv(), "the built-in XID table");
  // The build compiles the checked-in file, and xid_table_test parses it: never fails here.
  return table.ok() ? *std::move(table) : XidTable();
}

Result<XidTable> XidTable::Parse(const std::string& text, const std::string& source) {
  XidTable table;
  int line_no = 0;
  for (const std::string& raw : StrSplit(text, '\n')) {
    ++line_no;
    std::string_view line = StripWhitespace(raw);
    if (line.empty() || line.front() == '#') continue;
    auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(StrCat(source, " line ", line_no, ": '", line, "': ", why));
    };
    size_t first = line.find(',');
    size_t second = first == std::string_view::npos ? first : line.find(',', first + 1);
    if (second == std::string_view::npos) return bad("expected xid,class,description");
    std::optional<int64_t> xid = ParseInt64(StripWhitespace(line.substr(0, first)));
    if (!xid || *xid <= 0 || *xid > 100'000) return bad("the XID is not a positive number");
    std::string_view cls = StripWhitespace(line.substr(first + 1, second - first - 1));
    XidEntry e;
    if (cls == "hardware") {
      e.cls = XidClass::kHardware;
    } else if (cls == "application") {
      e.cls = XidClass::kApplication;
    } else if (cls == "info") {
      e.cls = XidClass::kInfo;
    } else {
      return bad("the class is not hardware, application or info");
    }
    e.description = std::string(StripWhitespace(line.substr(second + 1)));
    table.entries_[static_cast<int>(*xid)] = std::move(e);
  }
  return table;
}

Result<XidTable> XidTable::BuiltinWithOverrides(const std::string& path) {
  XidTable table = Builtin();
  if (path.empty()) return table;
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  ASSIGN_OR_RETURN(XidTable overrides, Parse(text, path));
  table.Override(overrides);
  return table;
}

XidEntry XidTable::Classify(int xid) const {
  auto it = entries_.find(xid);
  return it == entries_.end() ? XidEntry{} : it->second;
}

void XidTable::Override(const XidTable& other) {
  for (const auto& [xid, e] : other.entries_) entries_[xid] = e;
}

}  // namespace longhaul::agent
