// Reading the numbers a Markdown page states (a table row's cells, a paragraph's text) and
// writing a constant the way the docs write it ("32 MiB", "200,000"), so that a test can hold
// the docs against the constants in the code and name the page and line that disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::testing {

// One page of docs/, read from the source tree.
struct DocPage {
  std::string name;  // "docs/security.md"
  std::vector<std::string> lines;
};
// The page at `rel` under the source dir; no lines when it cannot be read.
DocPage LoadDocPage(const std::string& rel);

// A table row: its 1-based line in the page and its cells, trimmed, backticks kept.
struct DocRow {
  int line = 0;
  std::vector<std::string> cells;
};
// The first row of any table in `page` whose first cell, without its backticks, is `first`
// ("a workflow file", "--notify-tries N").
std::optional<DocRow> FindRow(const DocPage& page, const std::string& first);

// A passage: the line where it starts and its text, from that line up to a blank line, a table
// or the next list item, wrapped lines joined with single spaces.
struct DocPassage {
  int line = 0;
  std::string text;
};
// Every passage that starts on a line containing `anchor`.
std::vector<DocPassage> FindPassages(const DocPage& page, const std::string& anchor);

// Each number in `page` that follows `before` and is followed by `after` ("over the limit of ",
// " stages"), with its line; the number may have thousands commas.
struct DocNumber {
  int line = 0;
  int64_t value = 0;
};
std::vector<DocNumber> NumbersBetween(const DocPage& page, const std::string& before,
                                      const std::string& after);

// 33554432 -> "32 MiB", 65536 -> "64 KiB", 1000 -> "1000 bytes": the largest binary unit that
// divides `bytes` exactly, as the docs write sizes.
std::string DocBytes(int64_t bytes);
// 200000 -> "200,000", 1024 -> "1,024", 256 -> "256": counts as the docs' prose writes them
// (a flag's default is written as its value: "1024").
std::string DocCount(int64_t n);

}  // namespace longhaul::testing
