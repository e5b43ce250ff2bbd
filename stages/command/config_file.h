// The config file the command backend writes before starting a command that takes its
// settings from a file rather than flags (SpecForge's `specforge train --config FILE.yaml`):
// a YAML document built from the workflow's KEY=VALUE pairs (--config-set), where a dotted
// KEY names nested sections ("training.num_epochs=5" -> training: {num_epochs: 5}).
//
// VALUE is read as YAML would read it after "key: " in the file: 5 is a number, true a bool,
// /models/x a string, [1, 2] a list; quote a string that would read as something else
// ('"5"', '"a: b"'). An empty VALUE is the empty string.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::command {

// The YAML text for `sets` (KEY=VALUE each), keys in the order first given. InvalidArgument,
// naming the pair, for a pair without '=', an empty key segment ("a..b"), a VALUE that is not
// valid YAML, a key given twice, or a key that is both a value and a section ("model=x" with
// "model.path=y").
Result<std::string> RenderConfigYaml(const std::vector<std::string>& sets);

}  // namespace longhaul::command
