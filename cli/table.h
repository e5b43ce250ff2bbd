// Column-aligned text tables for the CLI: a header row, then one row per item.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace longhaul::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers);

  // Missing cells are empty; extra cells are a programming error (CHECKed).
  void AddRow(std::vector<std::string> cells);
  // Numbers read better right-aligned.
  void AlignRight(size_t column);
  // Bounds a column that can grow without limit (a list of names): a cell of the rows added
  // from now on that is wider than `width` characters is cut to it, ending with "…", so that
  // one long cell does not pad every line of the table.
  void LimitWidth(size_t column, int width);
  size_t rows() const { return rows_.size(); }

  // The lines: cells padded to their column's widest cell, columns two spaces apart, no
  // trailing spaces. With max_width > 0 every line is cut to that many characters.
  std::vector<std::string> Lines(int max_width = 0) const;
  void Render(std::ostream& out, int max_width = 0) const;

 private:
  std::vector<int> Widths() const;
  // One line of `cells` into `out` (cleared first).
  void Line(const std::vector<int>& width, const std::vector<std::string>& cells, int max_width,
            std::string& out) const;

  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> right_;
  std::vector<int> max_width_;  // per column; 0: unbounded
};

}  // namespace longhaul::cli
