// lh-refengine started as a real process by a test (refengine, finetune and inspect tests):
// on port 0, its port file and log in the test's directory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/testing/test_util.h"

namespace longhaul::refengine::testing {

struct RefengineServer {
  std::unique_ptr<longhaul::testing::Subprocess> proc;
  int port = 0;             // 0 when it never wrote its port file
  std::string log;          // its stdout and stderr
  std::string url() const;  // http://127.0.0.1:PORT
};

// Starts lh-refengine with `args`; port file and log are dir/NAME.port and dir/NAME.log. Waits
// up to timeout_ms for the port file and, with wait_healthy, as long again for /health to answer
// 200. What goes wrong is a test failure (EXPECT, with the log); check HasFailure() to stop.
RefengineServer StartRefengine(const longhaul::testing::TempDir& dir, const std::string& name,
                               const std::vector<std::string>& args, bool wait_healthy = true,
                               int64_t timeout_ms = 20'000);

}  // namespace longhaul::refengine::testing
