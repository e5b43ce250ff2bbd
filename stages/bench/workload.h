// What lh-bench sends: request bodies built once before the run, so the event loop only
// copies a string per request.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "stages/bench/bench_options.h"

namespace longhaul::stages {

struct Workload {
  // Request i sends bodies[i % bodies.size()].
  std::vector<std::string> bodies;
  std::string description;  // for the log and the result file
};

// From --prompts: each conversation's turns before its first assistant answer (system and
// user turns), sent as chat messages, or joined with newlines as a completions prompt; in
// file order. From --random-*: prompts of random words (one word is about one token on
// word-level tokenizers; real tokenizers differ), at most 1000 distinct ones cycled, with
// max_tokens = the output length and ignore_eos so every answer has that length.
Result<Workload> BuildWorkload(const BenchOptions& o);

}  // namespace longhaul::stages
