// lh-datagen's configuration, as its flags give it (stages/datagen/main.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"

namespace longhaul::stages {

struct DatagenOptions {
  std::string endpoint;
  std::string model;
  std::string prompts_file;
  std::string out_file;
  std::string failed_file;  // default: OUT with ".failed.jsonl" in place of ".jsonl"
  int64_t samples = 0;      // the first N prompts of the file
  int64_t concurrency = 8;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int64_t> max_tokens;
  std::optional<int64_t> seed;  // sent per request as seed + sample index, if set
  bool stream = true;
  double request_timeout_s = 600;
  int64_t max_request_retries = 5;
  double retry_initial_backoff_s = 1;
  double retry_max_backoff_s = 60;
  double max_failed_fraction = 0.01;
  // Abort when this many samples have failed and none has succeeded: a wrong model name
  // or endpoint would otherwise fail all 10,000 samples one by one.
  int64_t fail_fast_after = 20;
};

// InvalidArgument naming the flag. Fills failed_file when empty.
Status ValidateDatagenOptions(DatagenOptions& o);

}  // namespace longhaul::stages
