// Internal to longhaul_workflow: a compact, read-only YAML tree built from libyaml's events.
//
// Why not yaml-cpp's YAML::Node: a 100,000-stage workflow is about a million nodes, and
// yaml-cpp spends ~1 KB and several allocations on each (shared_ptr, node_ref, node_data),
// with a scanner about 7x slower than libyaml's. Here every node is one entry of a vector
// and a container's children are one contiguous run of indices.
//
// What it reads matches YAML::Load for what a workflow holds: the first document only;
// plain "", "~", "null", "Null" and "NULL" are null; an alias refers to the anchored node
// itself (no copy); "<<" is an ordinary key. Positions are 0-based like YAML::Mark.
// Thread-compatible; a YamlNode is valid while its YamlTree lives.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::workflow {

enum class YamlType : uint8_t { kNull, kScalar, kSequence, kMap };

class YamlTree;

// A handle to one node: two words, cheap to copy. A default-constructed node is a null node
// with no position (line() == -1).
class YamlNode {
 public:
  YamlNode() = default;

  YamlType Type() const;
  bool IsNull() const { return Type() == YamlType::kNull; }
  bool IsScalar() const { return Type() == YamlType::kScalar; }
  bool IsSequence() const { return Type() == YamlType::kSequence; }
  bool IsMap() const { return Type() == YamlType::kMap; }

  // The scalar's text; "" for any other node. Valid while the tree lives.
  std::string_view Scalar() const;
  // Written in quotes or as a block scalar (| or >), not plain.
  bool quoted() const;
  int line() const;    // 0-based; -1 when unknown
  int column() const;  // 0-based; -1 when unknown

  // Elements of a sequence, entries of a mapping; 0 for anything else.
  size_t size() const;
  // REQUIRES: IsSequence() and i < size().
  YamlNode operator[](size_t i) const;
  // The key and the value of a mapping's entry i, in file order (duplicates kept).
  // REQUIRES: IsMap() and i < size().
  YamlNode key(size_t i) const;
  YamlNode value(size_t i) const;

 private:
  friend class YamlTree;
  YamlNode(const YamlTree* tree, uint32_t index) : tree_(tree), index_(index) {}
  YamlNode Child(size_t i) const;

  const YamlTree* tree_ = nullptr;
  uint32_t index_ = 0;
};

// The parsed text. Neither copyable nor movable: nodes point at it.
class YamlTree {
 public:
  // Parses the first document of `text`. An empty text (or one with no document) gives a
  // null root.
  explicit YamlTree(std::string_view text);
  YamlTree(const YamlTree&) = delete;
  YamlTree& operator=(const YamlTree&) = delete;

  // False when the text is not valid YAML; then error_* say what and where (0-based).
  bool ok() const { return error_.empty(); }
  const std::string& error_message() const { return error_; }
  int error_line() const { return error_line_; }
  int error_column() const { return error_column_; }

  YamlNode root() const;

 private:
  friend class YamlNode;
  // 28 bytes and no allocation of its own: a scalar's text is a range of text_.
  struct Item {
    uint32_t first = 0;   // scalars: offset in text_; containers: first index into kids_
    uint32_t count = 0;   // scalars: length; containers: number of kids_ (2 per map entry)
    int32_t line = -1;
    int32_t column = -1;
    YamlType type = YamlType::kNull;
    bool quoted = false;
  };
  void Parse(std::string_view text);

  std::vector<Item> items_;
  std::vector<uint32_t> kids_;
  std::string text_;  // every scalar's text, one after the other
  bool has_root_ = false;
  uint32_t root_ = 0;
  std::string error_;
  int error_line_ = 0;
  int error_column_ = 0;
};

}  // namespace longhaul::workflow
