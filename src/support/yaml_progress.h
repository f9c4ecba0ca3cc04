// A guard for yaml-cpp 0.7, which loops forever on some malformed flow collections (found by fuzzing: e.g. an
// unquoted key inside a JSON-style mapping), emitting parse events and allocating nodes without consuming input.
// Header-only, for the front ends that already use yaml-cpp (render data, program YAML, op YAML); support itself
// does not link it.
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

namespace kforge {

namespace yaml_progress_detail {

// Counts events and stops the parse once there are more than the text could produce.
class EventCounter final : public YAML::EventHandler {
 public:
  struct Runaway {
    YAML::Mark mark;
  };
  explicit EventCounter(size_t budget) : budget_(budget) {}

  void OnDocumentStart(const YAML::Mark& mark) override { count(mark); }
  void OnDocumentEnd() override { count(last_); }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { count(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { count(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    count(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    count(mark);
  }
  void OnSequenceEnd() override { count(last_); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    count(mark);
  }
  void OnMapEnd() override { count(last_); }
  /// A document asked for (yaml-cpp can also return the same empty document forever).
  void next_document() { count(last_); }

 private:
  void count(const YAML::Mark& mark) {
    last_ = mark;
    if (++events_ > budget_) throw Runaway{mark};
  }
  size_t budget_;
  size_t events_ = 0;
  YAML::Mark last_;
};

}  // namespace yaml_progress_detail

/// Parses `text` once, only counting yaml-cpp's events. Every event of a well-behaved parse consumes input (a
/// document, a node or its end needs at least a byte of its own, give or take the implicit ones), so more than
/// four per byte means the parser is going round in circles: returns the mark where it was then. nullopt when the
/// parse ends, with or without a syntax error (the real parse reports that).
inline std::optional<YAML::Mark> yaml_parse_runs_away(std::string_view text) {
  std::istringstream in{std::string(text)};
  yaml_progress_detail::EventCounter counter(4 * text.size() + 64);
  try {
    YAML::Parser parser(in);
    do {
      counter.next_document();
    } while (parser.HandleNextDocument(counter));
  } catch (const yaml_progress_detail::EventCounter::Runaway& runaway) {
    return runaway.mark;
  } catch (const YAML::Exception&) {
  }
  return std::nullopt;
}

/// What to say about the place where the parse stalled: "unexpected ','" (yaml-cpp stalls on a token it cannot place)
/// or, at a space or the end of the text, "the parser makes no progress here".
inline std::string yaml_stall_message(std::string_view text, const YAML::Mark& mark) {
  const size_t at = mark.pos < 0 ? text.size() : static_cast<size_t>(mark.pos);
  if (at < text.size() && static_cast<unsigned char>(text[at]) > ' ' && static_cast<unsigned char>(text[at]) < 0x7f) {
    return std::string("unexpected '") + text[at] + "'";
  }
  return "the parser makes no progress here";
}

}  // namespace kforge
