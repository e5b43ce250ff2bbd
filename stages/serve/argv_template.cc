#include "stages/serve/argv_template.h"

#include "core/strings.h"

namespace longhaul::stages {
namespace {

// "${name...}" -> "name"; anything else -> "".
std::string ListVariable(std::string_view element) {
  if (StartsWith(element, "${") && EndsWith(element, "...}") && element.size() > 6) {
    std::string_view name = element.substr(2, element.size() - 6);
    if (name.find_first_of("${}") == std::string_view::npos) return std::string(name);
  }
  return "";
}

Status AppendElement(const std::string& element, const TemplateVars& vars, std::string_view where,
                     std::vector<std::string>& out) {
  std::string list = ListVariable(element);
  if (!list.empty()) {
    auto it = vars.find(list);
    if (it == vars.end()) {
      return absl::InvalidArgumentError(StrCat(where, ": undefined variable '", list, "'"));
    }
    ASSIGN_OR_RETURN(std::vector<std::string> words, ShellSplit(it->second));
    for (auto& w : words) out.push_back(std::move(w));
    return OkStatus();
  }
  ASSIGN_OR_RETURN(std::string value, SubstituteVars(element, vars, where));
  if (value.empty()) {
    return absl::InvalidArgumentError(
        StrCat(where, ": '", element, "' renders empty; set the variable it names"));
  }
  out.push_back(std::move(value));
  return OkStatus();
}

}  // namespace

Result<std::string> SubstituteVars(std::string_view text, const TemplateVars& vars,
                                   std::string_view where) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find("${", i);
    if (open == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, open - i));
    size_t close = text.find('}', open + 2);
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(StrCat(where, ": unterminated '${' in '", text, "'"));
    }
    std::string name(text.substr(open + 2, close - open - 2));
    auto it = vars.find(name);
    if (it == vars.end()) {
      return absl::InvalidArgumentError(StrCat(where, ": undefined variable '", name, "'"));
    }
    out.append(it->second);
    i = close + 1;
  }
  return out;
}

Result<std::vector<std::string>> ShellSplit(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size() &&
                 (text[i + 1] == '"' || text[i + 1] == '\\')) {
        cur.push_back(text[++i]);
      } else {
        cur.push_back(c);
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      cur.push_back(text[++i]);
      in_word = true;
    } else {
      cur.push_back(c);
      in_word = true;
    }
  }
  if (quote != 0) {
    return absl::InvalidArgumentError(StrCat("unterminated ", quote, " quote in '", text, "'"));
  }
  if (in_word) out.push_back(std::move(cur));
  return out;
}

Result<RenderedCommand> RenderCommand(const EngineProfile& p, const TemplateVars& vars) {
  RenderedCommand cmd;
  for (size_t i = 0; i < p.argv.size(); ++i) {
    RETURN_IF_ERROR(AppendElement(p.argv[i], vars, StrCat(p.path, ": argv[", i, "]"), cmd.argv));
  }
  for (size_t s = 0; s < p.optional.size(); ++s) {
    const ArgvSection& sec = p.optional[s];
    bool on = true;
    for (const auto& w : sec.when) {
      auto it = vars.find(w);
      if (it == vars.end() || it->second.empty()) on = false;
    }
    if (!on) continue;
    for (size_t i = 0; i < sec.argv.size(); ++i) {
      RETURN_IF_ERROR(AppendElement(sec.argv[i], vars,
                                    StrCat(p.path, ": optional[", s, "].argv[", i, "]"), cmd.argv));
    }
  }
  for (const auto& [k, v] : p.env) {
    ASSIGN_OR_RETURN(cmd.env[k], SubstituteVars(v, vars, StrCat(p.path, ": env.", k)));
  }
  return cmd;
}

}  // namespace longhaul::stages
