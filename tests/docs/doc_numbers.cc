#include "tests/docs/doc_numbers.h"

#include <cctype>

#include "core/strings.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {
namespace {

std::string WithoutBackticks(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '`') out += c;
  }
  return out;
}

// The cells of a table row ("| a | b |"); none for a line that is not one.
std::vector<std::string> RowCells(const std::string& line) {
  std::string_view t = StripWhitespace(line);
  if (t.size() < 2 || t.front() != '|' || t.back() != '|') return {};
  std::vector<std::string> cells;
  for (const std::string& cell : StrSplit(t.substr(1, t.size() - 2), '|')) {
    cells.emplace_back(StripWhitespace(cell));
  }
  return cells;
}

bool EndsPassage(std::string_view line) {
  std::string_view t = StripWhitespace(line);
  return t.empty() || t.front() == '|' || StartsWith(line, "- ") || StartsWith(line, "#") ||
         StartsWith(line, "```");
}

}  // namespace

DocPage LoadDocPage(const std::string& rel) {
  DocPage page{rel, {}};
  std::string text = ReadTextFile(SourceDir() + "/" + rel);
  if (!text.empty()) page.lines = StrSplit(text, '\n');
  return page;
}

std::optional<DocRow> FindRow(const DocPage& page, const std::string& first) {
  for (size_t i = 0; i < page.lines.size(); ++i) {
    std::vector<std::string> cells = RowCells(page.lines[i]);
    if (!cells.empty() && WithoutBackticks(cells[0]) == first) {
      return DocRow{static_cast<int>(i + 1), cells};
    }
  }
  return std::nullopt;
}

std::vector<DocPassage> FindPassages(const DocPage& page, const std::string& anchor) {
  std::vector<DocPassage> found;
  for (size_t i = 0; i < page.lines.size(); ++i) {
    if (page.lines[i].find(anchor) == std::string::npos) continue;
    DocPassage p{static_cast<int>(i + 1), std::string(StripWhitespace(page.lines[i]))};
    for (size_t j = i + 1; j < page.lines.size() && !EndsPassage(page.lines[j]); ++j) {
      p.text += StrCat(" ", StripWhitespace(page.lines[j]));
    }
    found.push_back(std::move(p));
  }
  return found;
}

std::vector<DocNumber> NumbersBetween(const DocPage& page, const std::string& before,
                                      const std::string& after) {
  std::vector<DocNumber> found;
  for (size_t i = 0; i < page.lines.size(); ++i) {
    const std::string& line = page.lines[i];
    for (size_t at = line.find(before); at != std::string::npos; at = line.find(before, at + 1)) {
      size_t end = at + before.size();
      std::string digits;
      while (end < line.size() && (std::isdigit(static_cast<unsigned char>(line[end])) ||
                                   (line[end] == ',' && !digits.empty()))) {
        if (line[end] != ',') digits += line[end];
        ++end;
      }
      if (digits.empty() || line.compare(end, after.size(), after) != 0) continue;
      found.push_back({static_cast<int>(i + 1), *ParseInt64(digits)});
    }
  }
  return found;
}

std::string DocBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"GiB", "MiB", "KiB"};
  for (int u = 0; u < 3; ++u) {
    int64_t unit = int64_t{1} << (10 * (3 - u));
    if (bytes > 0 && bytes % unit == 0) return StrCat(bytes / unit, " ", kUnits[u]);
  }
  return StrCat(bytes, " bytes");
}

std::string DocCount(int64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace longhaul::testing
