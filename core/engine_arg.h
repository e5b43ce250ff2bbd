// Which engine profile a stage serves with: the stage's own argv says it (`lh-serve --profile
// NAME`). The agent reads it to record the engine's version with each attempt; the planner
// reads it to compare that version for a stage with `cache: {key_on: [engine_version]}`
// (docs/engine-profiles.md, "Engine versions").
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace longhaul {

// The value of `--profile NAME` (or `--profile=NAME`) when argv[0]'s file name is lh-serve;
// nullopt for any other stage, or an lh-serve without --profile.
std::optional<std::string> EngineProfileArg(const std::vector<std::string>& argv);

// The `--profiles-dir DIR` (or `--profiles-dir=DIR`) values of such an argv, in order.
std::vector<std::string> EngineProfileDirsArg(const std::vector<std::string>& argv);

}  // namespace longhaul
