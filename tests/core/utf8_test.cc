#include "core/utf8.h"

#include <gtest/gtest.h>

namespace longhaul {
namespace {

TEST(Utf8Test, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii {\"progress\": {}}"));
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));  // été € 😀
  EXPECT_TRUE(IsValidUtf8("\xEF\xBF\xBD"));                                      // U+FFFD
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));                                  // U+10FFFF
  EXPECT_TRUE(IsValidUtf8(std::string_view("a\0b", 3)));
}

TEST(Utf8Test, RejectsWhatProtobufRejects) {
  EXPECT_FALSE(IsValidUtf8("\xFF"));                // never in UTF-8
  EXPECT_FALSE(IsValidUtf8("\xC3"));                // truncated two-byte character
  EXPECT_FALSE(IsValidUtf8("ab\xE2\x82"));          // truncated three-byte character
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));            // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));        // overlong, three bytes
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));        // a surrogate, U+D800
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));    // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\x80 continuation"));  // a continuation byte alone
}

TEST(Utf8Test, ReplacesEachBadByteWithTheReplacementCharacter) {
  size_t replaced = 99;
  EXPECT_EQ(ToValidUtf8("ok", &replaced), "ok");
  EXPECT_EQ(replaced, 0u);
  EXPECT_EQ(ToValidUtf8("a\xFF" "b\xC3", &replaced), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  EXPECT_EQ(replaced, 2u);
  // A truncated character before a good one: the good one survives.
  EXPECT_EQ(ToValidUtf8("\xE2\x82\xC3\xA9", &replaced), "\xEF\xBF\xBD\xEF\xBF\xBD\xC3\xA9");
  EXPECT_EQ(replaced, 2u);
  // Whatever comes in, what goes out is valid.
  std::string junk;
  for (int i = 0; i < 256; ++i) junk += static_cast<char>(i);
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8(junk)));
  EXPECT_EQ(ToValidUtf8("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
}

}  // namespace
}  // namespace longhaul
