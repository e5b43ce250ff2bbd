#include "cli/table.h"

#include <algorithm>
#include <cstdlib>

#include "cli/format.h"

namespace longhaul::cli {

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)), right_(headers_.size(), false) {}

void Table::AddRow(std::vector<std::string> cells) {
  if (cells.size() > headers_.size()) std::abort();  // a row wider than the header is a bug
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void Table::AlignRight(size_t column) {
  if (column < right_.size()) right_[column] = true;
}

std::vector<std::string> Table::Lines(int max_width) const {
  std::vector<int> width(headers_.size(), 0);
  for (size_t c = 0; c < headers_.size(); ++c) width[c] = DisplayWidth(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], DisplayWidth(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) out += "  ";
      std::string pad(static_cast<size_t>(width[c] - DisplayWidth(cells[c])), ' ');
      out += right_[c] ? pad + cells[c] : cells[c] + pad;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return Truncate(out, max_width);
  };
  std::vector<std::string> lines;
  lines.push_back(line(headers_));
  for (const auto& row : rows_) lines.push_back(line(row));
  return lines;
}

void Table::Render(std::ostream& out, int max_width) const {
  for (const std::string& l : Lines(max_width)) out << l << '\n';
}

}  // namespace longhaul::cli
