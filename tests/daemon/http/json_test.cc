// Found by tests/fuzz/http_fuzzer: an error body that echoed bytes which are not UTF-8 (a
// method, a decoded path, a bad target) made nlohmann's dump() throw, which ended longhauld.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "daemon/http/json.h"
#include "daemon/http/message.h"
#include "daemon/http/static_files.h"

namespace longhaul::http {
namespace {

nlohmann::json ParseBody(const Response& r) {
  nlohmann::json body = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(body.is_discarded()) << r.body;
  return body;
}

TEST(ErrorResponseTest, ReplacesBytesThatAreNotUtf8) {
  Response r = ErrorResponse(404, absl::StatusCode::kNotFound, "no UI file /assets/\xff\xfe.js");
  EXPECT_EQ(r.status, 404);
  nlohmann::json body = ParseBody(r);
  EXPECT_EQ(body["error"], "no UI file /assets/\xEF\xBF\xBD\xEF\xBF\xBD.js");
  EXPECT_EQ(body["code"], "NOT_FOUND");
}

TEST(ErrorResponseTest, KeepsUtf8AsIs) {
  nlohmann::json body =
      ParseBody(ErrorResponse(absl::InvalidArgumentError("stage 'dat\xC3\xA9' is unknown")));
  EXPECT_EQ(body["error"], "stage 'dat\xC3\xA9' is unknown");
  EXPECT_EQ(body["code"], "INVALID_ARGUMENT");
}

TEST(ErrorResponseTest, BadTargetWithBytesThatAreNotUtf8) {
  Request request;
  Status s = ParseTarget("/x%zz\xff", &request);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  Response r = ErrorResponse(s);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(ParseBody(r)["error"].get<std::string>().find("bad percent escape"),
            std::string::npos);
}

TEST(StaticFilesTest, MissingAssetWhosePathIsNotUtf8IsA404) {
  Request request;
  request.method = "GET";
  ASSERT_TRUE(ParseTarget("/assets/%FF", &request).ok());
  EXPECT_EQ(request.path, "/assets/\xff");
  Response r = StaticFiles().Serve(request);
  EXPECT_EQ(r.status, 404);
  ParseBody(r);
}

TEST(StaticFilesTest, MethodThatIsNotUtf8IsA405) {
  Request request;
  request.method = "\xc7" "ET";
  request.path = "/";
  Response r = StaticFiles().Serve(request);
  EXPECT_EQ(r.status, 405);
  ParseBody(r);
}

}  // namespace
}  // namespace longhaul::http
