// PIR text reader, types (§3.5) and attribute values (§3.4) in both printer eras.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "program/pir_text_internal.h"
#include "support/text.h"
#include "support/ascii.h"

namespace kforge::ir::pir_text {

namespace {

using ascii::is_digit;


const std::vector<std::string>& type_suggestions() {
  static const std::vector<std::string> names = {"f16",  "bf16", "f32",      "f64",    "b",         "i8",
                                                 "u8",   "i16",  "i32",      "i64",    "index",     "c64",
                                                 "c128", "f8e4m3fn", "f8e5m2", "undefined", "tensor", "vec",
                                                 "builtin.tensor"};
  return names;
}

const std::vector<std::string>& tag_names() {
  static const std::vector<std::string> names = {
      "Float", "Double", "Int32", "Int64", "Index", "Pointer", "Complex64", "Complex128", "pd_op.IntArray",
      "pd_op.DataType", "pd_op.Place", "pd_op.DataLayout", "pd_op.Scalar"};
  return names;
}

std::string with_suggestion(std::string msg, std::string_view name, const std::vector<std::string>& candidates) {
  if (std::optional<std::string> close = closest_match(name, candidates)) msg += fmt::format("; did you mean '{}'?", *close);
  return msg;
}

// The layouts a printed DataLayoutAttribute can show (Undefined(AnyLayout) is handled apart).
std::optional<DataLayout> printed_layout(std::string_view s) {
  for (std::string_view name : {"NHWC", "NCHW", "NCDHW", "NDHWC", "ONEDNN", "SPARSE_COO", "SPARSE_CSR",
                                "PSTRING_UNION", "STRIDED"}) {
    if (s == name) return parse_layout_name(s);
  }
  return std::nullopt;
}

// "2x3xf32" (dims then element type): fills `t` when the text has that shape; for the params of
// tensor arrays, selected rows and dist tensors, where it is informative only.
void try_dims_and_element(std::string_view s, Type& t) {
  std::vector<int64_t> dims;
  size_t i = 0;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '-')) {
    int64_t d = 0;
    auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), d);
    if (ec != std::errc() || end == s.data() + s.size() || *end != 'x') return;
    dims.push_back(d);
    i = static_cast<size_t>(end - s.data()) + 1;
  }
  size_t j = i;
  while (j < s.size() && Lexer::is_ident_char(s[j])) ++j;
  const std::optional<DataType> e = parse_pir_element_name(s.substr(i, j - i));
  if (!e || (j < s.size() && s[j] != ',')) return;
  t.dtype = *e;
  t.dims = std::move(dims);
}

}  // namespace

// ---------------------------------------------------------------------------------------------- types

std::string Parser::raw_balanced(char open, char close) {
  lexer_.skip_space();
  const std::string_view text = lexer_.text();
  const size_t begin = lexer_.pos();
  if (begin >= text.size() || text[begin] != open) fail(begin, fmt::format("expected '{}'", open));
  int depth = 0;
  for (size_t i = begin; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {  // skip strings, whose brackets do not count
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == open) {
      ++depth;
    } else if (c == close && --depth == 0) {
      lexer_.set_pos(i + 1);
      return std::string(text.substr(begin + 1, i - begin - 1));
    }
  }
  fail(begin, fmt::format("'{}' is never closed by '{}'", open, close));
}

Type Parser::parse_tensor_body(const std::string& name, uint32_t name_offset) {
  // The lexer is at '<'. Dims and the element type are read as characters: "-1x3x224xf32".
  const std::string_view text = lexer_.text();
  size_t i = lexer_.pos() + 1;
  Type t = Type::tensor(DataType::kUndefined, {});
  if (name != "tensor" && name != "builtin.tensor" && name != "pd_op.tensor") {
    // Kernel dialect: gpu_tensor, cpu_tensor, undefined_tensor, <custom device>_tensor.
    const std::string prefix = name.substr(0, name.size() - std::string_view("_tensor").size());
    std::optional<Place> place = parse_place_body(prefix);
    if (!place) fail(name_offset, fmt::format("unknown place '{}' in type '{}'", prefix, name));
    t.place = std::move(place);
  }
  while (i < text.size() && (is_digit(text[i]) || text[i] == '-')) {
    int64_t d = 0;
    auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), d);
    if (ec != std::errc()) fail(i, "invalid dimension in a tensor type");
    if (d < kDynamicDim) fail(i, fmt::format("invalid dimension {} in a tensor type (dims are >= 0, or -1)", d));
    const size_t after = static_cast<size_t>(end - text.data());
    if (after >= text.size() || text[after] != 'x') fail(after, "expected 'x' after a dimension in a tensor type");
    t.dims.push_back(d);
    i = after + 1;
  }
  size_t j = i;
  while (j < text.size() && Lexer::is_ident_char(text[j])) ++j;
  const std::string_view element = text.substr(i, j - i);
  if (element.empty()) fail(i, "expected an element type such as f32 in a tensor type");
  const std::optional<DataType> dtype = parse_pir_element_name(element);
  if (!dtype) {
    fail(i, with_suggestion(fmt::format("unknown element type '{}' in a tensor type", element), element,
                            {"f16", "bf16", "f32", "f64", "b", "i8", "u8", "i16", "i32", "i64", "index", "c64", "c128"}));
  }
  t.dtype = *dtype;
  if (j >= text.size() || text[j] != '>') fail(j, fmt::format("expected '>' to close '{}<'", name));
  lexer_.set_pos(j + 1);
  return t;
}

Type Parser::parse_type(int depth) {
  const Token t = next();
  if (depth > kMaxNesting) fail(t.offset, fmt::format("types nested more than {} deep", kMaxNesting));
  if (t.kind == TokenKind::kNullType) return Type::none();
  if (t.kind != TokenKind::kIdent) fail(t.offset, fmt::format("expected a type, got {}", describe(t)));
  const std::string name(t.text);
  if (name == "vec") {
    expect('[', "after 'vec'");
    std::vector<Type> elements;
    if (peek().is(']')) {
      next();
      return Type::vector({});
    }
    while (true) {
      elements.push_back(parse_type(depth + 1));
      const Token sep = next();
      if (sep.is(']')) break;
      if (!sep.is(',')) fail(sep.offset, fmt::format("expected ',' or ']' in a vector type, got {}", describe(sep)));
    }
    return Type::vector(std::move(elements));
  }
  const bool tensor_name = name == "tensor" || name == "builtin.tensor" || name == "pd_op.tensor" ||
                           (name.size() > 7 && name.ends_with("_tensor") && name.find('.') == std::string::npos);
  if (tensor_name) {
    if (lexer_.peek_char() != '<') fail(lexer_.pos(), fmt::format("expected '<' after '{}'", name));
    return parse_tensor_body(name, t.offset);
  }
  if (std::optional<DataType> e = parse_pir_element_name(name)) return Type::element(*e);
  std::string params;
  const bool has_params = lexer_.peek_char() == '<';
  if (has_params) params = raw_balanced('<', '>');
  // Other dialect types carry their dialect (pd_op.tensor_array, cf.stack); kernel-dialect ones are
  // place-prefixed tensors with parameters (gpu_tensor_array<f32>). Anything else is a typo.
  if (name.find('.') == std::string::npos && !(has_params && name.find("tensor") != std::string::npos)) {
    fail(t.offset, with_suggestion(fmt::format("unknown type '{}'", name), name, type_suggestions()));
  }
  Type other = Type::other(name, params);
  try_dims_and_element(params, other);
  return other;
}

// ---------------------------------------------------------------------------------------------- attributes

std::vector<NamedAttribute> Parser::parse_attr_map() {
  expect('{', "to start an attribute map");
  std::vector<NamedAttribute> out;
  if (peek().is('}')) {
    next();
    return out;
  }
  while (true) {
    const Token key = next();
    if (key.kind != TokenKind::kIdent) fail(key.offset, fmt::format("expected an attribute name, got {}", describe(key)));
    expect(':', fmt::format("after attribute name '{}'", key.text));
    Attribute value = parse_attribute(0);
    const std::string name(key.text);
    auto previous = std::find_if(out.begin(), out.end(), [&](const NamedAttribute& a) { return a.name == name; });
    if (previous != out.end()) {
      Diagnostic d{Severity::kError, at(key.offset), fmt::format("attribute '{}' is given twice", name), {}};
      d.note("first given here", previous->name_loc);
      diags_.report(std::move(d));
    } else {
      out.push_back({name, std::move(value), at(key.offset)});
    }
    const Token sep = next();
    if (sep.is('}')) break;
    if (!sep.is(',')) fail(sep.offset, fmt::format("expected ',' or '}}' in an attribute map, got {}", describe(sep)));
  }
  return out;
}

Attribute Parser::parse_number_attribute(const Token& t, bool guessed, AttrKind kind) {
  const std::string_view s = t.text;
  const bool hex = s.find("0x") != std::string_view::npos || s.find("0X") != std::string_view::npos;
  if (hex && kind != AttrKind::kPointer) {
    if (kind != AttrKind::kNull) fail(t.offset, fmt::format("expected a number, got '{}'", s));
    return Attribute::pointer(std::string(s)).at(at(t.offset));
  }
  if (kind == AttrKind::kPointer) return Attribute::pointer(std::string(s)).at(at(t.offset));
  const bool floating = is_float_text(s);
  if (kind == AttrKind::kFloat || kind == AttrKind::kDouble || (kind == AttrKind::kNull && floating)) {
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (end != s.data() + s.size() || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      fail(t.offset, fmt::format("invalid number '{}'", s));
    }
    if (ec == std::errc::result_out_of_range) v = std::strtod(std::string(s).c_str(), nullptr);  // +-huge or 0
    Attribute a = kind == AttrKind::kFloat ? Attribute::float32(static_cast<float>(v)) : Attribute::float64(v);
    a.kind_guessed = guessed;
    return std::move(a).at(at(t.offset));
  }
  if (floating) fail(t.offset, fmt::format("expected an integer, got '{}'", s));
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    fail(t.offset, fmt::format("integer '{}' is out of range", s));
  }
  if (kind == AttrKind::kInt32) {
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      fail(t.offset, fmt::format("value {} does not fit in an Int32 attribute", v));
    }
    return Attribute::int32(static_cast<int32_t>(v)).at(at(t.offset));
  }
  if (kind == AttrKind::kIndex) return Attribute::index(v).at(at(t.offset));
  Attribute a = Attribute::int64(v);
  a.kind_guessed = guessed;
  return std::move(a).at(at(t.offset));
}

Attribute Parser::parse_typed_attribute(uint32_t offset, int depth) {
  // (Tag)value: the 2024 printer's typed attributes.
  next();  // '('
  const Token tag = next();
  if (tag.kind != TokenKind::kIdent) {
    fail(tag.offset, fmt::format("expected an attribute type tag such as (Float) or (pd_op.IntArray), got {}",
                                 describe(tag)));
  }
  expect(')', "to close the attribute type tag");
  const std::string_view tg = tag.text;
  const SourceLoc where = at(offset);
  auto number_token = [&](std::string_view what) {
    Token v = next();
    if (v.kind == TokenKind::kNumber || v.is_ident("inf") || v.is_ident("nan")) return v;
    fail(v.offset, fmt::format("expected {} after ({}), got {}", what, tg, describe(v)));
  };
  auto complex_value = [&](AttrKind kind, bool guessed) {
    const Token real = next();
    if (!real.is_ident("real")) fail(real.offset, fmt::format("expected 'real:' in a complex value, got {}", describe(real)));
    expect(':', "after 'real'");
    const Attribute re = parse_number_attribute(number_token("a number"), false, AttrKind::kDouble);
    const Token imag = next();
    if (!imag.is_ident("imag")) fail(imag.offset, fmt::format("expected 'imag:' in a complex value, got {}", describe(imag)));
    expect(':', "after 'imag'");
    const Attribute im = parse_number_attribute(number_token("a number"), false, AttrKind::kDouble);
    Attribute a = Attribute::complex(kind, re.float_value, im.float_value);
    a.kind_guessed = guessed;
    return std::move(a).at(where);
  };
  if (tg == "Float" || tg == "Double") {
    Attribute a = parse_number_attribute(number_token("a number"), false, tg == "Float" ? AttrKind::kFloat : AttrKind::kDouble);
    return std::move(a).at(where);
  }
  if (tg == "Int32" || tg == "Int64" || tg == "Index") {
    const Token v = next();
    if (v.kind != TokenKind::kNumber) fail(v.offset, fmt::format("expected an integer after ({}), got {}", tg, describe(v)));
    const AttrKind kind = tg == "Int32" ? AttrKind::kInt32 : tg == "Int64" ? AttrKind::kInt64 : AttrKind::kIndex;
    return parse_number_attribute(v, false, kind).at(where);
  }
  if (tg == "Pointer") {
    const Token v = next();
    if (v.kind != TokenKind::kNumber && v.kind != TokenKind::kIdent) {
      fail(v.offset, fmt::format("expected an address after (Pointer), got {}", describe(v)));
    }
    return Attribute::pointer(std::string(v.text)).at(where);
  }
  if (tg == "Complex64" || tg == "Complex128") {
    return complex_value(tg == "Complex64" ? AttrKind::kComplex64 : AttrKind::kComplex128, false);
  }
  if (tg == "pd_op.IntArray") {
    expect('[', "after (pd_op.IntArray)");
    std::vector<int64_t> ints;
    if (peek().is(']')) {
      next();
    } else {
      while (true) {
        const Token v = next();
        if (v.kind != TokenKind::kNumber) fail(v.offset, fmt::format("expected an integer in an IntArray, got {}", describe(v)));
        ints.push_back(parse_number_attribute(v, false, AttrKind::kInt64).int_value);
        const Token sep = next();
        if (sep.is(']')) break;
        if (!sep.is(',')) fail(sep.offset, fmt::format("expected ',' or ']' in an IntArray, got {}", describe(sep)));
      }
    }
    return Attribute::int_array(std::move(ints)).at(where);
  }
  if (tg == "pd_op.DataType" || tg == "pd_op.Scalar") {
    const Token v = next();
    const std::optional<DataType> dtype = v.kind == TokenKind::kIdent ? parse_dtype_name(v.text) : std::nullopt;
    if (!dtype || v.text == "undefined" || v.text == "index") {
      fail(v.offset, with_suggestion(fmt::format("unknown data type {}", describe(v)), v.text, dtype_names()));
    }
    if (tg == "pd_op.DataType") return Attribute::data_type(*dtype).at(where);
    // (pd_op.Scalar)float32:1.5, kforge's spelling of a Scalar attribute (Paddle does not print them).
    expect(':', "after the data type of a scalar");
    if (*dtype == DataType::kBool) {
      const Token b = next();
      if (!b.is_ident("true") && !b.is_ident("false")) fail(b.offset, fmt::format("expected true or false, got {}", describe(b)));
      return Attribute::scalar_bool(b.text == "true").at(where);
    }
    if (is_complex(*dtype)) {
      const Attribute c = complex_value(AttrKind::kComplex128, false);
      return Attribute::scalar_complex(*dtype, c.float_value, c.imag_value).at(where);
    }
    if (is_floating(*dtype)) {
      const Attribute f = parse_number_attribute(number_token("a number"), false, AttrKind::kDouble);
      return Attribute::scalar_float(*dtype, f.float_value).at(where);
    }
    const Token n = next();
    if (n.kind != TokenKind::kNumber) fail(n.offset, fmt::format("expected an integer, got {}", describe(n)));
    return Attribute::scalar_int(*dtype, parse_number_attribute(n, false, AttrKind::kInt64).int_value).at(where);
  }
  if (tg == "pd_op.Place") {
    const Token p = next();
    if (!p.is_ident("Place")) fail(p.offset, fmt::format("expected 'Place(...)' after (pd_op.Place), got {}", describe(p)));
    const std::string body = raw_balanced('(', ')');
    std::optional<Place> place = parse_place_body(body);
    if (!place) fail(p.offset, fmt::format("invalid place 'Place({})'", body));
    return Attribute::place_attr(std::move(*place)).at(where);
  }
  if (tg == "pd_op.DataLayout") {
    const Token l = next();
    if (l.is_ident("Undefined") && lexer_.text().substr(lexer_.pos(), 11) == "(AnyLayout)") {
      lexer_.set_pos(lexer_.pos() + 11);
      return Attribute::data_layout(DataLayout::kUndefined).at(where);
    }
    const std::optional<DataLayout> layout = l.kind == TokenKind::kIdent ? parse_layout_name(l.text) : std::nullopt;
    if (!layout) fail(l.offset, fmt::format("unknown data layout {}", describe(l)));
    return Attribute::data_layout(*layout).at(where);
  }
  (void)depth;
  std::string msg = fmt::format("unknown attribute type tag '({})'", tg);
  if (std::optional<std::string> close = closest_match(tg, tag_names())) msg += fmt::format("; did you mean '({})'?", *close);
  fail(tag.offset, msg);
}

Attribute Parser::parse_attribute(int depth) {
  const Token t = peek();
  if (depth > kMaxNesting) fail(t.offset, fmt::format("attributes nested more than {} deep", kMaxNesting));
  const SourceLoc where = at(t.offset);
  switch (t.kind) {
    case TokenKind::kString: next(); return Attribute::string(t.value).at(where);
    case TokenKind::kNumber: next(); return parse_number_attribute(t, true, AttrKind::kNull);
    case TokenKind::kNullType: next(); return Attribute::type_attr(Type::none()).at(where);
    case TokenKind::kIdent: break;
    case TokenKind::kPunct:
      if (t.is('[')) {
        next();
        std::vector<Attribute> elements;
        bool guessed = false;
        if (peek().is(']')) {
          next();
        } else {
          while (true) {
            elements.push_back(parse_attribute(depth + 1));
            guessed = guessed || elements.back().kind_guessed;
            const Token sep = next();
            if (sep.is(']')) break;
            if (!sep.is(',')) fail(sep.offset, fmt::format("expected ',' or ']' in an array, got {}", describe(sep)));
          }
        }
        Attribute a = Attribute::array(std::move(elements));
        a.kind_guessed = guessed;
        return std::move(a).at(where);
      }
      if (t.is('(')) return parse_typed_attribute(t.offset, depth);
      if (t.is('<')) {
        // <#AttrNull>, <#AttrNotImplemented>, kernel keys <backend:GPU|layout:NCHW|dtype:float32>.
        const std::string raw = raw_balanced('<', '>');
        if (raw == "#AttrNull") return Attribute::null().at(where);
        return Attribute::opaque("<" + raw + ">").at(where);
      }
      if (t.is('{')) {
        // pd_dist operation attributes print as nested maps: kept verbatim.
        return Attribute::opaque("{" + raw_balanced('{', '}') + "}").at(where);
      }
      [[fallthrough]];
    default: fail(t.offset, fmt::format("expected an attribute value, got {}", describe(t)));
  }

  const std::string_view word = t.text;
  const std::string_view rest = lexer_.text().substr(t.offset + word.size());
  if (word == "true" || word == "false") {
    next();
    return Attribute::boolean(word == "true").at(where);
  }
  if (word == "inf" || word == "nan") {
    next();
    return parse_number_attribute(t, true, AttrKind::kNull);
  }
  if (word == "Place" && !rest.empty() && rest[0] == '(') {
    next();
    const std::string body = raw_balanced('(', ')');
    std::optional<Place> place = parse_place_body(body);
    if (!place) fail(t.offset, fmt::format("invalid place 'Place({})'", body));
    return Attribute::place_attr(std::move(*place)).at(where);
  }
  if (word == "Undefined" && rest.substr(0, 11) == "(AnyLayout)") {
    next();
    lexer_.set_pos(lexer_.pos() + 11);
    return Attribute::data_layout(DataLayout::kUndefined).at(where);
  }
  if (word == "real" && !rest.empty() && rest[0] == ':') {
    // An untyped complex value, as ostream prints phi::complex: real:1 imag:2.
    next();
    expect(':', "after 'real'");
    const Token re = next();
    if (re.kind != TokenKind::kNumber && !re.is_ident("inf") && !re.is_ident("nan")) {
      fail(re.offset, fmt::format("expected a number, got {}", describe(re)));
    }
    const Token imag = next();
    if (!imag.is_ident("imag")) fail(imag.offset, fmt::format("expected 'imag:' in a complex value, got {}", describe(imag)));
    expect(':', "after 'imag'");
    const Token im = next();
    if (im.kind != TokenKind::kNumber && !im.is_ident("inf") && !im.is_ident("nan")) {
      fail(im.offset, fmt::format("expected a number, got {}", describe(im)));
    }
    Attribute a = Attribute::complex(AttrKind::kComplex128,
                                     parse_number_attribute(re, false, AttrKind::kDouble).float_value,
                                     parse_number_attribute(im, false, AttrKind::kDouble).float_value);
    a.kind_guessed = true;
    return std::move(a).at(where);
  }
  if (std::optional<DataType> dtype = parse_dtype_name(word); dtype && dtype_name(*dtype) == word) {
    next();
    return Attribute::data_type(*dtype).at(where);
  }
  if (std::optional<DataLayout> layout = printed_layout(word)) {
    next();
    return Attribute::data_layout(*layout).at(where);
  }
  // Anything else is a TypeAttribute (f32, tensor<2xf32>, vec[...], pd_op.tensor_array<f32>).
  const bool looks_like_type = parse_pir_element_name(word) || word == "vec" || word.find('.') != std::string_view::npos ||
                               word.find("tensor") != std::string_view::npos;
  if (!looks_like_type) fail(t.offset, fmt::format("unknown attribute value '{}'", word));
  return Attribute::type_attr(parse_type(depth + 1)).at(where);
}

}  // namespace kforge::ir::pir_text
