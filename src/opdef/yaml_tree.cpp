#include "opdef/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <fmt/format.h>

#include <istream>
#include <streambuf>

#include "support/text.h"
#include "support/yaml_progress.h"

namespace kforge::opdef {

const char* YamlNode::kind_name() const {
  switch (kind) {
    case Kind::kNull: return "empty";
    case Kind::kScalar: return "a string";
    case Kind::kSequence: return "a list";
    case Kind::kMap: return "a mapping";
  }
  return "empty";
}

namespace {

// A read-only streambuf over the SourceManager's buffer, so yaml-cpp reads it without a copy.
class ViewStreamBuf : public std::streambuf {
 public:
  explicit ViewStreamBuf(std::string_view text) {
    char* begin = const_cast<char*>(text.data());  // never written through: the buffer is get-only
    setg(begin, begin, begin + text.size());
  }
};

struct AliasFound {
  YAML::Mark mark;
};

// Builds YamlNodes bottom-up: open containers live on a stack and are moved into their parent when
// they end, so no pointer into a growing vector is ever held.
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(std::string_view text, std::vector<YamlNode>& documents) : text_(text), documents_(documents) {}

  void OnDocumentStart(const YAML::Mark& mark) override { document_start_ = offset_of(mark); }

  uint32_t document_start() const { return document_start_; }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    YamlNode node;
    node.kind = YamlNode::Kind::kNull;
    node.offset = offset_of(mark);
    add(std::move(node));
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { throw AliasFound{mark}; }

  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
    YamlNode node;
    node.kind = YamlNode::Kind::kScalar;
    node.offset = offset_of(mark);
    node.value = value;
    // The tag yaml-cpp passes is "!" for every non-plain scalar; the first character tells which kind.
    const char first = node.offset < text_.size() ? text_[node.offset] : '\0';
    if (first == '"') {
      node.style = YamlNode::Style::kDoubleQuoted;
    } else if (first == '\'') {
      node.style = YamlNode::Style::kSingleQuoted;
    } else if (first == '|' || first == '>') {  // a plain scalar cannot start with an indicator
      node.style = YamlNode::Style::kBlock;
    }
    add(std::move(node));
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value style) override {
    open(YamlNode::Kind::kSequence, mark, style);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value style) override {
    open(YamlNode::Kind::kMap, mark, style);
  }
  void OnMapEnd() override { close(); }

 private:
  uint32_t offset_of(const YAML::Mark& mark) const {
    if (mark.pos < 0) return 0;
    return static_cast<uint32_t>(std::min<size_t>(static_cast<size_t>(mark.pos), text_.size()));
  }

  void open(YamlNode::Kind kind, const YAML::Mark& mark, YAML::EmitterStyle::value style) {
    YamlNode node;
    node.kind = kind;
    node.offset = offset_of(mark);
    node.flow = style == YAML::EmitterStyle::Flow;
    stack_.push_back(std::move(node));
  }

  void close() {
    YamlNode node = std::move(stack_.back());
    stack_.pop_back();
    add(std::move(node));
  }

  void add(YamlNode node) {
    if (stack_.empty()) {
      documents_.push_back(std::move(node));
    } else {
      stack_.back().children.push_back(std::move(node));
    }
  }

  std::string_view text_;
  std::vector<YamlNode>& documents_;
  std::vector<YamlNode> stack_;
  uint32_t document_start_ = 0;
};

}  // namespace

bool parse_yaml(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags,
                std::vector<YamlNode>& documents) {
  const std::string_view text = sources.contents(file);
  if (const std::optional<size_t> bad = find_non_printable_yaml_byte(text)) {
    diags.error(sources.loc_of_offset(file, *bad), fmt::format("control character U+{:04X} is not allowed in YAML", static_cast<unsigned char>(text[*bad])));
    return false;
  }
  auto loc_of = [&](const YAML::Mark& mark) {
    if (mark.pos >= 0) return sources.loc_of_offset(file, std::min<size_t>(static_cast<size_t>(mark.pos), text.size()));
    return sources.loc_at(file, static_cast<uint32_t>(mark.line + 1), static_cast<uint32_t>(mark.column + 1));
  };
  if (!yaml_precheck_passes(text, diags, loc_of, "invalid YAML: ")) return false;
  ViewStreamBuf buffer(text);
  std::istream in(&buffer);
  try {
    YAML::Parser parser(in);
    TreeBuilder builder(text, documents);
    // yaml-cpp 0.7 can return the same empty document forever on some malformed input (a line that
    // starts with ',' after a block mapping): stop when a document starts where the previous one did.
    uint32_t previous_start = UINT32_MAX;
    while (parser.HandleNextDocument(builder)) {
      if (builder.document_start() == previous_start) {
        const uint32_t at = builder.document_start();
        diags.error(sources.loc_of_offset(file, at),
                    fmt::format("invalid YAML: unexpected {}",
                                at < text.size() ? fmt::format("'{}'", text[at]) : std::string("end of file")));
        return false;
      }
      previous_start = builder.document_start();
    }
  } catch (const AliasFound& alias) {
    diags.error(loc_of(alias.mark), "YAML aliases are not supported in op files");
    return false;
  } catch (const YAML::Exception& e) {
    diags.error(loc_of(e.mark), "invalid YAML: " + e.msg);
    return false;
  }
  return true;
}

}  // namespace kforge::opdef
