// ParseStreamEvent (openai.h) with nlohmann's SAX interface: a load generator parses one
// event per chunk of every response, and building a DOM for each was most of its user time.
// Only the fields a client reads are kept; everything else is skipped as it is lexed.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/strings.h"
#include "stages/common/openai.h"

namespace longhaul::stages {
namespace {

using nlohmann::json;

enum class Key : uint8_t {
  kOther,
  kChoices,
  kDelta,
  kText,
  kContent,
  kReasoning,
  kReasoningContent,
  kFinishReason,
  kUsage,
  kCompletionTokens,
  kPromptTokens,
  kError,
  kMessage
};

Key KeyOf(const std::string& k) {
  switch (k.size()) {
    case 4:
      return k == "text" ? Key::kText : Key::kOther;
    case 5:
      if (k == "delta") return Key::kDelta;
      if (k == "usage") return Key::kUsage;
      if (k == "error") return Key::kError;
      return Key::kOther;
    case 7:
      if (k == "choices") return Key::kChoices;
      if (k == "content") return Key::kContent;
      if (k == "message") return Key::kMessage;
      return Key::kOther;
    case 9:
      return k == "reasoning" ? Key::kReasoning : Key::kOther;
    case 13:
      if (k == "finish_reason") return Key::kFinishReason;
      if (k == "prompt_tokens") return Key::kPromptTokens;
      return Key::kOther;
    case 17:
      if (k == "reasoning_content") return Key::kReasoningContent;
      if (k == "completion_tokens") return Key::kCompletionTokens;
      return Key::kOther;
    default:
      return Key::kOther;
  }
}

struct Frame {
  bool array = false;
  int64_t index = -1;     // arrays: the element being read
  Key key = Key::kOther;  // objects: the member being read
};

class Handler : public nlohmann::json_sax<json> {
 public:
  StreamDelta out;
  std::string reasoning_content;
  bool has_usage = false;
  bool has_error = false;
  std::string error_text;
  bool root_is_object = false;

  bool null() override {
    Value();
    return true;
  }
  bool boolean(bool) override {
    Value();
    return true;
  }
  bool number_integer(number_integer_t v) override { return Number(static_cast<int64_t>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Number(static_cast<int64_t>(v)); }
  bool number_float(number_float_t v, const string_t&) override {
    return Number(static_cast<int64_t>(v));
  }
  bool binary(binary_t&) override {
    Value();
    return true;
  }
  bool string(string_t& v) override {
    Value();
    size_t n = stack_.size();
    if (n == 1 && stack_[0].key == Key::kError) {
      has_error = true;
      error_text = v;
    } else if (n == 2 && stack_[0].key == Key::kError && stack_[1].key == Key::kMessage) {
      error_text = v;
    } else if (InChoice0()) {
      Key k = stack_[2].key;
      if (n == 3 && k == Key::kText) {
        out.content = std::move(v);
      } else if (n == 3 && k == Key::kFinishReason) {
        out.finish_reason = std::move(v);
      } else if (n == 4 && k == Key::kDelta && !stack_[3].array) {
        switch (stack_[3].key) {
          case Key::kContent:
            out.content = std::move(v);
            break;
          case Key::kReasoning:
            out.reasoning = std::move(v);
            break;
          case Key::kReasoningContent:
            reasoning_content = std::move(v);
            break;
          default:
            break;
        }
      }
    }
    return true;
  }
  bool start_object(std::size_t) override {
    if (stack_.empty()) {
      root_is_object = true;
    } else {
      Value();
      if (stack_.size() == 1 && stack_[0].key == Key::kError) has_error = true;
      if (stack_.size() == 1 && stack_[0].key == Key::kUsage) has_usage = true;
    }
    stack_.push_back(Frame{});
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    if (!stack_.empty()) Value();
    stack_.push_back(Frame{true, -1, Key::kOther});
    return true;
  }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    stack_.back().key = KeyOf(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  // Every value (scalar or container) moves its parent array to the next element.
  void Value() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
  }
  bool InChoice0() const {
    return stack_.size() >= 3 && stack_[0].key == Key::kChoices && stack_[1].array &&
           stack_[1].index == 0 && !stack_[2].array;
  }
  bool Number(int64_t v) {
    Value();
    if (stack_.size() == 2 && stack_[0].key == Key::kUsage && !stack_[1].array) {
      if (!out.usage) out.usage = Usage{};
      if (stack_[1].key == Key::kCompletionTokens) out.usage->completion_tokens = v;
      if (stack_[1].key == Key::kPromptTokens) out.usage->prompt_tokens = v;
    }
    return true;
  }

  std::vector<Frame> stack_;
};

}  // namespace

Result<StreamDelta> ParseStreamEvent(std::string_view data) {
  std::string_view trimmed = StripWhitespace(data);
  if (trimmed == "[DONE]") {
    StreamDelta done;
    done.done = true;
    return done;
  }
  Handler h;
  bool ok = json::sax_parse(trimmed.begin(), trimmed.end(), &h, json::input_format_t::json,
                            /*strict=*/true);
  if (!ok || !h.root_is_object) {
    return absl::InvalidArgumentError(
        StrCat("stream event is not a JSON object: '", trimmed.substr(0, 120), "'"));
  }
  if (h.has_error) {
    return absl::UnavailableError(StrCat("server error in response: ", h.error_text));
  }
  if (h.out.reasoning.empty()) h.out.reasoning = std::move(h.reasoning_content);
  if (h.out.usage && !h.has_usage) h.out.usage.reset();
  return std::move(h.out);
}

}  // namespace longhaul::stages
