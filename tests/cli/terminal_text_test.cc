// The one rule for printing stage-supplied text on a terminal: every control character and
// every invalid UTF-8 byte shown escaped, everything else kept.
#include "cli/terminal_text.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace longhaul::cli {
namespace {

std::string Hex(unsigned c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

TEST(TerminalSafeTest, EveryC0ControlAndDelIsEscaped) {
  const std::string named[] = {"\\a", "\\b", "\\t", "\\n", "\\v", "\\f", "\\r"};
  for (unsigned c = 0; c < 0x20; ++c) {
    std::string expected = c == 0x1B ? "\\e" : (c >= 0x07 && c <= 0x0D) ? named[c - 0x07] : Hex(c);
    EXPECT_EQ(TerminalSafe(std::string(1, static_cast<char>(c))), expected) << c;
  }
  EXPECT_EQ(TerminalSafe("\x7f"), "\\x7f");
}

TEST(TerminalSafeTest, EveryC1ControlIsEscapedAsItsCodePoint) {
  for (unsigned cp = 0x80; cp <= 0x9F; ++cp) {
    std::string utf8 = {static_cast<char>(0xC2), static_cast<char>(cp)};
    char expected[12];
    std::snprintf(expected, sizeof expected, "\\u%04x", cp);
    EXPECT_EQ(TerminalSafe(utf8), expected) << cp;
  }
}

TEST(TerminalSafeTest, EveryByteThatIsNotValidUtf8IsEscaped) {
  // Lone continuation bytes and lone lead bytes, 8-bit C1 (0x9b is CSI) included.
  for (unsigned c = 0x80; c <= 0xFF; ++c) {
    EXPECT_EQ(TerminalSafe(std::string(1, static_cast<char>(c))), Hex(c)) << c;
  }
  EXPECT_EQ(TerminalSafe("\xC0\x80"), "\\xc0\\x80");                    // overlong NUL
  EXPECT_EQ(TerminalSafe("\xE0\x80\xAF"), "\\xe0\\x80\\xaf");           // overlong '/'
  EXPECT_EQ(TerminalSafe("\xED\xA0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(TerminalSafe("\xF4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(TerminalSafe("ok\xE2\x82"), "ok\\xe2\\x82");                // cut short at the end
  EXPECT_EQ(TerminalSafe("\xE2\x82x"), "\\xe2\\x82x");                  // cut short by ASCII
}

TEST(TerminalSafeTest, PrintableTextIsKeptAsItIs) {
  std::string text = "loss=0.25 path=/data/x\\y \"q\" 'a' ~`!@#$%^&*()_+{}|:<>? é 日本 🙂";
  EXPECT_EQ(TerminalSafe(text), text);
  EXPECT_EQ(TerminalSafe("\xC2\xA0"), "\xC2\xA0");  // U+00A0, the first after C1
  EXPECT_EQ(TerminalSafe(""), "");
}

TEST(TerminalSafeTest, BidiOverridesAndIsolatesAreEscaped) {
  EXPECT_EQ(TerminalSafe("a\xE2\x80\xAE"
                         "b"),
            "a\\u202eb");                                   // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(TerminalSafe("\xE2\x81\xA6"), "\\u2066");       // LEFT-TO-RIGHT ISOLATE
  EXPECT_EQ(TerminalSafe("\xE2\x80\x8F"), "\xE2\x80\x8F");  // RLM alone reorders nothing
}

TEST(TerminalSafeTest, TheAttacksOfTheDocsComeOutVisible) {
  EXPECT_EQ(TerminalSafe("\x1b]0;pwned\a"), "\\e]0;pwned\\a");  // window title
  EXPECT_EQ(TerminalSafe("\x1b[31mred\x1b[0m"), "\\e[31mred\\e[0m");
  EXPECT_EQ(TerminalSafe("ok\nleft   succeeded"), "ok\\nleft   succeeded");  // fake row
  EXPECT_EQ(TerminalSafe("\x9b"
                         "2J"),
            "\\x9b2J");  // 8-bit CSI: clear screen
}

TEST(TerminalSafeLogTest, KeepsLinesAndTabsAndEscapesTheRest) {
  TerminalSafeLog log;
  EXPECT_EQ(log.Feed("step 1\tok\n\x1b[2Jstep 2\r\n"), "step 1\tok\n\\e[2Jstep 2\\r\n");
  EXPECT_EQ(log.Finish(), "");
}

TEST(TerminalSafeLogTest, ASequenceCutBetweenChunksIsJoinedNotEscaped) {
  TerminalSafeLog log;
  std::string smile = "\xF0\x9F\x99\x82";
  EXPECT_EQ(log.Feed("a" + smile.substr(0, 1)), "a");
  EXPECT_EQ(log.Feed(smile.substr(1, 2)), "");
  EXPECT_EQ(log.Feed(smile.substr(3) + "b"), smile + "b");
  // A C1 control cut in two is still escaped once whole.
  EXPECT_EQ(log.Feed("\xC2"), "");
  EXPECT_EQ(log.Feed("\x9B"), "\\u009b");
  // Cut and never completed: escaped at the end.
  EXPECT_EQ(log.Feed("z\xE2\x82"), "z");
  EXPECT_EQ(log.Finish(), "\\xe2\\x82");
}

}  // namespace
}  // namespace longhaul::cli
