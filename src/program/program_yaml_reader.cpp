#include "program/program_yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "support/text.h"
#include "support/yaml_progress.h"
#include "support/yaml_scalar.h"

namespace kforge::ir {

namespace {

constexpr int kMaxNesting = 64;

using yaml::CoreKind;
using ScalarClass = CoreKind;  // the YAML 1.2 core schema's classes (support/yaml_scalar.h)

bool is_quoted(const YAML::Node& n) { return n.Tag() == "!"; }

ScalarClass classify(const YAML::Node& n) {
  if (n.IsNull()) return ScalarClass::kNull;
  return is_quoted(n) ? ScalarClass::kString : yaml::resolve_core_scalar(n.Scalar()).kind;
}

std::string node_kind(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return fmt::format("'{}'", n.Scalar());
    default: return "an undefined node";
  }
}

class YamlReader {
 public:
  YamlReader(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags)
      : sources_(sources), file_(file), diags_(diags) {}

  std::optional<Program> read() {
    const size_t errors_before = diags_.error_count();
    YAML::Node root;
    const std::string_view text = sources_.contents(file_);
    if (const std::optional<size_t> bad = find_non_printable_yaml_byte(text)) {
      diags_.error({file_, static_cast<uint32_t>(*bad)}, fmt::format("control character U+{:04X} is not allowed in YAML", static_cast<unsigned char>(text[*bad])));
      return std::nullopt;
    }
    const auto loc_of = [this](const YAML::Mark& mark) { return at(mark); };
    if (!yaml_precheck_passes(text, diags_, loc_of, "invalid YAML: ")) return std::nullopt;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::ParserException& e) {
      diags_.error(at(e.mark), "invalid YAML: " + e.msg);
      return std::nullopt;
    } catch (const YAML::Exception& e) {
      diags_.error({file_, 0}, std::string("invalid YAML: ") + e.what());
      return std::nullopt;
    }
    if (!root.IsMap()) {
      diags_.error(root.IsNull() ? SourceLoc{file_, 0} : at(root.Mark()),
                   fmt::format("expected a mapping with 'program' and 'ops' at the top of a program YAML, got {}",
                               node_kind(root)));
      return std::nullopt;
    }
    program_.format = SourceFormat::kProgramYaml;
    program_.file = file_;
    check_keys(root, {"program", "inputs", "params", "ops", "outputs"}, "a program YAML");
    const YAML::Node name = required(root, "program", "a program YAML");
    const YAML::Node ops = required(root, "ops", "a program YAML");
    if (!name || !ops) return std::nullopt;
    if (!name.IsScalar() || name.Scalar().empty()) {
      error(name, fmt::format("expected the program's name for 'program', got {}", node_kind(name)));
    } else {
      program_.name = name.Scalar();
    }
    if (const YAML::Node inputs = root["inputs"]) read_declarations(inputs, "inputs", false);
    if (const YAML::Node params = root["params"]) read_declarations(params, "params", true);
    if (expect_sequence(ops, "'ops'")) {
      for (const YAML::Node& op : ops) read_op(op);
    }
    if (const YAML::Node outputs = root["outputs"]) read_outputs(outputs);
    if (diags_.error_count() > errors_before) return std::nullopt;
    assign_value_names(program_);
    return std::move(program_);
  }

 private:
  SourceLoc at(const YAML::Mark& m) const {
    if (m.is_null()) return {file_, 0};
    return sources_.loc_at(file_, static_cast<uint32_t>(m.line + 1), static_cast<uint32_t>(m.column + 1));
  }
  SourceLoc at(const YAML::Node& n) const { return at(n.Mark()); }
  void error(const YAML::Node& n, std::string message) { diags_.error(at(n), std::move(message)); }

  YAML::Node required(const YAML::Node& map, const char* key, std::string_view what) {
    YAML::Node n = map[key];
    if (!n) error(map, fmt::format("missing key '{}' in {}", key, what));
    return n;
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& known, std::string_view what) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string msg = fmt::format("unknown key '{}' in {}", key, what);
      if (std::optional<std::string> close = closest_match(key, known)) msg += fmt::format("; did you mean '{}'?", *close);
      error(it->first, msg);
    }
  }

  bool expect_sequence(const YAML::Node& n, std::string_view what) {
    if (n.IsSequence()) return true;
    error(n, fmt::format("expected a list for {}, got {}", what, node_kind(n)));
    return false;
  }

  bool expect_map(const YAML::Node& n, std::string_view what) {
    if (n.IsMap()) return true;
    error(n, fmt::format("expected a mapping for {}, got {}", what, node_kind(n)));
    return false;
  }

  std::optional<std::string> name_of(const YAML::Node& n, std::string_view what) {
    if (n.IsScalar() && !n.Scalar().empty() && classify(n) != ScalarClass::kNull) return n.Scalar();
    error(n, fmt::format("expected a value name for {}, got {}", what, node_kind(n)));
    return std::nullopt;
  }

  std::optional<int64_t> integer(const YAML::Node& n, std::string_view what) {
    if (n.IsScalar() && !is_quoted(n)) {
      const yaml::CoreScalar r = yaml::resolve_core_scalar(n.Scalar());
      if (r.kind == CoreKind::kInt && !r.out_of_range) return r.int_value;
      if (r.kind == CoreKind::kInt) {
        error(n, fmt::format("integer {} for {} is out of range", n.Scalar(), what));
        return std::nullopt;
      }
    }
    error(n, fmt::format("expected an integer for {}, got {}", what, node_kind(n)));
    return std::nullopt;
  }

  std::optional<double> number(const YAML::Node& n, std::string_view what) {
    if (n.IsScalar() && !is_quoted(n)) {
      const yaml::CoreScalar r = yaml::resolve_core_scalar(n.Scalar());
      if (r.kind == CoreKind::kInt || r.kind == CoreKind::kFloat) return r.float_value;
    }
    error(n, fmt::format("expected a number for {}, got {}", what, node_kind(n)));
    return std::nullopt;
  }

  std::optional<DataType> dtype_of(const YAML::Node& n) {
    if (n.IsScalar()) {
      if (std::optional<DataType> d = parse_dtype_name(n.Scalar()); d && n.Scalar() != "index") return d;
    }
    std::string msg = fmt::format("unknown data type {}", node_kind(n));
    if (n.IsScalar()) {
      if (std::optional<std::string> close = closest_match(n.Scalar(), dtype_names())) {
        msg += fmt::format("; did you mean '{}'?", *close);
      }
    }
    error(n, msg);
    return std::nullopt;
  }

  std::optional<std::vector<int64_t>> shape_of(const YAML::Node& n) {
    if (!expect_sequence(n, "'shape'")) return std::nullopt;
    std::vector<int64_t> dims;
    for (const YAML::Node& d : n) {
      const std::optional<int64_t> v = integer(d, "a dim of 'shape'");
      if (!v) return std::nullopt;
      if (*v < kDynamicDim) {
        error(d, fmt::format("invalid dim {} (dims are >= 0, or -1 for a dynamic dim)", *v));
        return std::nullopt;
      }
      dims.push_back(*v);
    }
    return dims;
  }

  std::optional<Type> tensor_type(const YAML::Node& decl, std::string_view what) {
    const YAML::Node dtype = required(decl, "dtype", what);
    const YAML::Node shape = required(decl, "shape", what);
    if (!dtype || !shape) return std::nullopt;
    const std::optional<DataType> d = dtype_of(dtype);
    const std::optional<std::vector<int64_t>> s = shape_of(shape);
    if (!d || !s) return std::nullopt;
    return Type::tensor(*d, *s);
  }

  void define(const std::string& name, ValueId v, const YAML::Node& where) {
    Value& val = program_.value(v);
    val.name = name;
    val.source_id = name;
    val.loc = at(where);
    auto [it, inserted] = values_.emplace(name, std::make_pair(v, at(where)));
    if (!inserted) {
      Diagnostic d{Severity::kError, at(where), fmt::format("value '{}' is defined twice", name), {}};
      d.note("first defined here", it->second.second);
      diags_.report(std::move(d));
    }
  }

  std::optional<ValueId> use(const YAML::Node& n, std::string_view what) {
    const std::optional<std::string> name = name_of(n, what);
    if (!name) return std::nullopt;
    auto it = values_.find(*name);
    if (it != values_.end()) return it->second.first;
    std::vector<std::string> known;
    for (const auto& [k, v] : values_) known.push_back(k);
    std::string msg = fmt::format("use of undefined value '{}'", *name);
    if (std::optional<std::string> close = closest_match(*name, known)) msg += fmt::format("; did you mean '{}'?", *close);
    error(n, msg);
    return std::nullopt;
  }

  void read_declarations(const YAML::Node& list, std::string_view key, bool params) {
    if (!expect_sequence(list, fmt::format("'{}'", key))) return;
    const std::string what = params ? "a parameter" : "an input";
    for (const YAML::Node& decl : list) {
      if (!expect_map(decl, what)) continue;
      check_keys(decl, {"name", "dtype", "shape"}, what);
      const YAML::Node name_node = required(decl, "name", what);
      if (!name_node) continue;
      const std::optional<std::string> name = name_of(name_node, fmt::format("the name of {}", what));
      std::optional<Type> type = tensor_type(decl, what);
      if (!name || !type) continue;
      OpSpec spec;
      spec.loc = at(decl);
      spec.name_loc = at(name_node);
      const SourceLoc name_loc = at(name_node);
      if (params) {
        spec.dialect = "builtin";
        spec.name = "parameter";
        spec.attributes.push_back({"parameter_name", Attribute::string(*name).at(name_loc), name_loc});
      } else {
        // What Paddle's static graph front end writes for an input: pd_op.data {name, shape, dtype, place}.
        spec.dialect = "pd_op";
        spec.name = "data";
        spec.attributes.push_back({"name", Attribute::string(*name).at(name_loc), name_loc});
        spec.attributes.push_back({"shape", Attribute::int_array(type->dims).at(at(decl["shape"])), at(decl["shape"])});
        spec.attributes.push_back({"dtype", Attribute::data_type(type->dtype).at(at(decl["dtype"])), at(decl["dtype"])});
        spec.attributes.push_back({"place", Attribute::place_attr(Place{}).at(at(decl)), at(decl)});
      }
      spec.result_types.push_back(std::move(*type));
      const OpId op = program_.append_op(program_.top_block(), std::move(spec));
      define(*name, program_.op(op).results[0], name_node);
    }
  }

  std::optional<Attribute> typed_attribute(const YAML::Node& map, int depth) {
    const YAML::Node key = map.begin()->first;
    const YAML::Node v = map.begin()->second;
    const std::string kind = key.IsScalar() ? key.Scalar() : "";
    const SourceLoc where = at(map);
    if (kind == "i32" || kind == "i64" || kind == "index") {
      const std::optional<int64_t> i = integer(v, fmt::format("an {} attribute", kind));
      if (!i) return std::nullopt;
      if (kind == "i32") {
        if (*i < std::numeric_limits<int32_t>::min() || *i > std::numeric_limits<int32_t>::max()) {
          error(v, fmt::format("value {} does not fit in an i32 attribute", *i));
          return std::nullopt;
        }
        return Attribute::int32(static_cast<int32_t>(*i)).at(where);
      }
      return (kind == "i64" ? Attribute::int64(*i) : Attribute::index(*i)).at(where);
    }
    if (kind == "f32" || kind == "f64") {
      const std::optional<double> f = number(v, fmt::format("an {} attribute", kind));
      if (!f) return std::nullopt;
      return (kind == "f32" ? Attribute::float32(static_cast<float>(*f)) : Attribute::float64(*f)).at(where);
    }
    if (kind == "bool") {
      if (v.IsScalar() && classify(v) == ScalarClass::kBool) {
        return Attribute::boolean(v.Scalar()[0] == 't' || v.Scalar()[0] == 'T').at(where);
      }
      error(v, fmt::format("expected true or false for a bool attribute, got {}", node_kind(v)));
      return std::nullopt;
    }
    if (kind == "str") {
      if (v.IsScalar()) return Attribute::string(v.Scalar()).at(where);
      error(v, fmt::format("expected a string for a str attribute, got {}", node_kind(v)));
      return std::nullopt;
    }
    if (kind == "dtype") {
      const std::optional<DataType> d = dtype_of(v);
      if (!d) return std::nullopt;
      return Attribute::data_type(*d).at(where);
    }
    if (kind == "layout") {
      const std::optional<DataLayout> l = v.IsScalar() ? parse_layout_name(v.Scalar()) : std::nullopt;
      if (!l) {
        error(v, fmt::format("unknown data layout {}", node_kind(v)));
        return std::nullopt;
      }
      return Attribute::data_layout(*l).at(where);
    }
    if (kind == "place") {
      std::string body = v.IsScalar() ? v.Scalar() : "";
      if (body.rfind("Place(", 0) == 0 && body.back() == ')') body = body.substr(6, body.size() - 7);
      std::optional<Place> p = body.empty() ? std::nullopt : parse_place_body(body);
      if (!p) {
        error(v, fmt::format("invalid place {} (expected e.g. cpu, gpu:0, undefined)", node_kind(v)));
        return std::nullopt;
      }
      return Attribute::place_attr(std::move(*p)).at(where);
    }
    if (kind == "int_array") {
      if (!expect_sequence(v, "an int_array attribute")) return std::nullopt;
      std::vector<int64_t> ints;
      for (const YAML::Node& e : v) {
        const std::optional<int64_t> i = integer(e, "an element of an int_array attribute");
        if (!i) return std::nullopt;
        ints.push_back(*i);
      }
      return Attribute::int_array(std::move(ints)).at(where);
    }
    if (kind == "scalar") {
      if (!v.IsSequence() || v.size() != 2) {
        error(v, fmt::format("expected [dtype, value] for a scalar attribute, got {}", node_kind(v)));
        return std::nullopt;
      }
      const std::optional<DataType> d = dtype_of(v[0]);
      if (!d) return std::nullopt;
      if (*d == DataType::kBool) {
        if (classify(v[1]) != ScalarClass::kBool) {
          error(v[1], fmt::format("expected true or false for a bool scalar, got {}", node_kind(v[1])));
          return std::nullopt;
        }
        return Attribute::scalar_bool(v[1].Scalar()[0] == 't' || v[1].Scalar()[0] == 'T').at(where);
      }
      if (is_floating(*d)) {
        const std::optional<double> f = number(v[1], "a floating scalar");
        if (!f) return std::nullopt;
        return Attribute::scalar_float(*d, *f).at(where);
      }
      if (is_integer(*d)) {
        const std::optional<int64_t> i = integer(v[1], "an integer scalar");
        if (!i) return std::nullopt;
        return Attribute::scalar_int(*d, *i).at(where);
      }
      error(v[0], fmt::format("unsupported scalar data type '{}'", v[0].Scalar()));
      return std::nullopt;
    }
    (void)depth;
    static const std::vector<std::string> kinds = {"i32", "i64", "index", "f32", "f64", "bool", "str",
                                                   "dtype", "layout", "place", "int_array", "scalar"};
    std::string msg = fmt::format("unknown attribute kind '{}' (expected one of {})", kind, join(kinds, ", "));
    if (std::optional<std::string> close = closest_match(kind, kinds)) msg = fmt::format("unknown attribute kind '{}'; did you mean '{}'?", kind, *close);
    error(key, msg);
    return std::nullopt;
  }

  std::optional<Attribute> attribute(const YAML::Node& v, int depth) {
    if (depth > kMaxNesting) {
      error(v, fmt::format("attribute values nested more than {} deep", kMaxNesting));
      return std::nullopt;
    }
    const SourceLoc where = at(v);
    if (v.IsSequence()) {
      std::vector<Attribute> elements;
      bool guessed = false;
      for (const YAML::Node& e : v) {
        std::optional<Attribute> a = attribute(e, depth + 1);
        if (!a) return std::nullopt;
        guessed = guessed || a->kind_guessed;
        elements.push_back(std::move(*a));
      }
      Attribute a = Attribute::array(std::move(elements));
      a.kind_guessed = guessed;
      return std::move(a).at(where);
    }
    if (v.IsMap()) {
      if (v.size() != 1) {
        error(v, "expected a one-key mapping giving the attribute kind, such as {i32: 3}");
        return std::nullopt;
      }
      return typed_attribute(v, depth);
    }
    switch (classify(v)) {
      case ScalarClass::kNull:
        error(v, "missing attribute value");
        return std::nullopt;
      case ScalarClass::kBool: return Attribute::boolean(v.Scalar()[0] == 't' || v.Scalar()[0] == 'T').at(where);
      case ScalarClass::kInt: {
        const std::optional<int64_t> i = integer(v, "an attribute");
        if (!i) return std::nullopt;
        return Attribute::int64(*i).guessed().at(where);
      }
      case ScalarClass::kFloat: {
        const std::optional<double> f = number(v, "an attribute");
        if (!f) return std::nullopt;
        return Attribute::float64(*f).guessed().at(where);
      }
      case ScalarClass::kString: {
        Attribute a = Attribute::string(v.Scalar());
        a.kind_guessed = !is_quoted(v);  // an unquoted word may be a DataType, layout or place
        return std::move(a).at(where);
      }
    }
    return std::nullopt;
  }

  void read_op(const YAML::Node& node) {
    if (!expect_map(node, "an op")) return;
    check_keys(node, {"op", "in", "out", "attrs"}, "an op");
    const YAML::Node op_name = required(node, "op", "an op");
    if (!op_name) return;
    if (!op_name.IsScalar() || op_name.Scalar().empty()) {
      error(op_name, fmt::format("expected an op name for 'op', got {}", node_kind(op_name)));
      return;
    }
    OpSpec spec;
    spec.loc = at(node);
    spec.name_loc = at(op_name);
    const std::string& full = op_name.Scalar();
    const size_t dot = full.find('.');
    if (dot == std::string::npos) {
      spec.dialect = "pd_op";
      spec.name = full;
    } else {
      spec.dialect = full.substr(0, dot);
      spec.name = full.substr(dot + 1);
      if (spec.dialect.empty() || spec.name.empty()) {
        error(op_name, fmt::format("op name '{}' is not '<op>' or '<dialect>.<op>'", full));
        return;
      }
    }
    std::vector<SourceLoc> operand_locs;
    if (const YAML::Node in = node["in"]) {
      if (expect_sequence(in, "'in'")) {
        for (const YAML::Node& operand : in) {
          operand_locs.push_back(at(operand));
          if (operand.IsNull() || (operand.IsScalar() && classify(operand) == ScalarClass::kNull)) {
            spec.operands.push_back(ValueId{});
            continue;
          }
          spec.operands.push_back(use(operand, "an operand").value_or(ValueId{}));
        }
      }
    }
    std::vector<std::pair<std::string, YAML::Node>> results;
    if (const YAML::Node out = node["out"]) {
      if (expect_sequence(out, "'out'")) {
        for (const YAML::Node& r : out) {
          if (r.IsMap()) {
            check_keys(r, {"name", "dtype", "shape"}, "a result");
            const YAML::Node n = required(r, "name", "a result");
            std::optional<std::string> name = n ? name_of(n, "a result") : std::nullopt;
            std::optional<Type> type = tensor_type(r, "a result");
            spec.result_types.push_back(type.value_or(Type::none()));
            results.push_back({name.value_or(""), n ? n : r});
          } else {
            std::optional<std::string> name = name_of(r, "a result");
            spec.result_types.push_back(Type::none());
            results.push_back({name.value_or(""), r});
          }
        }
      }
    }
    if (const YAML::Node attrs = node["attrs"]) {
      if (expect_map(attrs, "'attrs'")) {
        for (auto it = attrs.begin(); it != attrs.end(); ++it) {
          const std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
          if (name.empty()) {
            error(it->first, "expected an attribute name");
            continue;
          }
          std::optional<Attribute> a = attribute(it->second, 0);
          if (a) spec.attributes.push_back({name, std::move(*a), at(it->first)});
        }
      }
    }
    const OpId op = program_.append_op(program_.top_block(), std::move(spec));
    program_.op(op).operand_locs = std::move(operand_locs);
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i].first.empty()) define(results[i].first, program_.op(op).results[i], results[i].second);
    }
  }

  void read_outputs(const YAML::Node& outputs) {
    if (!expect_sequence(outputs, "'outputs'")) return;
    int32_t col = 0;
    for (const YAML::Node& out : outputs) {
      const std::optional<ValueId> v = use(out, "an output");
      if (!v) continue;
      const std::string name = out.Scalar();
      OpSpec spec;
      spec.dialect = "pd_op";
      spec.name = "fetch";
      spec.loc = at(out);
      spec.name_loc = at(out);
      spec.operands.push_back(*v);
      spec.attributes.push_back({"name", Attribute::string(name).at(at(out)), at(out)});
      spec.attributes.push_back({"col", Attribute::int32(col++).at(at(out)), at(out)});
      spec.result_types.push_back(program_.type_of(*v));
      const OpId op = program_.append_op(program_.top_block(), std::move(spec));
      program_.op(op).operand_locs.push_back(at(out));
      Value& result = program_.value(program_.op(op).results[0]);
      result.source_id = name;
      result.loc = at(out);
    }
  }

  const SourceManager& sources_;
  uint32_t file_;
  DiagnosticEngine& diags_;
  Program program_;
  std::map<std::string, std::pair<ValueId, SourceLoc>> values_;
};

}  // namespace

std::optional<Program> read_program_yaml(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags) {
  return YamlReader(sources, file, diags).read();
}

}  // namespace kforge::ir
