// What a path can reach through longhauld's HTTP listener, against a real cluster: logs only
// by run, stage, attempt and stream (traversal in any encoding is a 4xx and reads nothing; the
// agent follows no symlink planted as a log), the one bound on a log read (at it and past
// it, over HTTP and gRPC), and the UI's files only inside --ui-dir.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/log_read.h"
#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

constexpr char kSecret[] = "SECRET-OUTSIDE-THE-ATTEMPT\n";

constexpr char kHello[] =
    "name: hello\n"
    "stages:\n"
    "  greet:\n"
    "    run: [lh-testjob, --print, hello, --stderr, oops]\n";

class HttpPathsTest : public ClusterTest {
 protected:
  void Start(std::vector<std::string> flags = {}) {
    ClusterOptions o;
    o.coordinator_flags = std::move(flags);
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
    addr_ = cluster().http_address();
    ASSERT_FALSE(addr_.empty());
    secret_ = cluster().WriteFile("secret.txt", kSecret);
  }
  // Runs kHello to its end; returns the run id and sets attempt_dir_.
  int64_t RunHello() {
    Result<int64_t> id = cluster().Submit(kHello);
    EXPECT_TRUE(id.ok()) << id.status();
    if (!id.ok()) return 0;
    Result<v1::Run> run = cluster().WaitForRunEnd(*id);
    EXPECT_TRUE(run.ok() && run->status() == v1::RUN_SUCCEEDED) << cluster().Logs();
    if (!run.ok()) return 0;
    attempt_dir_ = AttemptDirOf(cluster(), run->stages(0).attempts(0));
    EXPECT_TRUE(std::filesystem::exists(attempt_dir_ + "/stdout.log")) << attempt_dir_;
    return *id;
  }
  Result<HttpResult> Get(const std::string& target) { return HttpGet(addr_, target); }
  // `target` is answered with a 4xx that carries neither the secret nor a log.
  void ExpectRefused(const std::string& target) {
    auto r = Get(target);
    ASSERT_TRUE(r.ok()) << target << ": " << r.status();
    EXPECT_GE(r->status, 400) << target << ": " << r->body;
    EXPECT_LT(r->status, 500) << target << ": " << r->body;
    EXPECT_EQ(r->body.find("SECRET"), std::string::npos) << target;
    EXPECT_EQ(r->body.find("root:"), std::string::npos) << target;
    EXPECT_EQ(r->Header("content-type"), "application/json") << target << ": " << r->body;
  }
  std::string addr_;
  std::string secret_;
  std::string attempt_dir_;
};

TEST_F(HttpPathsTest, LogRequestsThatTraverseAreRefused) {
  ASSERT_NO_FATAL_FAILURE(Start());
  std::string run = std::to_string(RunHello());
  std::string base = "/api/v1/runs/" + run + "/stages/";
  auto good = Get(base + "greet/logs?offset=0");
  ASSERT_TRUE(good.ok());
  ASSERT_EQ(good->status, 200) << good->body;
  EXPECT_EQ(good->body, "hello\n");
  EXPECT_EQ(good->Header("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(good->Header("x-content-type-options"), "nosniff");

  for (const std::string& stage : std::vector<std::string>{
           "..", "%2e%2e", "..%2f..%2fsecret.txt", "%2e%2e%2f%2e%2e%2fsecret.txt",
           "%252e%252e%252fsecret.txt", "%252e%252e", "..%5c..%5csecret.txt", "greet%5c..",
           "%2fetc%2fpasswd", "%2f" + secret_, "greet%00", "greet%00..", ".", "greet%2f..",
           "%ff%fe..", "greet%0d%0aX-Evil:%201"}) {
    SCOPED_TRACE(stage);
    ExpectRefused(base + stage + "/logs?offset=0");
    ExpectRefused(base + stage + "/logs?download=1");
    ExpectRefused(base + stage + "/logs/search?q=SECRET");
  }
  for (const std::string& stream : std::vector<std::string>{
           "..%2fsecret.txt", "../../secret.txt", "%2e%2e%2fstdout", "%252e%252e%252fstdout",
           "..%5cstdout", "%2fetc%2fpasswd", "stdout%00", "stdout%00.txt", "stdout.log"}) {
    SCOPED_TRACE(stream);
    ExpectRefused(base + "greet/logs?offset=0&stream=" + stream);
    ExpectRefused(base + "greet/logs?download=1&stream=" + stream);
    ExpectRefused(base + "greet/logs/search?q=SECRET&stream=" + stream);
  }
  ExpectRefused("/api/v1/%ff%fe/..");  // not UTF-8: still a JSON error
  EXPECT_EQ(Get("/healthz")->body, "ok");
  // The gRPC twin refuses the same names.
  for (const std::string& stage :
       std::vector<std::string>{"..", "../greet", "greet/..", "/etc/passwd", "a\\b"}) {
    grpc::ClientContext ctx;
    v1::ReadLogRequest req;
    req.set_run_id(std::stoll(run));
    req.set_stage(stage);
    v1::ReadLogResponse resp;
    grpc::Status s = cluster().stub().ReadLog(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << stage << ": " << s.error_message();
  }
}

TEST_F(HttpPathsTest, TheAgentFollowsNoSymlinkOrFifoPlantedAsALog) {
  ASSERT_NO_FATAL_FAILURE(Start());
  std::string run = std::to_string(RunHello());
  std::string base = "/api/v1/runs/" + run + "/stages/greet/logs?offset=0";
  std::filesystem::remove(attempt_dir_ + "/stdout.log");
  std::filesystem::create_symlink(secret_, attempt_dir_ + "/stdout.log");
  ExpectRefused(base);
  ExpectRefused(base + "&download=1");
  ExpectRefused("/api/v1/runs/" + run + "/stages/greet/logs/search?q=SECRET");
  std::filesystem::remove(attempt_dir_ + "/stderr.log");
  ASSERT_EQ(::mkfifo((attempt_dir_ + "/stderr.log").c_str(), 0600), 0);
  ExpectRefused(base + "&stream=stderr");  // answered at once, not blocked on the FIFO
  auto logs = cluster().Cli({"logs", run, "greet"});
  EXPECT_NE(logs.exit_code, 0);
  EXPECT_EQ(logs.out.find("SECRET"), std::string::npos) << logs.out;
}

TEST_F(HttpPathsTest, OneReadIsBoundedOverHttpAndGrpcAndADownloadPagesPastIt) {
  ASSERT_NO_FATAL_FAILURE(Start());
  int64_t id = RunHello();
  std::string log;
  for (int64_t i = 0; static_cast<int64_t>(log.size()) < kMaxLogReadBytes + 1000; ++i) {
    log += StrCat("line ", i, "\n");
  }
  WriteTextFile(attempt_dir_ + "/stdout.log", log);
  std::string base = StrCat("/api/v1/runs/", id, "/stages/greet/logs?offset=0&max_bytes=");

  auto at = Get(base + std::to_string(kMaxLogReadBytes));
  ASSERT_TRUE(at.ok());
  ASSERT_EQ(at->status, 200) << at->body.substr(0, 200);
  EXPECT_EQ(at->body, log.substr(0, kMaxLogReadBytes));
  EXPECT_EQ(at->Header("x-longhaul-next-offset"), std::to_string(kMaxLogReadBytes));
  EXPECT_EQ(at->Header("x-longhaul-finished"), "false");
  for (int64_t past : {kMaxLogReadBytes + 1, int64_t{1} << 40}) {
    auto clamped = Get(base + std::to_string(past));
    ASSERT_TRUE(clamped.ok());
    ASSERT_EQ(clamped->status, 200) << past;
    EXPECT_EQ(clamped->body.size(), static_cast<size_t>(kMaxLogReadBytes)) << past;
    EXPECT_EQ(clamped->Header("x-longhaul-next-offset"), std::to_string(kMaxLogReadBytes));
  }
  auto rest = Get(
      StrCat("/api/v1/runs/", id, "/stages/greet/logs?max_bytes=4096&offset=", kMaxLogReadBytes));
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->body, log.substr(kMaxLogReadBytes));
  EXPECT_EQ(rest->Header("x-longhaul-finished"), "true");

  auto download = Get(StrCat("/api/v1/runs/", id, "/stages/greet/logs?download=1"));
  ASSERT_TRUE(download.ok());
  ASSERT_EQ(download->status, 200);
  EXPECT_EQ(download->body.size(), log.size());
  EXPECT_TRUE(download->body == log);
  EXPECT_EQ(download->Header("x-longhaul-finished"), "true");
  EXPECT_EQ(download->Header("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(download->Header("content-disposition"),
            StrCat("attachment; filename=\"run", id, "-greet-attempt1.stdout.log\""));

  for (int64_t max : {kMaxLogReadBytes, kMaxLogReadBytes + 1, int64_t{INT32_MAX}}) {
    grpc::ClientContext ctx;
    v1::ReadLogRequest req;
    req.set_run_id(id);
    req.set_stage("greet");
    req.set_max_bytes(static_cast<int32_t>(max));
    v1::ReadLogResponse resp;
    grpc::Status s = cluster().stub().ReadLog(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.data().size(), static_cast<size_t>(kMaxLogReadBytes)) << max;
    EXPECT_EQ(resp.next_offset(), kMaxLogReadBytes);
    EXPECT_FALSE(resp.finished());
  }
}

TEST_F(HttpPathsTest, UiFilesAreServedOnlyFromInsideTheUiDir) {
  TempDir ui;
  WriteTextFile(ui.Join("index.html"), "<!doctype html><title>ui</title>");
  std::filesystem::create_directories(ui.Join("assets"));
  WriteTextFile(ui.Join("assets/app.js"), "console.log(1)");
  TempDir outside;
  WriteTextFile(outside.Join("secret.txt"), kSecret);
  std::filesystem::create_symlink(outside.Join("secret.txt"), ui.Join("passwd.txt"));
  std::filesystem::create_symlink(outside.Join("secret.txt"), ui.Join("assets/leak.js"));
  std::filesystem::create_symlink("/etc", ui.Join("etc"));
  std::filesystem::create_symlink(outside.path(), ui.Join("out"));
  std::filesystem::create_symlink("app.js", ui.Join("assets/alias.js"));  // stays inside
  ASSERT_NO_FATAL_FAILURE(Start({"--ui-dir", ui.path()}));

  for (const std::string& target : std::vector<std::string>{"/passwd.txt", "/assets/leak.js",
                                                            "/etc/passwd", "/out/secret.txt"}) {
    SCOPED_TRACE(target);
    auto r = Get(target);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 404) << r->body;
    EXPECT_EQ(r->body.find("SECRET"), std::string::npos);
  }
  for (const std::string& target : std::vector<std::string>{
           "/..%2f..%2fetc%2fpasswd", "/%2e%2e/%2e%2e/etc/passwd", "/%2e%2e%2f", "/assets/..%2f..",
           "/%252e%252e/%252e%252e/etc/passwd", "/..%5c..%5cetc%5cpasswd", "/..\\..\\etc\\passwd",
           "/index.html%00.txt", "/assets/./app.js", "/assets/%2e/app.js", "/%ff%fe/.."}) {
    SCOPED_TRACE(target);
    auto r = Get(target);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_EQ(r->body.find("SECRET"), std::string::npos);
    EXPECT_EQ(r->body.find("root:"), std::string::npos);
  }
  // An absolute path is a path under the folder: here none, so the app's page.
  auto absolute = Get("//etc/passwd");
  ASSERT_TRUE(absolute.ok());
  EXPECT_EQ(absolute->body.find("root:"), std::string::npos);
  auto alias = Get("/assets/alias.js");
  ASSERT_TRUE(alias.ok());
  EXPECT_EQ(alias->status, 200);
  EXPECT_EQ(alias->body, "console.log(1)");
  EXPECT_EQ(alias->Header("x-content-type-options"), "nosniff");
}

}  // namespace
}  // namespace longhaul::testing
