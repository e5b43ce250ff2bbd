#include "tests/stages/refengine/refengine_process.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/strings.h"
#include "tests/stages/refengine/http_test_client.h"

namespace longhaul::refengine::testing {

using longhaul::testing::BinPath;
using longhaul::testing::ReadTextFile;
using longhaul::testing::Subprocess;
using longhaul::testing::WaitFor;

std::string RefengineServer::url() const { return StrCat("http://127.0.0.1:", port); }

RefengineServer StartRefengine(const longhaul::testing::TempDir& dir, const std::string& name,
                               const std::vector<std::string>& args, bool wait_healthy,
                               int64_t timeout_ms) {
  RefengineServer s;
  std::string port_file = dir.Join(name + ".port");
  s.log = dir.Join(name + ".log");
  std::vector<std::string> argv = {BinPath("lh-refengine"), "--port", "0", "--port-file",
                                   port_file};
  argv.insert(argv.end(), args.begin(), args.end());
  auto proc = Subprocess::Start(argv, {}, s.log);
  EXPECT_TRUE(proc.ok()) << proc.status();
  if (!proc.ok()) return s;
  s.proc = std::move(*proc);
  EXPECT_TRUE(WaitFor([&] { return !ReadTextFile(port_file).empty(); }, timeout_ms))
      << ReadTextFile(s.log);
  s.port = std::atoi(ReadTextFile(port_file).c_str());
  if (wait_healthy && s.port > 0) {
    EXPECT_TRUE(WaitFor([&] { return HttpGet(s.port, "/health").status == 200; }, timeout_ms))
        << ReadTextFile(s.log);
  }
  return s;
}

}  // namespace longhaul::refengine::testing
