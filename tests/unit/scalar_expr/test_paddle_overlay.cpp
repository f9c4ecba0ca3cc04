// Type-checks every expression of the kforge overlays against the real Paddle op definitions, and
// spot-checks the formulas' values with the evaluator:
//  - ops/paddle_overlay.yaml is loaded over ../shared/refdata/paddle/ops.yaml with the opdef loader (as
//    `kforge --ops ops.yaml --ops paddle_overlay.yaml` does) and must load without an error;
//  - ops/paddle_overlay_static.yaml holds the ops that ops.yaml lacks; their arguments come from Paddle's
//    PIR signatures (pir_op_signatures.json), since the files that define them are not in refdata.
// Skipped, with a warning, where refdata is absent.
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "harness.h"
#include "scalar_expr/reduction.h"
#include "opdef/op_loader.h"

using namespace kforge;
using namespace kforge::expr;
using namespace kforge::expr::testing;

namespace fs = std::filesystem;

namespace {

using ST = ScalarType;

const fs::path kSourceRoot = KFORGE_SOURCE_DIR;
const fs::path kOverlay = kSourceRoot / "ops" / "paddle_overlay.yaml";
const fs::path kStaticOverlay = kSourceRoot / "ops" / "paddle_overlay_static.yaml";
const fs::path kRefdata = kSourceRoot / ".." / "shared" / "refdata" / "paddle";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// One argument of a Paddle op: a tensor input or an attribute with its declared type.
struct Arg {
  std::string name;
  bool tensor = false;
  std::string type;
};

// The arguments of an op as the opdef loader read them from ops.yaml.
std::vector<Arg> opdef_args(const opdef::Op& op) {
  std::vector<Arg> out;
  for (const opdef::Input& in : op.inputs) out.push_back({in.name, true, "Tensor"});
  for (const opdef::Attribute& a : op.attributes) {
    out.push_back({a.name, false, std::string(opdef::arg_type_info(a.type).spelling)});
  }
  return out;
}

// The arguments of a PIR signature (pir_op_signatures.json): tensor operands, mutable attributes (operands
// that are attributes), then attributes, with PIR attribute classes mapped back to op-YAML spellings.
std::vector<Arg> pir_args(const nlohmann::json& sig) {
  std::vector<Arg> out;
  for (const auto& in : sig.at("inputs")) {
    const std::string type = in.at("type");
    Arg a{in.at("name"), type == "paddle::dialect::DenseTensorType", "Tensor"};
    if (type == "paddle::dialect::ScalarAttribute") a.type = "Scalar";
    if (type == "paddle::dialect::IntArrayAttribute") a.type = "IntArray";
    out.push_back(a);
  }
  static const std::map<std::string, std::string> kPirTypes = {
      {"pir::FloatAttribute", "float"}, {"pir::DoubleAttribute", "double"}, {"pir::Int32Attribute", "int"},
      {"pir::Int64Attribute", "int64_t"}, {"pir::BoolAttribute", "bool"}};
  for (const auto& attr : sig.at("attrs")) {
    const std::string type = attr.at("type");
    Arg a{attr.at("name"), false, type};
    if (auto it = kPirTypes.find(type); it != kPirTypes.end()) a.type = it->second;
    if (type == "paddle::dialect::ScalarAttribute") {
      a.type = attr.value("data_type", "") == "double" ? "Scalar(double)" : "Scalar(float)";
    }
    out.push_back(a);
  }
  return out;
}

// The expression context of an op: tensor inputs of dtype `dtype` (`condition` is bool), attributes by
// their declared type. With `exact_floats`, float attributes are float64 so that spot values are exact.
ExprContext context_for(const std::string& op, const std::vector<Arg>& args, ST dtype, bool exact_floats = false) {
  ExprContext ctx(op);
  for (const Arg& a : args) {
    if (a.tensor) {
      ctx.input(a.name, a.name == "condition" ? ST::kBool : dtype);
    } else if (std::optional<ST> t = paddle_attribute_scalar_type(a.type)) {
      ctx.attribute(a.name, exact_floats && *t == ST::kFloat32 ? ST::kFloat64 : *t);
    } else {
      ctx.opaque_attribute(a.name, a.type);
    }
  }
  return ctx;
}

bool refdata_present() {
  if (fs::exists(kRefdata / "ops.yaml") && fs::exists(kRefdata / "pir_op_signatures.json")) return true;
  WARN("skipped: Paddle reference data not found at " << kRefdata.string()
                                                     << " (the overlays are checked only where refdata is present)");
  return false;
}

// An overlay entry as yaml-cpp reads it.
struct OverlayOp {
  std::string name;
  YAML::Node node;
  bool in_static_file = false;
};

std::vector<OverlayOp> load_overlays() {
  std::vector<OverlayOp> out;
  for (const YAML::Node& op : YAML::LoadFile(kOverlay.string())) out.push_back({op["op"].as<std::string>(), op, false});
  for (const YAML::Node& op : YAML::LoadFile(kStaticOverlay.string())) out.push_back({op["op"].as<std::string>(), op, true});
  return out;
}

// Everything the checks need: ops.yaml + paddle_overlay.yaml through the opdef loader, the static overlay
// through yaml-cpp, the PIR signatures, all in one SourceManager so diagnostics are located.
struct Loaded {
  Harness h;
  opdef::OpLibrary library;
  nlohmann::json pir;
  uint32_t static_file = 0;
  std::string loader_output;

  Loaded() {
    opdef::OpLoader loader(h.sources, h.diags);
    loader.add_file((kRefdata / "ops.yaml").string());
    const std::string overlay = read_file(kOverlay);
    loader.add_buffer(h.sources.add_buffer(kOverlay.string(), overlay));
    library = std::move(loader).finish();
    loader_output = h.take();
    static_file = h.sources.add_buffer(kStaticOverlay.string(), read_file(kStaticOverlay));
    pir = nlohmann::json::parse(read_file(kRefdata / "pir_op_signatures.json"));
  }

  // The op's arguments: from the opdef library, or from the PIR signatures for the static overlay.
  std::optional<std::vector<Arg>> args(const OverlayOp& op) const {
    if (!op.in_static_file) {
      const opdef::Op* def = library.find(op.name);
      if (!def) return std::nullopt;
      return opdef_args(*def);
    }
    if (!pir.contains("pd_op." + op.name)) return std::nullopt;
    return pir_args(pir.at("pd_op." + op.name));
  }
};

// The location yaml-cpp gives a scalar (0-based mark) in a registered buffer.
SourceLoc loc_of(const SourceManager& sources, uint32_t file, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return sources.loc_at(file, static_cast<uint32_t>(mark.line + 1), static_cast<uint32_t>(mark.column + 1));
}

}  // namespace

TEST_CASE("paddle overlay: keys and patterns are well formed") {
  REQUIRE(fs::exists(kOverlay));
  REQUIRE(fs::exists(kStaticOverlay));
  const std::set<std::string> keys = {"op", "compute", "reduce", "pattern", "row_pattern"};
  const std::set<std::string> patterns = {"elementwise", "broadcast", "injective", "reduction", "out_fusible", "opaque"};
  const std::set<std::string> row_patterns = {"softmax", "layer_norm", "rms_norm"};
  std::set<std::string> seen;
  for (const OverlayOp& op : load_overlays()) {
    INFO("op " << op.name);
    CHECK(seen.insert(op.name).second);  // no op twice, in either file
    for (const auto& kv : op.node) CHECK(keys.count(kv.first.as<std::string>()) == 1);
    REQUIRE(op.node["pattern"]);
    const std::string pattern = op.node["pattern"].as<std::string>();
    CHECK(patterns.count(pattern) == 1);
    const int kinds = (op.node["compute"] ? 1 : 0) + (op.node["reduce"] ? 1 : 0) + (op.node["row_pattern"] ? 1 : 0);
    CHECK(kinds == 1);
    if (op.node["compute"]) CHECK(pattern == "elementwise");
    if (op.node["reduce"] || op.node["row_pattern"]) CHECK(pattern == "reduction");
    if (op.node["row_pattern"]) CHECK(row_patterns.count(op.node["row_pattern"].as<std::string>()) == 1);
  }
  // The families the fusion work relies on are all there.
  for (const char* name : {"relu", "gelu", "silu", "sigmoid", "add", "multiply", "scale", "cast", "clip", "where",
                           "full_like", "sum", "mean", "max", "min", "prod", "softmax", "layer_norm", "rms_norm"}) {
    CHECK(seen.count(name) == 1);
  }
}

TEST_CASE("paddle overlay: loads over refdata ops.yaml and every expression type-checks") {
  if (!refdata_present()) return;
  Loaded loaded;
  Harness& h = loaded.h;
  INFO("opdef loader output:\n" << loaded.loader_output);
  CHECK(loaded.loader_output.empty());  // no error and no warning
  size_t checked = 0;
  for (const OverlayOp& op : load_overlays()) {
    INFO("op " << op.name << (op.in_static_file ? " (static overlay)" : ""));
    // Each op is in the right file: ops.yaml's ops in the main overlay, the others in the static one.
    CHECK((loaded.library.find(op.name) != nullptr) != op.in_static_file);
    const std::optional<std::vector<Arg>> args = loaded.args(op);
    REQUIRE(args);
    const opdef::Op* def = op.in_static_file ? nullptr : loaded.library.find(op.name);
    if (def) {  // the loader attached the extensions to ops.yaml's op
      CHECK(def->pattern.has_value());
      CHECK(def->compute.has_value() == static_cast<bool>(op.node["compute"]));
      CHECK(def->reduce.has_value() == static_cast<bool>(op.node["reduce"]));
    }
    for (ST dtype : {ST::kFloat32, ST::kFloat64, ST::kFloat16}) {
      INFO("inputs of dtype " << name_of(dtype));
      const ExprContext ctx = context_for(op.name, *args, dtype);
      if (op.node["compute"]) {
        std::optional<Expression> parsed;
        if (def) {
          parsed = parse_expression(def->compute->text, def->compute->loc, &h.sources, h.diags);
        } else {
          const YAML::Node compute = op.node["compute"];
          parsed = parse_expression(compute.as<std::string>(), loc_of(h.sources, loaded.static_file, compute),
                                    &h.sources, h.diags);
        }
        std::optional<Expression> typed;
        if (parsed) typed = check_expression(*parsed, ctx, h.diags);
        INFO(h.out.str());
        REQUIRE(typed);
        ++checked;
      }
      if (op.node["reduce"]) {
        RawReduce raw;
        if (def) {
          raw.loc = def->reduce->loc;
          raw.init = RawString{def->reduce->init.text, def->reduce->init.loc};
          raw.combine = RawString{def->reduce->combine.text, def->reduce->combine.loc};
          if (def->reduce->finalize) raw.finalize = RawString{def->reduce->finalize->text, def->reduce->finalize->loc};
          raw.axis = RawString{def->reduce->axis.name, def->reduce->axis.loc};
        } else {
          const YAML::Node reduce = op.node["reduce"];
          raw.loc = loc_of(h.sources, loaded.static_file, reduce);
          auto part = [&](const char* key) -> std::optional<RawString> {
            if (!reduce[key]) return std::nullopt;
            return RawString{reduce[key].as<std::string>(), loc_of(h.sources, loaded.static_file, reduce[key])};
          };
          raw.init = part("init");
          raw.combine = part("combine");
          raw.finalize = part("finalize");
          raw.axis = part("axis");
        }
        const std::optional<Reduction> parsed = parse_reduction(raw, &h.sources, h.diags);
        std::optional<TypedReduction> typed;
        if (parsed) typed = check_reduction(*parsed, ctx, h.diags);
        INFO(h.out.str());
        REQUIRE(typed);
        CHECK(typed->input == "x");
        ++checked;
      }
    }
  }
  CHECK(h.out.str().empty());
  CHECK(checked >= 3 * 80);
}

TEST_CASE("paddle overlay: the formulas give Paddle's values") {
  if (!refdata_present()) return;
  Loaded loaded;
  std::map<std::string, OverlayOp> overlay;
  for (const OverlayOp& op : load_overlays()) overlay[op.name] = op;

  struct Case {
    const char* op;
    std::map<std::string, Value, std::less<>> inputs;
    std::map<std::string, Value, std::less<>> attributes;
    double expected;
    double tolerance;
  };
  const double nan = std::nan("");
  auto f = [](double v) { return Value::of_float(v, ST::kFloat64); };
  const std::vector<Case> cases = {
      {"relu", {{"x", f(-1.5)}}, {}, 0.0, 0},
      {"relu", {{"x", f(2.5)}}, {}, 2.5, 0},
      {"relu6", {{"x", f(7)}}, {}, 6.0, 0},
      {"sigmoid", {{"x", f(0)}}, {}, 0.5, 0},
      {"silu", {{"x", f(1)}}, {}, 0.7310585786300049, 1e-15},
      {"gelu", {{"x", f(1)}}, {{"approximate", Value::of_bool(false)}}, 0.841344746068543, 1e-15},
      {"gelu", {{"x", f(1)}}, {{"approximate", Value::of_bool(true)}}, 0.8411919906082768, 1e-15},
      {"leaky_relu", {{"x", f(-2)}}, {{"negative_slope", f(0.5)}}, -1.0, 0},
      {"elu", {{"x", f(-1)}}, {{"alpha", f(1)}}, std::expm1(-1.0), 1e-15},
      {"selu", {{"x", f(-1)}}, {{"scale", f(1.0507009873554805)}, {"alpha", f(1.6732632423543772)}}, -1.1113307378125625, 1e-15},
      {"softplus", {{"x", f(1)}}, {{"beta", f(1)}, {"threshold", f(20)}}, std::log1p(std::exp(1.0)), 1e-15},
      {"softplus", {{"x", f(30)}}, {{"beta", f(1)}, {"threshold", f(20)}}, 30.0, 0},
      {"hardswish", {{"x", f(1)}}, {}, 4.0 / 6.0, 1e-15},
      {"hardsigmoid", {{"x", f(10)}}, {{"slope", f(0.2)}, {"offset", f(0.5)}}, 1.0, 0},
      {"logsigmoid", {{"x", f(-50)}}, {}, -50.0, 1e-12},
      {"mish", {{"x", f(1)}}, {{"lambda", f(20)}}, 0.8650983882673103, 1e-15},
      {"softshrink", {{"x", f(-2)}}, {{"threshold", f(0.5)}}, -1.5, 0},
      {"hardshrink", {{"x", f(0.2)}}, {{"threshold", f(0.5)}}, 0.0, 0},
      {"sign", {{"x", f(-3)}}, {}, -1.0, 0},
      {"reciprocal", {{"x", f(4)}}, {}, 0.25, 0},
      {"remainder", {{"x", f(-7)}, {"y", f(3)}}, {}, 2.0, 0},
      {"remainder", {{"x", f(7)}, {"y", f(-3)}}, {}, -2.0, 0},
      {"remainder", {{"x", Value::of_int(-7, ST::kInt32)}, {"y", Value::of_int(3, ST::kInt32)}}, {}, 2.0, 0},
      {"fmax", {{"x", f(nan)}, {"y", f(1)}}, {}, 1.0, 0},
      {"fmin", {{"x", f(2)}, {"y", f(nan)}}, {}, 2.0, 0},
      {"scale", {{"x", f(2)}}, {{"scale", f(3)}, {"bias", f(1)}, {"bias_after_scale", Value::of_bool(true)}}, 7.0, 0},
      {"scale", {{"x", f(2)}}, {{"scale", f(3)}, {"bias", f(1)}, {"bias_after_scale", Value::of_bool(false)}}, 9.0, 0},
      {"clip", {{"x", f(5)}}, {{"min", f(-1)}, {"max", f(1)}}, 1.0, 0},
      {"where", {{"condition", Value::of_bool(false)}, {"x", f(1)}, {"y", f(2)}}, {}, 2.0, 0},
      {"full_like", {{"x", f(9)}}, {{"value", f(0.5)}}, 0.5, 0},
      {"logical_xor", {{"x", f(1)}, {"y", f(0)}}, {}, 1.0, 0},
      {"greater_equal", {{"x", f(1)}, {"y", f(1)}}, {}, 1.0, 0},
  };
  for (const Case& c : cases) {
    INFO("op " << c.op);
    REQUIRE(overlay.count(c.op) == 1);
    const std::optional<std::vector<Arg>> args = loaded.args(overlay[c.op]);
    REQUIRE(args);
    // Inputs take the dtype of their test value (float64, or int32 for the integer remainder).
    const ST dtype = c.inputs.count("x") ? c.inputs.at("x").type : ST::kFloat64;
    const ExprContext ctx = context_for(c.op, *args, dtype, /*exact_floats=*/true);
    Harness h;
    std::optional<Expression> typed = h.typed(overlay[c.op].node["compute"].as<std::string>(), ctx);
    INFO(h.out.str());
    REQUIRE(typed);
    std::string error;
    const std::optional<Value> v = evaluate(*typed->root, EvalBindings::from_maps(c.inputs, c.attributes), &error);
    INFO(error);
    REQUIRE(v);
    CHECK(std::abs(v->as_double() - c.expected) <= c.tolerance);
  }
}
