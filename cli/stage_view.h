// How one stage reads in `longhaul show RUN STAGE`: its header, and with --why what decided
// its plan and what went into its cache key. Pure functions of the proto and the time.
#pragma once

#include <cstdint>
#include <string>

#include "longhaul/v1/types.pb.h"

namespace longhaul::cli {

// "run 12, stage left" and one "  label:  value" line each for its description, kind,
// status (and reason), needs, attempt and agent, start, end and elapsed time, and (unless
// WhyText follows, which says them) plan and cache key; lines with nothing to say are left out.
std::string StageHeaderText(const v1::Run& run, const v1::Stage& stage, int64_t now_ms,
                            bool with_plan = true);

// "why:" and what decided the stage: the plan (run or reuse, and why), where a reused stage's
// result comes from, and the stage's recorded fingerprint: its definition as written (kind,
// run and env templates, cache_version), the params it uses with their values, and the keys
// of the stages it needs. A fingerprint that is missing or does not parse is said to be so,
// with the error.
std::string WhyText(const v1::Stage& stage);

}  // namespace longhaul::cli
