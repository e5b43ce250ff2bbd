#include "stages/refengine/output_processor.h"

#include <gtest/gtest.h>

#include "tests/stages/refmodel/refmodel_testing.h"

namespace longhaul::refengine {
namespace {

using refmodel::Tokenizer;
using refmodel::testing::Target;

const Tokenizer& Tok() { return Target().tokenizer(); }

// Feeds `text`'s tokens one at a time, taking a delta after each, and returns the
// concatenated deltas.
TextDelta Stream(OutputProcessor& p, const std::string& text, bool* stopped = nullptr) {
  TextDelta all;
  for (int32_t id : Tok().Encode(text)) {
    bool more = p.Add(id);
    TextDelta d = p.TakeDelta(!more);
    all.reasoning += d.reasoning;
    all.content += d.content;
    if (!more) {
      if (stopped) *stopped = true;
      break;
    }
  }
  TextDelta rest = p.TakeDelta(true);
  all.reasoning += rest.reasoning;
  all.content += rest.content;
  return all;
}

TEST(OutputProcessorTest, ChatSplitsReasoningAndTrimsSectionNewlines) {
  OutputProcessor p(&Tok(), /*chat=*/true, false, {});
  bool stopped = false;
  TextDelta d =
      Stream(p, "<think>\nThe user asks.\nIt is.\n</think>\nIt is Kepo.<|end|>", &stopped);
  EXPECT_TRUE(stopped);
  EXPECT_EQ(d.reasoning, "The user asks.\nIt is.");
  EXPECT_EQ(d.content, "It is Kepo.");
  EXPECT_EQ(p.reasoning(), d.reasoning);
  EXPECT_EQ(p.content(), d.content);
}

TEST(OutputProcessorTest, CompletionsKeepOneTextSpacedAfterThePrompt) {
  std::vector<int32_t> prompt = Tok().Encode("The capital of");
  OutputProcessor p(&Tok(), /*chat=*/false, false, {}, prompt.back());
  TextDelta d = Stream(p, "Lofoum is Kepo.<|end|>");
  EXPECT_EQ(d.content, " Lofoum is Kepo.");
  EXPECT_EQ(d.reasoning, "");
}

TEST(OutputProcessorTest, StopStringCutsAndIsNeverPartlySent) {
  OutputProcessor p(&Tok(), true, false, {"is Kepo"});
  std::string sent;
  bool stopped = false;
  for (int32_t id : Tok().Encode("The capital is Kepo and more.")) {
    bool more = p.Add(id);
    TextDelta d = p.TakeDelta(!more);
    // A prefix of the stop string is held back until it is known not to match.
    EXPECT_EQ(d.content.find("is"), std::string::npos) << d.content;
    sent += d.content;
    if (!more) {
      stopped = true;
      break;
    }
  }
  EXPECT_TRUE(stopped);
  EXPECT_EQ(sent, "The capital ");
}

TEST(OutputProcessorTest, HeldBackPrefixIsReleasedWhenItDoesNotMatch) {
  OutputProcessor p(&Tok(), true, false, {"is Kepo"});
  bool stopped = false;
  TextDelta d = Stream(p, "It is Tedriamont.<|end|>", &stopped);
  EXPECT_EQ(d.content, "It is Tedriamont.");
}

TEST(OutputProcessorTest, IgnoreEosKeepsGoingAndSpecialsMakeNoText) {
  OutputProcessor p(&Tok(), true, /*ignore_eos=*/true, {});
  bool stopped = false;
  TextDelta d = Stream(p, "It is.<|end|>\n<|user|>\nThe", &stopped);
  EXPECT_FALSE(stopped);
  EXPECT_EQ(d.content, "It is.\n\nThe");
}

}  // namespace
}  // namespace longhaul::refengine
