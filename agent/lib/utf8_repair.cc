#include "agent/lib/utf8_repair.h"

#include <string>
#include <vector>

#include "core/utf8.h"

namespace longhaul::agent {
namespace {

using google::protobuf::FieldDescriptor;

// `s` repaired in place; true when it changed.
bool Repair(std::string* s) {
  if (IsValidUtf8(*s)) return false;
  *s = ToValidUtf8(*s);
  return true;
}

}  // namespace

int RepairUtf8(google::protobuf::Message* msg) {
  const google::protobuf::Reflection* r = msg->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(*msg, &fields);
  int changed = 0;
  for (const FieldDescriptor* f : fields) {
    if (f->type() == FieldDescriptor::TYPE_STRING) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(*msg, f); ++i) {
          std::string s = r->GetRepeatedString(*msg, f, i);
          if (Repair(&s)) {
            r->SetRepeatedString(msg, f, i, std::move(s));
            ++changed;
          }
        }
      } else {
        std::string s = r->GetString(*msg, f);
        if (Repair(&s)) {
          r->SetString(msg, f, std::move(s));
          ++changed;
        }
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(*msg, f); ++i) {
          changed += RepairUtf8(r->MutableRepeatedMessage(msg, f, i));
        }
      } else {
        changed += RepairUtf8(r->MutableMessage(msg, f));
      }
    }
  }
  return changed;
}

}  // namespace longhaul::agent
