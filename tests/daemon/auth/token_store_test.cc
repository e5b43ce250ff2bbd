#include "daemon/auth/token_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testing/test_util.h"

namespace longhaul::auth {
namespace {

using ::testing::HasSubstr;

TEST(TokenStoreTest, ParsesRolesNamesAndHashesSkippingCommentsAndBlankLines) {
  std::string text = "# team tokens\n\n" + TokenLine(Role::kViewer, "vera", "t1") + "\n  " +
                     TokenLine(Role::kAdmin, "ada", "t2") + "  \n";
  Result<std::vector<TokenEntry>> entries = ParseTokens(text, "tokens");
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].role, Role::kViewer);
  EXPECT_EQ((*entries)[0].name, "vera");
  EXPECT_EQ("sha256:" + (*entries)[1].sha256_hex, HashToken("t2"));
}

TEST(TokenStoreTest, MalformedLinesNameFileAndLine) {
  std::string good = TokenLine(Role::kOperator, "olga", "t1");
  struct Case {
    std::string text;
    std::string expected;
  } cases[] = {
      {"operator olga\n", "tokens:1: expected 'ROLE NAME sha256:HEX [TEAM]', got 2 fields"},
      {good + "\nroot bob " + HashToken("t2") + "\n", "tokens:2: unknown role 'root'"},
      {"admin b/ob " + HashToken("t2"), "tokens:1: name 'b/ob'"},
      {"admin bob lh_0123456789abcdef0123", "tokens:1: expected sha256: and 64 lower-case hex"},
      {good + "\n" + TokenLine(Role::kAdmin, "olga", "t2"), "tokens:2: name 'olga' appears twice"},
      {good + "\n" + TokenLine(Role::kAdmin, "bob", "t1"), "tokens:2: the token of 'bob'"},
  };
  for (const Case& c : cases) {
    Result<std::vector<TokenEntry>> r = ParseTokens(c.text, "tokens");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.expected));
  }
  // A token pasted in place of its hash is refused without echoing it whole.
  Result<std::vector<TokenEntry>> r =
      ParseTokens("admin bob lh_secretsecretsecretsecretsecret", "tokens");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), Not(HasSubstr("secretsecretsecret")));
}

TEST(TokenStoreTest, LooksUpByTokenAndKeepsTheOldTableWhenAReloadFails) {
  testing::TempDir dir;
  std::string path = dir.Join("tokens");
  testing::WriteTextFile(path, TokenLine(Role::kOperator, "olga", "first") + "\n");
  Result<std::unique_ptr<TokenStore>> store = TokenStore::Load(path);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Lookup("first").has_value());
  EXPECT_EQ((*store)->Lookup("first")->name, "olga");
  EXPECT_FALSE((*store)->Lookup("second").has_value());
  EXPECT_FALSE((*store)->Lookup("").has_value());

  testing::WriteTextFile(path, TokenLine(Role::kViewer, "vera", "second") + "\n");
  ASSERT_TRUE((*store)->Reload().ok());
  EXPECT_FALSE((*store)->Lookup("first").has_value());
  EXPECT_EQ((*store)->Lookup("second")->role, Role::kViewer);

  testing::WriteTextFile(path, "viewer vera\n");
  Status bad = (*store)->Reload();
  EXPECT_THAT(std::string(bad.message()), HasSubstr(path + ":1:"));
  EXPECT_TRUE((*store)->Lookup("second").has_value());
}

TEST(TokenStoreTest, MissingFileIsAnErrorNamingIt) {
  Result<std::unique_ptr<TokenStore>> store = TokenStore::Load("/nonexistent/tokens");
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("/nonexistent/tokens"));
}

TEST(TokenStoreTest, NewTokensAreDistinctAndLong) {
  Result<std::string> a = NewToken(), b = NewToken();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(a->size(), 3u + 64u);
  EXPECT_EQ(a->substr(0, 3), "lh_");
}

}  // namespace
}  // namespace longhaul::auth
