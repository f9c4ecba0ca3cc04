// Comma-separated name lists: optional, intermediate, no_need_buffer, traits, interfaces,
// data_transform.skip_transform, ... (schemas/op.schema.json):   list := NAME (',' NAME)*
#include <fmt/format.h>

#include "opdef/op_syntax.h"

namespace kforge::opdef {

std::string_view read_qualified_name(TextCursor& cur) {
  cur.skip_spaces();
  const size_t begin = cur.pos();
  size_t good_end = begin;  // end of the last complete name part
  if (cur.peek() == ':' && cur.peek(1) == ':') cur.advance(2);
  while (is_ident_start(cur.peek())) {
    while (is_ident_char(cur.peek())) cur.advance();
    good_end = cur.pos();
    if (cur.peek() != ':' || cur.peek(1) != ':') break;
    cur.advance(2);
  }
  cur.set_pos(good_end);  // a dangling '::' is not part of the name
  return cur.slice(begin, good_end);
}

std::optional<std::vector<NameRef>> parse_name_list(const LocatedText& text, DiagnosticEngine& diags,
                                                    std::string_view key, bool qualified) {
  TextCursor cur(text);
  std::vector<NameRef> names;
  for (;;) {
    cur.skip_spaces();
    const size_t begin = cur.pos();
    const std::string_view name = qualified ? read_qualified_name(cur) : cur.identifier();
    if (name.empty()) {
      if (cur.at_end() || cur.peek() == ',') {
        diags.error(cur.loc(), fmt::format("empty item in '{}'", key));
      } else {
        diags.error(cur.loc(), fmt::format("expected a name in '{}', found {}", key, cur.describe_next()));
      }
      return std::nullopt;
    }
    names.push_back({std::string(name), text.loc(begin)});
    if (cur.consume(",")) continue;
    cur.skip_spaces();
    if (cur.at_end()) return names;
    diags.error(cur.loc(), fmt::format("expected ',' between names in '{}', found {}", key, cur.describe_next()));
    return std::nullopt;
  }
}

}  // namespace kforge::opdef
