#include "stages/refmodel/tokenizer.h"

#include <algorithm>
#include <array>

namespace longhaul::refmodel {
namespace {

constexpr std::array<std::string_view, Tokenizer::kNumSpecial> kSpecials = {
    Tokenizer::kUnk,    Tokenizer::kEnd,        Tokenizer::kUser,    Tokenizer::kAssistant,
    Tokenizer::kSystem, Tokenizer::kThinkStart, Tokenizer::kThinkEnd};

bool IsPunct(char c) {
  switch (c) {
    case '.':
    case ',':
    case '?':
    case '!':
    case ':':
    case ';':
    case '(':
    case ')':
    case '"':
      return true;
    default:
      return false;
  }
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// Length of the special token starting at text[i], or 0.
size_t SpecialAt(std::string_view text, size_t i) {
  if (text[i] != '<') return 0;
  for (std::string_view s : kSpecials) {
    if (text.substr(i, s.size()) == s) return s.size();
  }
  return 0;
}

// Punctuation that hugs the token before it ("word." not "word .").
bool ClosesLeft(std::string_view t) {
  return t.size() == 1 && (t[0] == '.' || t[0] == ',' || t[0] == '?' || t[0] == '!' ||
                           t[0] == ':' || t[0] == ';' || t[0] == ')');
}

}  // namespace

std::vector<std::string_view> Tokenizer::Split(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (size_t n = SpecialAt(text, i); n > 0) {
      out.push_back(text.substr(i, n));
      i += n;
    } else if (c == '\n') {
      out.push_back(text.substr(i, 1));
      ++i;
    } else if (IsSpace(c)) {
      ++i;
    } else if (IsPunct(c)) {
      out.push_back(text.substr(i, 1));
      ++i;
    } else {
      size_t j = i + 1;
      while (j < text.size() && text[j] != '\n' && !IsSpace(text[j]) && !IsPunct(text[j]) &&
             SpecialAt(text, j) == 0) {
        ++j;
      }
      out.push_back(text.substr(i, j - i));
      i = j;
    }
  }
  return out;
}

Tokenizer Tokenizer::FromCorpus(std::string_view corpus) {
  std::unordered_map<std::string_view, int64_t> counts;
  for (std::string_view t : Split(corpus)) ++counts[t];
  std::vector<std::pair<std::string_view, int64_t>> words;
  for (const auto& [t, n] : counts) {
    if (SpecialAt(t, 0) == t.size()) continue;
    words.emplace_back(t, n);
  }
  std::sort(words.begin(), words.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  Tokenizer tok;
  for (std::string_view s : kSpecials) {
    auto it = counts.find(s);
    tok.tokens_.emplace_back(s);
    tok.counts_.push_back(it == counts.end() ? 0 : it->second);
  }
  for (const auto& [t, n] : words) {
    tok.tokens_.emplace_back(t);
    tok.counts_.push_back(n);
  }
  for (int32_t id = 0; id < tok.size(); ++id) tok.ids_.emplace(tok.tokens_[id], id);
  if (auto nl = tok.Find("\n")) tok.newline_id_ = *nl;
  return tok;
}

std::optional<int32_t> Tokenizer::Find(std::string_view token) const {
  auto it = ids_.find(std::string(token));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text) const {
  std::vector<int32_t> ids;
  std::string key;
  for (std::string_view t : Split(text)) {
    key.assign(t);
    auto it = ids_.find(key);
    ids.push_back(it == ids_.end() ? kUnkId : it->second);
  }
  return ids;
}

void Tokenizer::AppendPiece(int32_t prev, int32_t id, std::string* out) const {
  const std::string& text = tokens_[id];
  bool space = prev >= 0 && prev != newline_id_ && id != newline_id_ && !IsSpecial(prev) &&
               !IsSpecial(id) && !ClosesLeft(text) && tokens_[prev] != "(";
  if (space) out->push_back(' ');
  out->append(text);
}

std::string Tokenizer::Decode(std::span<const int32_t> ids) const {
  std::string out;
  int32_t prev = -1;
  for (int32_t id : ids) {
    AppendPiece(prev, id, &out);
    prev = id;
  }
  return out;
}

}  // namespace longhaul::refmodel
