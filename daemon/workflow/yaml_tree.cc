#include "daemon/workflow/yaml_tree.h"

#include <yaml.h>

#include <unordered_map>

#include "core/memory_policy.h"
#include "core/strings.h"

namespace longhaul::workflow {
namespace {

// yaml-cpp's IsNullString: what a plain scalar reads as null.
bool IsNullText(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// Frees a libyaml event or parser on every path out.
struct EventGuard {
  yaml_event_t* event;
  ~EventGuard() { yaml_event_delete(event); }
};
struct ParserGuard {
  yaml_parser_t* parser;
  ~ParserGuard() { yaml_parser_delete(parser); }
};

}  // namespace

YamlType YamlNode::Type() const { return tree_ ? tree_->items_[index_].type : YamlType::kNull; }

std::string_view YamlNode::Scalar() const {
  if (!tree_) return {};
  const YamlTree::Item& item = tree_->items_[index_];
  if (item.type != YamlType::kScalar) return {};
  return std::string_view(tree_->text_).substr(item.first, item.count);
}

bool YamlNode::quoted() const { return tree_ && tree_->items_[index_].quoted; }
int YamlNode::line() const { return tree_ ? tree_->items_[index_].line : -1; }
int YamlNode::column() const { return tree_ ? tree_->items_[index_].column : -1; }

size_t YamlNode::size() const {
  if (!tree_) return 0;
  const YamlTree::Item& item = tree_->items_[index_];
  if (item.type == YamlType::kSequence) return item.count;
  if (item.type == YamlType::kMap) return item.count / 2;
  return 0;
}

YamlNode YamlNode::Child(size_t i) const {
  return YamlNode(tree_, tree_->kids_[tree_->items_[index_].first + i]);
}

YamlNode YamlNode::operator[](size_t i) const { return Child(i); }
YamlNode YamlNode::key(size_t i) const { return Child(2 * i); }
YamlNode YamlNode::value(size_t i) const { return Child(2 * i + 1); }

YamlTree::YamlTree(std::string_view text) { Parse(text); }

YamlNode YamlTree::root() const { return has_root_ ? YamlNode(this, root_) : YamlNode(); }

void YamlTree::Parse(std::string_view text) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    error_ = "out of memory";
    return;
  }
  ParserGuard parser_guard{&parser};
  // A workflow file has roughly one node per 6 bytes; growing from there costs little.
  items_.reserve(text.size() / 6);
  kids_.reserve(text.size() / 6);
  text_.reserve(text.size() / 2);
  NoteBigBuffer(items_.data(), items_.capacity() * sizeof(Item));
  NoteBigBuffer(kids_.data(), kids_.capacity() * sizeof(uint32_t));
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  // Each open container, and where its children start in `pending`. Children are collected
  // there and moved to kids_ in one run when the container ends.
  std::vector<std::pair<uint32_t, size_t>> open;
  std::vector<uint32_t> pending;
  std::unordered_map<std::string, uint32_t> anchors;
  auto add = [&](uint32_t index) {
    if (open.empty()) {
      if (!has_root_) root_ = index;
      has_root_ = true;
    } else {
      pending.push_back(index);
    }
  };
  auto new_item = [&](YamlType type, const yaml_mark_t& mark, const yaml_char_t* anchor) {
    uint32_t index = static_cast<uint32_t>(items_.size());
    Item& item = items_.emplace_back();
    item.type = type;
    item.line = static_cast<int32_t>(mark.line);
    item.column = static_cast<int32_t>(mark.column);
    if (anchor) anchors[reinterpret_cast<const char*>(anchor)] = index;
    return index;
  };
  for (;;) {
    yaml_event_t event;
    if (!yaml_parser_parse(&parser, &event)) {
      error_ = parser.problem ? parser.problem : "unknown error";
      if (parser.context) error_ = StrCat(parser.context, ": ", error_);
      error_line_ = static_cast<int>(parser.problem_mark.line);
      error_column_ = static_cast<int>(parser.problem_mark.column);
      return;
    }
    EventGuard event_guard{&event};
    switch (event.type) {
      case YAML_SCALAR_EVENT: {
        const auto& s = event.data.scalar;
        std::string_view value(reinterpret_cast<const char*>(s.value), s.length);
        bool plain = s.style == YAML_PLAIN_SCALAR_STYLE;
        bool null = plain && IsNullText(value);
        uint32_t index =
            new_item(null ? YamlType::kNull : YamlType::kScalar, event.start_mark, s.anchor);
        if (!null) {
          items_[index].first = static_cast<uint32_t>(text_.size());
          items_[index].count = static_cast<uint32_t>(value.size());
          items_[index].quoted = !plain;
          text_.append(value);
        }
        add(index);
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        bool map = event.type == YAML_MAPPING_START_EVENT;
        const yaml_char_t* anchor =
            map ? event.data.mapping_start.anchor : event.data.sequence_start.anchor;
        uint32_t index =
            new_item(map ? YamlType::kMap : YamlType::kSequence, event.start_mark, anchor);
        add(index);
        open.emplace_back(index, pending.size());
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        auto [index, start] = open.back();
        open.pop_back();
        items_[index].first = static_cast<uint32_t>(kids_.size());
        items_[index].count = static_cast<uint32_t>(pending.size() - start);
        kids_.insert(kids_.end(), pending.begin() + static_cast<ptrdiff_t>(start),
                     pending.end());
        pending.resize(start);
        break;
      }
      case YAML_ALIAS_EVENT: {
        auto it = anchors.find(reinterpret_cast<const char*>(event.data.alias.anchor));
        if (it == anchors.end()) {
          error_ = "the referenced anchor is not defined";
          error_line_ = static_cast<int>(event.start_mark.line);
          error_column_ = static_cast<int>(event.start_mark.column);
          return;
        }
        add(it->second);
        break;
      }
      case YAML_DOCUMENT_END_EVENT:
      case YAML_STREAM_END_EVENT:
        return;  // the first document only, as YAML::Load
      default:
        break;
    }
  }
}

}  // namespace longhaul::workflow
