// What runs ran on, as `show` and `compare` print it (docs/cli.md): the workflow file's
// repository at submission (v1::SourceState) and each stage's attempt environment.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "longhaul/v1/types.pb.h"

namespace longhaul::cli {

// The environment of the stage's last attempt that recorded one; nullptr when none did (a
// reused stage: its attempts are the earlier run's).
const v1::AttemptEnvironment* LastEnvironment(const v1::Stage& stage);

// "environment:" and one row per stage with a recorded environment (nothing when none has).
void RenderEnvironmentTable(std::ostream& out, const v1::Run& run);

// One thing that differs between two runs besides their params.
struct ProvenanceDifference {
  std::string what;  // "source commit", "engine version (server)", ...
  std::string a;
  std::string b;
};

// In this order: source commit, branch, uncommitted changes (the diff's hash), then per stage
// the engine version, the executable's hash, and the agents' versions. Only what both runs
// recorded and that differs; a stage reused in either run compares the run that ran it.
std::vector<ProvenanceDifference> ProvenanceDifferences(const v1::Run& a, const v1::Run& b);

}  // namespace longhaul::cli
