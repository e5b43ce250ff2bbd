#include "core/json_string.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace longhaul {
namespace {

TEST(JsonStringTest, ValidUtf8IsWrittenAsNlohmannDumpsIt) {
  std::string every_control;
  for (int c = 0; c < 0x20; ++c) every_control += static_cast<char>(c);
  for (std::string s :
       {std::string(""), std::string("plain"), std::string("a \"quoted\" \\ path/x"), every_control,
        std::string("\x7f del"), std::string("h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x9A\x80")}) {
    EXPECT_EQ(JsonQuote(s), nlohmann::json(s).dump()) << nlohmann::json(s).dump();
  }
  EXPECT_EQ(JsonQuote("\b\f\n\r\t\x01\x1f"), "\"\\b\\f\\n\\r\\t\\u0001\\u001f\"");
}

TEST(JsonStringTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  // A lone continuation byte, a truncated sequence, an overlong '/', a surrogate.
  std::string s = "a\x80 b\xE2\x82 c\xC0\xAF d\xED\xA0\x80";
  std::string quoted = JsonQuote(s);
  nlohmann::json parsed;
  ASSERT_NO_THROW(parsed = nlohmann::json::parse(quoted)) << quoted;
  std::string text = parsed.get<std::string>();
  EXPECT_EQ(text.rfind("a\xEF\xBF\xBD b", 0), 0u) << text;
  EXPECT_EQ(text.find('\x80'), std::string::npos);
}

TEST(JsonStringTest, AppendsToWhatIsThere) {
  std::string out = "{\"k\":";
  AppendJsonString(out, "v");
  out += '}';
  EXPECT_EQ(out, "{\"k\":\"v\"}");
}

}  // namespace
}  // namespace longhaul
