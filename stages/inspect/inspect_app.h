// lh-inspect's run: the chosen inspections, one report (JSON file, stage events, text on
// stdout), and the exit code.
//
// Exit codes: 0 the inspection ran (whatever it found); 1 a finding at or above --fail-on,
// or an inspection could not run (a server that cannot be reached); 2 bad flags or input
// (a missing file, a bad URL), with a message naming it.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "core/event_writer.h"
#include "stages/inspect/data_inspector.h"
#include "stages/inspect/drafter_inspector.h"
#include "stages/inspect/predictions_inspector.h"

namespace longhaul::inspect {

struct InspectOptions {
  std::string mode;  // "data", "predictions", "drafter" or "all": names the default report
  std::optional<DataOptions> data;  // each set part runs, in this order
  std::optional<PredictionOptions> predictions;
  std::optional<DrafterOptions> drafter;
  std::string report_path;  // "": inspect_<mode>.json in the working directory; "-": none
  std::string fail_on;      // "", "warn" or "error"
};

int RunInspect(const InspectOptions& options, EventWriter& events, std::ostream& out,
               std::ostream& err);

}  // namespace longhaul::inspect
