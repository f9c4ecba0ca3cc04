// A first pass over YAML text that every YAML reader of kforge (op YAML, op_compat, program YAML, render data)
// runs before its real parse, counting yaml-cpp's events only. It stops two kinds of hostile input while they are
// still cheap (docs/fuzzing.md, "Limits"):
// - yaml-cpp 0.7 loops forever on some malformed flow collections (found by fuzzing: e.g. an unquoted key inside
//   a JSON-style mapping), emitting parse events and allocating nodes without consuming input;
// - aliases: yaml-cpp shares an aliased node, but every reader walks the tree, so a small file of nested anchors
//   (the "billion laughs") names a tree of billions of nodes, and an alias inside its own anchor an endless one.
// Header-only, for the front ends that already use yaml-cpp; support itself does not link it.
#pragma once

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <cstddef>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostics.h"

namespace kforge {

/// What aliases may add to a YAML document, counted as the bytes of the scalars they repeat plus
/// kYamlNodeBytes for every node they repeat (a tree of empty nodes costs memory too). A real op file or
/// program has a few small aliases, if any; a template data file of tens of megabytes is a lot.
inline constexpr size_t kMaxYamlAliasBytes = size_t{32} << 20;
inline constexpr size_t kYamlNodeBytes = 32;

/// Why the first pass stopped: `mark` is where; for an alias, `anchor` is where its anchor is.
struct YamlPrecheckProblem {
  YAML::Mark mark;
  std::string message;
  bool stalled = false;               // the parser went round in circles: the message says where it stuck
  std::optional<YAML::Mark> anchor;
};

namespace yaml_progress_detail {

class EventCounter final : public YAML::EventHandler {
 public:
  struct Stop {
    YamlPrecheckProblem problem;
  };
  EventCounter(std::string_view text, size_t max_alias_bytes)
      : text_(text), budget_(4 * text.size() + 64), max_alias_bytes_(max_alias_bytes) {}

  void OnDocumentStart(const YAML::Mark& mark) override { count(mark); }
  void OnDocumentEnd() override { count(last_); }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor, 0); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override;
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    leaf(mark, anchor, value.size());
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }
  /// A document asked for (yaml-cpp can also return the same empty document forever).
  void next_document() { count(last_); }

 private:
  // Every event of a well-behaved parse consumes input (a document, a node or its end needs at least a byte of its
  // own, give or take the implicit ones), so more than four per byte means the parser is going round in circles.
  void count(const YAML::Mark& mark) {
    last_ = mark;
    if (++events_ > budget_) throw Stop{{mark, "", true, std::nullopt}};
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, size_t bytes) {
    count(mark);
    size_ += kYamlNodeBytes + bytes;
    if (anchor != YAML::NullAnchor) define(anchor, mark, kYamlNodeBytes + bytes);
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    count(mark);
    open_.push_back({anchor, mark, size_});
    size_ += kYamlNodeBytes;
    if (anchor != YAML::NullAnchor) define(anchor, mark, kOpen);
  }
  void close() {
    count(last_);
    if (open_.empty()) return;
    const Open node = open_.back();
    open_.pop_back();
    if (node.anchor != YAML::NullAnchor) anchors_[node.anchor].bytes = size_ - node.size_before;
  }
  // yaml-cpp numbers anchors 1, 2, ... in the order they appear; a name defined again gets a new number.
  void define(YAML::anchor_t anchor, const YAML::Mark& mark, size_t bytes) {
    if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
    anchors_[anchor] = {mark, bytes};
  }
  std::string alias_name(const YAML::Mark& mark) const;

  static constexpr size_t kOpen = SIZE_MAX;  // the anchored collection is still being read
  struct Anchor {
    YAML::Mark mark;
    size_t bytes = 0;  // its expanded size, as counted by the alias limit
  };
  struct Open {
    YAML::anchor_t anchor;
    YAML::Mark mark;
    size_t size_before;
  };
  std::string_view text_;
  size_t budget_;
  size_t max_alias_bytes_;
  size_t events_ = 0;
  size_t size_ = 0;           // the document so far, aliases expanded
  size_t alias_bytes_ = 0;    // what the aliases added to it
  std::vector<Anchor> anchors_;
  std::vector<Open> open_;
  YAML::Mark last_;
};

inline std::string EventCounter::alias_name(const YAML::Mark& mark) const {
  // yaml-cpp's mark of an alias is its '*' (the events carry anchors by number only).
  size_t at = mark.pos < 0 ? text_.size() : static_cast<size_t>(mark.pos);
  if (at >= text_.size() || text_[at] != '*') return "an alias";
  size_t end = at + 1;
  while (end < text_.size() && end - at <= 64 && static_cast<unsigned char>(text_[end]) > ' ' &&
         text_[end] != ',' && text_[end] != ']' && text_[end] != '}') {
    ++end;
  }
  return "alias '" + std::string(text_.substr(at, end - at)) + "'";
}

inline void EventCounter::OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) {
  count(mark);
  if (anchor >= anchors_.size()) return;  // yaml-cpp reports an unknown anchor itself
  const Anchor& a = anchors_[anchor];
  if (a.bytes == kOpen) {
    throw Stop{{mark, alias_name(mark) + " is used inside its own anchor: the tree it names is endless", false,
                a.mark}};
  }
  size_ += a.bytes;
  alias_bytes_ += a.bytes;
  if (alias_bytes_ > max_alias_bytes_) {
    throw Stop{{mark,
                alias_name(mark) + " takes the YAML aliases of this file past " +
                    std::to_string(max_alias_bytes_ >> 20) + " MiB of repeated nodes (a \"billion laughs\"?)",
                false, a.mark}};
  }
}

}  // namespace yaml_progress_detail

/// What to say about the place where the parse stalled: "unexpected ','" (yaml-cpp stalls on a token it cannot place)
/// or, at a space or the end of the text, "the parser makes no progress here".
inline std::string yaml_stall_message(std::string_view text, const YAML::Mark& mark) {
  const size_t at = mark.pos < 0 ? text.size() : static_cast<size_t>(mark.pos);
  if (at < text.size() && static_cast<unsigned char>(text[at]) > ' ' && static_cast<unsigned char>(text[at]) < 0x7f) {
    return std::string("unexpected '") + text[at] + "'";
  }
  return "the parser makes no progress here";
}

/// Parses `text` once, only counting yaml-cpp's events: a parser going round in circles, an alias inside its own
/// anchor, or aliases that would repeat more than `max_alias_bytes` (see kMaxYamlAliasBytes). nullopt when the
/// parse ends, with or without a syntax error (the real parse reports that).
inline std::optional<YamlPrecheckProblem> yaml_precheck(std::string_view text,
                                                        size_t max_alias_bytes = kMaxYamlAliasBytes) {
  std::istringstream in{std::string(text)};
  yaml_progress_detail::EventCounter counter(text, max_alias_bytes);
  try {
    YAML::Parser parser(in);
    do {
      counter.next_document();
    } while (parser.HandleNextDocument(counter));
  } catch (yaml_progress_detail::EventCounter::Stop& stop) {
    if (stop.problem.stalled) stop.problem.message = yaml_stall_message(text, stop.problem.mark);
    return std::move(stop.problem);
  } catch (const YAML::Exception&) {
  }
  return std::nullopt;
}

/// Runs yaml_precheck over `text` and reports what it found, at `loc_of(mark)` (a yaml-cpp mark to a SourceLoc, which
/// differs between the readers); false once reported. A stalled parse's message starts with `stall_prefix`.
template <class LocOf>
bool yaml_precheck_passes(std::string_view text, DiagnosticEngine& diags, const LocOf& loc_of,
                          std::string_view stall_prefix) {
  std::optional<YamlPrecheckProblem> problem = yaml_precheck(text);
  if (!problem) return true;
  Diagnostic d{Severity::kError, loc_of(problem->mark),
               problem->stalled ? std::string(stall_prefix) + problem->message : problem->message, {}};
  if (problem->anchor) d.note("its anchor is here", loc_of(*problem->anchor));
  diags.report(std::move(d));
  return false;
}

}  // namespace kforge
