#include "cli/credentials.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "cli/cli_env.h"
#include "tests/testing/test_util.h"

namespace longhaul::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(CredentialsTest, TokenFileFlagThenEnvTokenThenEnvFile) {
  testing::TempDir dir;
  testing::WriteTextFile(dir.Join("flag"), "  lh_from_flag \n# ignored\n");
  testing::WriteTextFile(dir.Join("env"), "lh_from_env_file\n");
  std::map<std::string, std::string> vars = {{"LONGHAUL_TOKEN", "lh_from_env"},
                                             {"LONGHAUL_TOKEN_FILE", dir.Join("env")}};
  EXPECT_EQ(ResolveCredentials(dir.Join("flag"), "", vars)->token, "lh_from_flag");
  EXPECT_EQ(ResolveCredentials("", "", vars)->token, "lh_from_env");
  vars.erase("LONGHAUL_TOKEN");
  EXPECT_EQ(ResolveCredentials("", "", vars)->token, "lh_from_env_file");
  vars.clear();
  EXPECT_EQ(ResolveCredentials("", "", vars)->token, "");
}

TEST(CredentialsTest, UnreadableOrEmptyFilesAreErrorsNamingThem) {
  testing::TempDir dir;
  testing::WriteTextFile(dir.Join("empty"), "\n");
  testing::WriteTextFile(dir.Join("notpem"), "hello\n");
  Result<ClientCredentials> r = ResolveCredentials(dir.Join("missing"), "", {});
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("token file " + dir.Join("missing")));
  r = ResolveCredentials(dir.Join("empty"), "", {});
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("is empty"));
  r = ResolveCredentials("", "", {{"LONGHAUL_TLS_CA", dir.Join("notpem")}});
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("no PEM certificate"));
}

TEST(CredentialsTest, ATokenGoesInPlaintextOnlyToLoopback) {
  ClientCredentials creds;
  creds.token = "lh_secret";
  creds.token_from = "$LONGHAUL_TOKEN";
  EXPECT_TRUE(CheckTokenTransport("127.0.0.1:7070", creds).ok());
  EXPECT_TRUE(CheckTokenTransport("127.0.0.2:7070", creds).ok());
  EXPECT_TRUE(CheckTokenTransport("[::1]:7070", creds).ok());
  EXPECT_TRUE(CheckTokenTransport("localhost:7070", creds).ok());
  Status off = CheckTokenTransport("10.0.0.5:7070", creds);
  EXPECT_EQ(off.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(off.message()),
              HasSubstr("refusing to send the token (from $LONGHAUL_TOKEN) in plaintext to "
                        "10.0.0.5:7070"));
  EXPECT_THAT(std::string(off.message()), Not(HasSubstr("lh_secret")));
  EXPECT_FALSE(CheckTokenTransport("coord.example:7070", creds).ok());
  creds.tls_ca_pem = "-----BEGIN CERTIFICATE-----";
  EXPECT_TRUE(CheckTokenTransport("10.0.0.5:7070", creds).ok());
  // No token: nothing to protect.
  EXPECT_TRUE(CheckTokenTransport("10.0.0.5:7070", ClientCredentials{}).ok());
}

TEST(CredentialsTest, AuthErrorsPrintTheirKindAndDistinctExitCodes) {
  std::ostringstream out, err;
  CliEnv env;
  env.out = &out;
  env.err = &err;
  CommandContext ctx{env, "127.0.0.1:1", false, nullptr};
  EXPECT_EQ(ctx.Fail(absl::UnauthenticatedError("no token was sent")), 6);
  EXPECT_EQ(ctx.Fail(absl::PermissionDeniedError("vera (viewer) may not submit runs")), 7);
  EXPECT_EQ(err.str(),
            "longhaul: unauthenticated: no token was sent\n"
            "longhaul: permission denied: vera (viewer) may not submit runs\n");
}

}  // namespace
}  // namespace longhaul::cli
