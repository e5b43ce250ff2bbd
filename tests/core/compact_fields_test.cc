#include "core/compact_fields.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace longhaul {
namespace {

TEST(LeanStringTest, CostsOnePointerAndReadsAsTheTextItWasGiven) {
  static_assert(sizeof(LeanString) == sizeof(void*));
  LeanString s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.view(), "");
  EXPECT_NE(s.view().data(), nullptr);  // C APIs get "", never a null pointer
  s = std::string("waiting for an agent");
  EXPECT_EQ(s, "waiting for an agent");
  EXPECT_EQ(s.size(), 20u);
  EXPECT_EQ(s.str(), std::string("waiting for an agent"));
  s = "";
  EXPECT_TRUE(s.empty());
}

TEST(LeanStringTest, KeepsEmbeddedNulsAndCopiesShareTheText) {
  std::string text("a\0b", 3);
  LeanString a(text);
  LeanString b = a;
  a = "other";
  EXPECT_EQ(b.view(), std::string_view(text));
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(a, LeanString("other"));
  EXPECT_FALSE(a == b);
  a = a;  // self-assignment keeps the value
  EXPECT_EQ(a, "other");
  LeanString moved = std::move(a);
  EXPECT_EQ(moved, "other");
}

// A copy shares the text (one allocation for 100,000 stages given the same reason); setting
// either one again leaves the other as it was.
TEST(LeanStringTest, ACopySharesTheTextUntilEitherIsSetAgain) {
  LeanString reason("waiting for an agent with 0.01 cpus free");
  std::vector<LeanString> rows(1000, reason);
  for (const LeanString& r : rows) ASSERT_TRUE(r.SharesWith(reason));
  EXPECT_EQ(rows[7].view().data(), reason.view().data());
  rows[7] = "running";
  EXPECT_FALSE(rows[7].SharesWith(reason));
  EXPECT_EQ(reason, "waiting for an agent with 0.01 cpus free");
  reason = "changed";
  EXPECT_EQ(rows[8], "waiting for an agent with 0.01 cpus free");  // still held by the rest
  rows[8] = rows[8];  // self-assignment keeps it
  EXPECT_EQ(rows[8], "waiting for an agent with 0.01 cpus free");
  LeanString solo("abcdef");
  solo = solo.view().substr(2);  // set from its own text, its only holder
  EXPECT_EQ(solo, "cdef");
  rows.clear();  // the last holders free it (the sanitizer build checks for leaks)
  LeanString empty_copy = LeanString();
  EXPECT_FALSE(empty_copy.SharesWith(LeanString()));
}

TEST(OptInt64Test, BehavesAsAnOptionalInEightBytes) {
  static_assert(sizeof(OptInt64) == sizeof(int64_t));
  OptInt64 o;
  EXPECT_FALSE(o.has_value());
  EXPECT_FALSE(o);
  EXPECT_EQ(o, std::nullopt);
  EXPECT_EQ(o.value_or(5), 5);
  EXPECT_THROW((void)o.value(), std::bad_optional_access);
  o = 0;  // zero is a value, not "none"
  EXPECT_TRUE(o);
  EXPECT_EQ(*o, 0);
  o = -7;
  EXPECT_EQ(o, -7);
  EXPECT_EQ(o, std::optional<int64_t>(-7));
  std::optional<int64_t> back = o;
  EXPECT_EQ(back, -7);
  o.reset();
  EXPECT_EQ(std::optional<int64_t>(o), std::nullopt);
  o = std::optional<int64_t>(1'700'000'000'000);
  EXPECT_EQ(o.value(), 1'700'000'000'000);
  o = std::nullopt;
  EXPECT_FALSE(o);
  EXPECT_EQ(OptInt64(3), OptInt64(std::optional<int64_t>(3)));
}

TEST(InternedStringTest, EqualValuesShareOneCopy) {
  static_assert(sizeof(InternedString) == sizeof(void*));
  InternedString a = "task";
  InternedString b(std::string("ta") + "sk");
  EXPECT_EQ(a, b);
  EXPECT_EQ(&a.str(), &b.str());
  EXPECT_EQ(a, "task");
  EXPECT_FALSE(a == "service");
  InternedString empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty, InternedString(""));
  const std::string& as_string = a;
  EXPECT_EQ(as_string, "task");
  std::string_view as_view = b;
  EXPECT_EQ(as_view, "task");
  b = "reuse";
  EXPECT_EQ(b, "reuse");
  EXPECT_EQ(a, "task");
}

TEST(HeapMapTest, BehavesAsAMapOfEightBytesWhileEmpty) {
  static_assert(sizeof(HeapMap<std::string, std::string>) == sizeof(void*));
  HeapMap<std::string, std::string> m;
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.find("x"), m.end());
  EXPECT_EQ(m.begin(), m.end());
  m["rows"] = "100";
  EXPECT_EQ(m.at("rows"), "100");
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m.count("rows"), 1u);
  HeapMap<std::string, std::string> copy = m;
  m["rows"] = "200";
  EXPECT_EQ(copy.at("rows"), "100");  // a deep copy
  const std::map<std::string, std::string>& as_map = m;
  EXPECT_EQ(as_map.at("rows"), "200");
  m = {{"a", "1"}, {"b", "2"}};
  std::string keys;
  for (const auto& [k, v] : m) keys += k + v;
  EXPECT_EQ(keys, "a1b2");
  m = std::map<std::string, std::string>();
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(copy, (std::map<std::string, std::string>{{"rows", "100"}}));
  copy.clear();
  EXPECT_TRUE(copy.empty());
}

TEST(HeapOptionalTest, BehavesAsAnOptionalOfEightBytes) {
  struct Big {
    double x[8] = {};
  };
  static_assert(sizeof(HeapOptional<Big>) == sizeof(void*));
  HeapOptional<Big> o;
  EXPECT_FALSE(o);
  EXPECT_EQ(o.value_or(Big{{1}}).x[0], 1);
  o = Big{{2}};
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->x[0], 2);
  HeapOptional<Big> copy = o;
  o->x[0] = 3;
  EXPECT_EQ(copy->x[0], 2);  // a copy, not a shared value
  o = std::nullopt;
  EXPECT_FALSE(o);
  HeapOptional<Big> from_std = std::optional<Big>(Big{{4}});
  EXPECT_EQ((*from_std).x[0], 4);
}

}  // namespace
}  // namespace longhaul
