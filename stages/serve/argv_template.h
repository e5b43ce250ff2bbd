// Rendering a profile's argv and env templates (engine_profile.h) into a command line.
// Every value is substituted as one argv element (no shell), except an element that is
// exactly "${name...}", which expands to the value split like a shell would split words.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "stages/serve/engine_profile.h"

namespace longhaul::stages {

using TemplateVars = std::map<std::string, std::string>;

// "${name}" replaced by its value. InvalidArgument for an undefined name or an unterminated
// "${", prefixed by `where`.
Result<std::string> SubstituteVars(std::string_view text, const TemplateVars& vars,
                                   std::string_view where);

// Words as a POSIX shell splits them (whitespace; '...' and "..." group; backslash escapes),
// with no expansion of any kind. InvalidArgument for an unterminated quote.
Result<std::vector<std::string>> ShellSplit(std::string_view text);

struct RenderedCommand {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // added to lh-serve's own environment
};

// The profile's argv, with each optional section whose `when` variables are all non-empty,
// and its env. An argv element that renders empty is an error naming the variable to set.
Result<RenderedCommand> RenderCommand(const EngineProfile& profile, const TemplateVars& vars);

}  // namespace longhaul::stages
