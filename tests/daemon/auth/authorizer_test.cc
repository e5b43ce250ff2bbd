#include "daemon/auth/authorizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace longhaul::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class AuthorizerTest : public ::testing::Test {
 protected:
  AuthorizerTest()
      : tokens_({TokenEntry{Role::kViewer, "vera", Sha(kViewer)},
                 TokenEntry{Role::kOperator, "olga", Sha(kOperator)},
                 TokenEntry{Role::kAdmin, "ada", Sha(kAdmin)}}),
        authorizer_(&tokens_) {}
  static std::string Sha(std::string_view token) { return HashToken(token).substr(7); }

  static constexpr char kViewer[] = "lh_viewer";
  static constexpr char kOperator[] = "lh_operator";
  static constexpr char kAdmin[] = "lh_admin";
  TokenStore tokens_;
  TokenAuthorizer authorizer_;
};

TEST_F(AuthorizerTest, NoTokenOrUnknownTokenIsUnauthenticated) {
  Result<Principal> none = authorizer_.Authorize("", "ipv4:10.0.0.5:4000", Action::kListRuns);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("no token was sent"));
  Result<Principal> wrong =
      authorizer_.Authorize("lh_guess", "ipv4:10.0.0.5:4000", Action::kListRuns);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(wrong.status().message()), Not(HasSubstr("lh_guess")));
}

TEST_F(AuthorizerTest, RolesAreOrderedViewerOperatorAdmin) {
  const Action reads[] = {Action::kGetRun,     Action::kListRuns, Action::kWatchRun,
                          Action::kListEvents, Action::kReadLog,  Action::kListAgents};
  const Action mutations[] = {Action::kSubmitRun, Action::kPivotRun, Action::kRetryStage,
                              Action::kCancelRun};
  const Action admin[] = {Action::kListAudit, Action::kBackup};
  for (Action a : reads) {
    for (const char* t : {kViewer, kOperator, kAdmin}) {
      EXPECT_TRUE(authorizer_.Authorize(t, "p", a).ok()) << ActionMethod(a) << " " << t;
    }
  }
  for (Action a : mutations) {
    EXPECT_TRUE(IsMutation(a));
    EXPECT_EQ(authorizer_.Authorize(kViewer, "p", a).status().code(),
              absl::StatusCode::kPermissionDenied);
    EXPECT_TRUE(authorizer_.Authorize(kOperator, "p", a).ok());
    EXPECT_TRUE(authorizer_.Authorize(kAdmin, "p", a).ok());
  }
  for (Action a : admin) {
    EXPECT_FALSE(authorizer_.Authorize(kOperator, "p", a).ok());
    EXPECT_TRUE(authorizer_.Authorize(kAdmin, "p", a).ok());
  }
}

TEST_F(AuthorizerTest, PermissionDeniedSaysWhoWhatAndWhichRoleIsNeeded) {
  Result<Principal> r = authorizer_.Authorize(kViewer, "ipv4:10.0.0.5:4000", Action::kSubmitRun);
  EXPECT_EQ(std::string(r.status().message()),
            "vera (viewer) may not submit runs: that needs the operator role");
}

TEST_F(AuthorizerTest, PrincipalCarriesNameRoleAndPeer) {
  Result<Principal> p = authorizer_.Authorize(kOperator, "ipv4:10.0.0.5:4000", Action::kCancelRun);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "olga");
  EXPECT_EQ(p->role, Role::kOperator);
  EXPECT_EQ(p->peer, "ipv4:10.0.0.5:4000");
}

TEST(OpenAuthorizerTest, AllowsEverythingAndNamesTheCallerByWhereItIs) {
  OpenAuthorizer open;
  EXPECT_EQ(open.Authorize("", "ipv4:127.0.0.1:5000", Action::kSubmitRun)->name, "local");
  EXPECT_EQ(open.Authorize("", "ipv4:10.1.2.3:5000", Action::kSubmitRun)->name, "anonymous");
}

TEST(BearerTokenTest, TakesTheBearerSchemeOnly) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer  abc "), "abc");
  EXPECT_EQ(BearerToken("Basic abc"), "");
  EXPECT_EQ(BearerToken("Bearer "), "");
  EXPECT_EQ(BearerToken(""), "");
}

}  // namespace
}  // namespace longhaul::auth
