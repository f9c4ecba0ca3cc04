#include "codegen/op_api_size_expr.h"
#include "support/ascii.h"
#include "support/text.h"

#include <vector>

namespace kforge::codegen {

namespace {

using ascii::is_digit;
using ascii::is_ident_char;
using ascii::is_ident_start;


/// Reads `.member()` at `i` (spaces allowed around the tokens); returns the member name and moves `i`
/// past the ')' or returns "" and leaves `i`.
std::string_view read_member_call(std::string_view text, size_t& i) {
  size_t j = i;
  auto skip = [&] {
    while (j < text.size() && text[j] == ' ') ++j;
  };
  skip();
  if (j >= text.size() || text[j] != '.') return {};
  ++j;
  skip();
  const size_t begin = j;
  while (j < text.size() && is_ident_char(text[j])) ++j;
  const std::string_view name = text.substr(begin, j - begin);
  skip();
  if (name.empty() || j >= text.size() || text[j] != '(') return {};
  ++j;
  skip();
  if (j >= text.size() || text[j] != ')') return {};
  i = j + 1;
  return name;
}

}  // namespace

std::optional<std::string> translate_size_expression(std::string_view expr, const opdef::Op& op, std::string* why) {
  std::vector<std::string> pieces;  // the translated tokens, in order
  size_t i = 0;
  while (i < expr.size()) {
    const char c = expr[i];
    const size_t begin = i;
    if (is_digit(c)) {  // a number, suffixes and fraction included
      while (i < expr.size() && (is_ident_char(expr[i]) || expr[i] == '.')) ++i;
      pieces.emplace_back(expr.substr(begin, i - begin));
      continue;
    }
    if (!is_ident_start(c)) {
      if (std::string_view(" +-*/%()[]?:<>=!&|").find(c) == std::string_view::npos) {
        *why = "'" + std::string(1, c) + "' is not supported";
        return std::nullopt;
      }
      pieces.emplace_back(1, c);
      ++i;
      continue;
    }
    while (i < expr.size() && is_ident_char(expr[i])) ++i;
    const std::string name(expr.substr(begin, i - begin));
    size_t after = i;
    const std::string_view member = read_member_call(expr, after);
    if (const opdef::Input* in = op.find_input(name)) {
      if (in->is_list() && member == "size") {
        pieces.push_back(name + ".size");
      } else if (!in->is_list() && member == "dims") {
        size_t after_size = after;
        if (read_member_call(expr, after_size) == "size") {  // input.dims().size()
          pieces.push_back("kforge_dims(" + name + ").size()");
          after = after_size;
        } else {
          pieces.push_back("kforge_dims(" + name + ")");
        }
      } else {
        *why = "'" + name + (member.empty() ? "" : "." + std::string(member) + "()") +
               "' cannot be translated (only LIST.size() and TENSOR.dims() can)";
        return std::nullopt;
      }
      i = after;
    } else if (op.find_attribute(name) != nullptr) {
      if (!member.empty() && member != "size") {
        *why = "'" + name + "." + std::string(member) + "()' cannot be translated";
        return std::nullopt;
      }
      pieces.push_back(member.empty() ? name : name + ".size()");
      i = after;
    } else if (name == "true" || name == "false") {
      pieces.push_back(name);
    } else {
      *why = "'" + name + "' is not an argument of the op";
      return std::nullopt;
    }
  }
  return kforge::join(pieces, "");
}

}  // namespace kforge::codegen
