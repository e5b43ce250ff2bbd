#include "daemon/workflow/foreach.h"

#include <cctype>
#include <cstdint>

#include "core/strings.h"
#include "daemon/workflow/template.h"

namespace longhaul::workflow {
namespace {

std::string NamePart(std::string_view value) {
  std::string out(value);
  for (char& c : out) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) c = '_';
  }
  return out.empty() ? "_" : out;
}

std::optional<std::vector<Scalar>> ReadValues(const MapEntry& e, std::string_view what,
                                              Diagnostics& diag) {
  std::optional<std::vector<Scalar>> values = ReadScalarList(e, what, diag);
  if (values && values->empty()) {
    diag.Add(e.value_pos, StrCat(what, ": expected at least one value"));
    return std::nullopt;
  }
  return values;
}

// `text` with ${item} / ${item.KEY} replaced; unknown keys reported at `s`'s column.
std::string Substitute(const Scalar& s, const Foreach& foreach, const ForeachItem& item,
                       std::string_view what, bool& ok, Diagnostics& diag) {
  const std::string& text = s.text;
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 3, "$${") == 0) {
      out += "$${";
      i += 3;
      continue;
    }
    size_t close = text.compare(i, 6, "${item") == 0 ? text.find('}', i) : std::string::npos;
    std::string_view body =
        close == std::string::npos ? "" : std::string_view(text).substr(i + 2, close - i - 2);
    if (body != "item" && body.substr(0, 5) != "item.") {
      out += text[i++];
      continue;
    }
    std::string key = body == "item" ? "" : std::string(body.substr(5));
    auto it = item.values.find(key);
    if (it == item.values.end()) {
      std::string have = foreach.keys.front().empty()
                             ? "a plain list: write ${item}"
                             : StrCat("its keys: ", StrJoin(foreach.keys, ", "));
      diag.Add(SourcePos{s.pos.line, s.pos.column + static_cast<int>(i) + (s.quoted ? 1 : 0)},
               StrCat(what, ": ${", body, "} is not an item of this stage's foreach (", have,
                      ")"));
      ok = false;
      out.append(text, i, close + 1 - i);
    } else {
      out += it->second;
    }
    i = close + 1;
  }
  return out;
}

}  // namespace

size_t Foreach::Count() const {
  size_t n = 1;
  for (const auto& v : values) {
    if (n > SIZE_MAX / v.size()) return SIZE_MAX;
    n *= v.size();
  }
  return n;
}

std::optional<Foreach> ReadForeach(const MapEntry& e, std::string_view where, Diagnostics& diag) {
  std::string what = StrCat("foreach in ", where);
  Foreach out;
  out.pos = e.key_pos;
  if (e.value.IsSequence()) {
    std::optional<std::vector<Scalar>> values = ReadValues(e, what, diag);
    if (!values) return std::nullopt;
    out.keys.push_back("");
    out.values.push_back(std::move(*values));
    return out;
  }
  if (!e.value.IsMap()) {
    diag.Add(e.value_pos, StrCat(what, ": expected a list of values or a mapping of KEY: [values]"
                                       ", got ", Describe(e.value)));
    return std::nullopt;
  }
  bool ok = true;
  std::vector<MapEntry> entries = ReadMap(e.value, what, "key", nullptr, diag);
  if (entries.empty()) {
    diag.Add(e.value_pos, StrCat(what, ": expected at least one key"));
    return std::nullopt;
  }
  for (const MapEntry& k : entries) {
    if (!IsTemplateName(k.key)) {
      diag.Add(k.key_pos, StrCat(what, ": '", k.key,
                                 "' is not a key name (a letter or _ then letters, digits, _ or -)"));
      ok = false;
      continue;
    }
    std::optional<std::vector<Scalar>> values =
        ReadValues(k, StrCat("foreach.", k.key, " in ", where), diag);
    if (!values) {
      ok = false;
      continue;
    }
    out.keys.push_back(k.key);
    out.values.push_back(std::move(*values));
  }
  if (!ok) return std::nullopt;
  return out;
}

std::vector<ForeachItem> ExpandForeach(const Foreach& foreach) {
  std::vector<ForeachItem> items(1);
  for (size_t k = 0; k < foreach.keys.size(); ++k) {
    std::vector<ForeachItem> next;
    next.reserve(items.size() * foreach.values[k].size());
    for (const ForeachItem& prefix : items) {
      for (const Scalar& v : foreach.values[k]) {
        ForeachItem item = prefix;
        item.suffix += StrCat(item.suffix.empty() ? "" : "-", NamePart(v.text));
        item.values[foreach.keys[k]] = v.text;
        next.push_back(std::move(item));
      }
    }
    items = std::move(next);
  }
  return items;
}

bool SubstituteItem(const Foreach& foreach, const ForeachItem& item, std::string_view stage,
                    ParsedStage& parsed, Diagnostics& diag) {
  bool ok = true;
  for (size_t i = 0; i < parsed.run.size(); ++i) {
    std::string what = StrCat("run[", i, "] in stage '", stage, "'");
    parsed.run[i].text = Substitute(parsed.run[i], foreach, item, what, ok, diag);
    parsed.spec->run[i] = parsed.run[i].text;
  }
  for (auto& [name, value] : parsed.fields.env) {
    std::string what = StrCat("env ", name, " in stage '", stage, "'");
    value.text = Substitute(value, foreach, item, what, ok, diag);
  }
  return ok;
}

void ExpandNeeds(const std::map<std::string, std::vector<std::pair<int, ForeachItem>>>& items,
                 const std::vector<const ForeachItem*>& item_of,
                 std::vector<ParsedStage>& stages) {
  for (size_t i = 0; i < stages.size(); ++i) {
    ParsedStage& stage = stages[i];
    bool any = false;
    for (const Scalar& need : stage.needs) any = any || items.count(need.text);
    if (!any) continue;
    std::vector<Scalar> needs;
    for (const Scalar& need : stage.needs) {
      auto it = items.find(need.text);
      if (it == items.end()) {
        needs.push_back(need);
        continue;
      }
      const ForeachItem* own = item_of[i];
      for (const auto& [index, item] : it->second) {
        // The same item when this stage sweeps every key the needed one does; else all.
        bool same_keys = own != nullptr;
        for (const auto& [key, value] : item.values) {
          same_keys = same_keys && own->values.count(key) > 0;
        }
        bool match = true;
        if (same_keys) {
          for (const auto& [key, value] : item.values) {
            match = match && own->values.at(key) == value;
          }
        }
        if (match) needs.push_back(Scalar{stages[index].spec->name, need.pos, need.quoted});
      }
    }
    stage.needs = std::move(needs);
    stage.spec->needs.clear();
    for (const Scalar& s : stage.needs) stage.spec->needs.push_back(s.text);
  }
}

}  // namespace longhaul::workflow
