// `lh-inspect data`: what a generated conversations file (lh-datagen's output, or any
// conversations / ShareGPT / messages JSONL) really holds before a drafter is trained on it.
//
// Figures: samples, malformed lines (FILE:LINE each), empty or missing answers, answers cut
// inside the reasoning, failed samples (lh-datagen's *.failed.jsonl and its errors), the
// reasoning capture rate, length distributions in words (prompt, answer, reasoning: p50, p90,
// max), chat-template markers leaking into the text (docs/engines.md: a template mismatch is the
// most common cause of low acceptance), duplicate ids, prompts and answers.
//
// Every problem of the file is a finding in the report, never an error of the run: only a
// samples file that cannot be read at all is (NotFound / InvalidArgument naming it).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"
#include "stages/inspect/report.h"

namespace longhaul::inspect {

struct DataOptions {
  std::string samples;
  // lh-datagen's failed samples; "" looks for SAMPLES(without .jsonl).failed.jsonl beside it.
  std::string failed;
  std::vector<std::string> template_markers;  // empty: DefaultTemplateMarkers()
  // Duplicate prompts or answers above this fraction of samples are a warning, else a note.
  double max_duplicate_fraction = 0.01;
  size_t max_listed = 10;  // malformed lines listed one by one; the rest are counted
};

// <|im_start|>, <|im_end|>, <|assistant|>, <|user|>, <|system|>, <|end|>, <|eot_id|>,
// <|start_header_id|>, <|endoftext|>, <think>, </think>, [INST], [/INST].
std::vector<std::string> DefaultTemplateMarkers();

// Adds section "data" (figures), metrics and findings to `report`; a summary to `out`.
Status InspectData(const DataOptions& options, Report& report, std::ostream& out);

}  // namespace longhaul::inspect
