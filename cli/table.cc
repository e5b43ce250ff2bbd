#include "cli/table.h"

#include <algorithm>
#include <cstdlib>

#include "cli/format.h"
#include "cli/terminal_text.h"

namespace longhaul::cli {

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)),
      right_(headers_.size(), false),
      max_width_(headers_.size(), 0) {}

void Table::AddRow(std::vector<std::string> cells) {
  if (cells.size() > headers_.size()) std::abort();  // a row wider than the header is a bug
  cells.resize(headers_.size());
  // Cells hold what stages, params and metadata say: shown, never obeyed by the terminal.
  for (std::string& cell : cells) cell = TerminalSafe(cell);
  for (size_t c = 0; c < cells.size(); ++c) {
    if (max_width_[c] > 0 && DisplayWidth(cells[c]) > max_width_[c]) {
      cells[c] = Truncate(cells[c], max_width_[c]);
    }
  }
  rows_.push_back(std::move(cells));
}

void Table::AlignRight(size_t column) {
  if (column < right_.size()) right_[column] = true;
}

void Table::LimitWidth(size_t column, int width) {
  if (column < max_width_.size()) max_width_[column] = width;
}

std::vector<int> Table::Widths() const {
  std::vector<int> width(headers_.size(), 0);
  for (size_t c = 0; c < headers_.size(); ++c) width[c] = DisplayWidth(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], DisplayWidth(row[c]));
  }
  return width;
}

void Table::Line(const std::vector<int>& width, const std::vector<std::string>& cells,
                 int max_width, std::string& out) const {
  out.clear();
  for (size_t c = 0; c < cells.size(); ++c) {
    if (c) out += "  ";
    size_t pad = static_cast<size_t>(width[c] - DisplayWidth(cells[c]));
    if (right_[c]) out.append(pad, ' ');
    out += cells[c];
    if (!right_[c]) out.append(pad, ' ');
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (max_width > 0) out = Truncate(out, max_width);
}

std::vector<std::string> Table::Lines(int max_width) const {
  std::vector<int> width = Widths();
  std::vector<std::string> lines(rows_.size() + 1);
  Line(width, headers_, max_width, lines[0]);
  for (size_t r = 0; r < rows_.size(); ++r) Line(width, rows_[r], max_width, lines[r + 1]);
  return lines;
}

void Table::Render(std::ostream& out, int max_width) const {
  // Line by line into one buffer: a 100,000-row table is not held twice.
  std::vector<int> width = Widths();
  std::string line;
  Line(width, headers_, max_width, line);
  out << line << '\n';
  for (const auto& row : rows_) {
    Line(width, row, max_width, line);
    out << line << '\n';
  }
}

}  // namespace longhaul::cli
