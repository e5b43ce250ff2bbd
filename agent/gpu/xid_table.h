// What an XID event says about the GPU that reported it, as data: the built-in table
// (agent/gpu/xid_classes.csv, compiled in) and an operator's file over it (--xid-table).
//
// Format, one entry a line: `xid,class,description`; `#` starts a comment line; class is
// hardware, application or info (xid_classes.csv says what each means).
#pragma once

#include <map>
#include <string>

#include "core/status.h"

namespace longhaul::agent {

enum class XidClass { kUnknown, kHardware, kApplication, kInfo };

// "hardware", "application", "info" or "unknown".
const char* XidClassName(XidClass c);

struct XidEntry {
  XidClass cls = XidClass::kUnknown;
  std::string description;
};

class XidTable {
 public:
  // The built-in table.
  static XidTable Builtin();
  // Parses `text`; InvalidArgument names `source`, the line and what is wrong with it.
  static Result<XidTable> Parse(const std::string& text, const std::string& source);
  // The built-in table with the entries of the file at `path` replacing or adding to it.
  static Result<XidTable> BuiltinWithOverrides(const std::string& path);

  // The entry of `xid`; kUnknown with an empty description when the table has none.
  XidEntry Classify(int xid) const;
  // Replaces or adds each entry of `other`.
  void Override(const XidTable& other);
  size_t size() const { return entries_.size(); }

 private:
  std::map<int, XidEntry> entries_;
};

// The text of agent/gpu/xid_classes.csv (generated into the build).
const char* BuiltinXidTableCsv();

}  // namespace longhaul::agent
