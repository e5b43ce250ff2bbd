#include "core/lean.h"

#include <gtest/gtest.h>

#include <string>

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

TEST(LeanStringTest, KeepsEmbeddedNulsAndCopiesDeeply) {
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
