// The kforge program YAML reader, and how read_program() picks a reader.
#include <cmath>

#include "test_util.h"

using namespace kforge;
using namespace kforge::ir;
using kforge::ir::test::read_buffer;
using kforge::ir::test::read_errors;
using kforge::ir::test::guessed;

namespace {

constexpr const char* kMlp = R"(program: mlp
inputs:  [{name: x, dtype: float32, shape: [-1, 64]}]
params:  [{name: w0, dtype: float32, shape: [64, 128]}]
ops:
  - {op: matmul, in: [x, w0], out: [h0], attrs: {transpose_x: false, transpose_y: false}}
  - {op: relu, in: [h0], out: [y]}
outputs: [y]
)";

Program read_yaml_ok(const std::string& text) {
  test::ReadResult r = read_buffer("p.yaml", text);
  INFO(r.diagnostics);
  REQUIRE(r.program);
  CHECK(r.diagnostics.empty());
  CHECK(r.program->check_structure().empty());
  return std::move(*r.program);
}

Attribute one_attr(const std::string& value) {
  Program p = read_yaml_ok("program: t\nops:\n  - {op: foo, attrs: {a: " + value + "}}\n");
  const Op& op = p.op(p.top_level_ops().at(0));
  REQUIRE(op.attributes.size() == 1);
  return op.attributes[0].value;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

TEST_CASE("yaml: the MLP example reads into the model") {
  Program p = read_yaml_ok(kMlp);
  CHECK(p.name == "mlp");
  CHECK(p.format == SourceFormat::kProgramYaml);
  const std::vector<OpId> ops = p.top_level_ops();
  REQUIRE(ops.size() == 5);
  std::vector<std::string> names;
  for (OpId id : ops) names.push_back(p.op(id).full_name());
  CHECK(names == std::vector<std::string>{"pd_op.data", "builtin.parameter", "pd_op.matmul", "pd_op.relu", "pd_op.fetch"});

  const Op& data = p.op(ops[0]);
  CHECK(data.string_attr("name") == "x");
  CHECK(*data.attr("shape") == Attribute::int_array({-1, 64}));
  CHECK(*data.attr("dtype") == Attribute::data_type(DataType::kFloat32));
  CHECK(data.attr("place")->kind == AttrKind::kPlace);
  CHECK(p.type_of(data.results[0]) == Type::tensor(DataType::kFloat32, {-1, 64}));
  CHECK(p.op(ops[1]).string_attr("parameter_name") == "w0");

  const Op& mm = p.op(ops[2]);
  CHECK(mm.dialect == "pd_op");
  CHECK(mm.name == "matmul");
  CHECK(mm.operands == std::vector<ValueId>{data.results[0], p.op(ops[1]).results[0]});
  CHECK(*mm.attr("transpose_x") == Attribute::boolean(false));
  CHECK(p.value(mm.results[0]).name == "h0");
  CHECK(p.type_of(mm.results[0]).is_none());  // known after shape inference

  const Op& fetch = p.op(ops[4]);
  CHECK(fetch.operands[0] == p.op(ops[3]).results[0]);
  CHECK(fetch.string_attr("name") == "y");
  CHECK(*fetch.attr("col") == Attribute::int32(0));
  CHECK(p.feeds() == std::vector<OpId>{ops[0]});
  CHECK(p.parameters() == std::vector<OpId>{ops[1]});
  CHECK(p.fetches() == std::vector<OpId>{ops[4]});
  CHECK(p.uses(mm.results[0]).size() == 1);
}

TEST_CASE("yaml: ops, values and attributes carry their locations") {
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  const uint32_t f = sources.add_buffer("p.yaml", kMlp);
  std::optional<Program> p = read_program(sources, f, diags);
  REQUIRE(p);
  const Op& mm = p->op(p->top_level_ops()[2]);
  auto lc = [&](SourceLoc l) { return std::to_string(sources.line_col(l).line) + ":" + std::to_string(sources.line_col(l).col); };
  CHECK(lc(mm.loc) == "5:5");
  CHECK(lc(mm.name_loc) == "5:10");
  CHECK(lc(mm.operand_locs.at(1)) == "5:26");
  CHECK(lc(mm.named_attr("transpose_y")->name_loc) == "5:70");
  CHECK(lc(p->value(mm.results[0]).loc) == "5:37");
}

TEST_CASE("yaml: attribute kinds, guessed and exact") {
  CHECK(one_attr("true") == Attribute::boolean(true));
  CHECK(one_attr("3") == guessed(Attribute::int64(3)));
  CHECK(one_attr("-0.5") == guessed(Attribute::float64(-0.5)));
  CHECK(one_attr("1e-5") == guessed(Attribute::float64(1e-5)));
  CHECK(std::isinf(one_attr("-.inf").float_value));
  CHECK(one_attr("NCHW") == guessed(Attribute::string("NCHW")));  // may be a layout: the verifier decides
  CHECK(one_attr("\"NCHW\"") == Attribute::string("NCHW"));      // quoted: exactly a string
  CHECK(one_attr("[1, 2]") == guessed(Attribute::array({guessed(Attribute::int64(1)), guessed(Attribute::int64(2))})));
  CHECK(one_attr("[]") == Attribute::array({}));
  CHECK(one_attr("{i32: 3}") == Attribute::int32(3));
  CHECK(one_attr("{i64: -3}") == Attribute::int64(-3));
  CHECK(one_attr("{index: 1}") == Attribute::index(1));
  CHECK(one_attr("{f32: 0.1}") == Attribute::float32(0.1f));
  CHECK(one_attr("{f64: 2}") == Attribute::float64(2));
  CHECK(one_attr("{bool: false}") == Attribute::boolean(false));
  CHECK(one_attr("{str: 3}") == Attribute::string("3"));
  CHECK(one_attr("{dtype: int64}") == Attribute::data_type(DataType::kInt64));
  CHECK(one_attr("{layout: NHWC}") == Attribute::data_layout(DataLayout::kNHWC));
  CHECK(one_attr("{place: cpu}") == Attribute::place_attr(Place{AllocationType::kCpu, 0, ""}));
  CHECK(one_attr("{place: \"gpu:1\"}") == Attribute::place_attr(Place{AllocationType::kGpu, 1, ""}));
  CHECK(one_attr("{int_array: [2, -1]}") == Attribute::int_array({2, -1}));
  CHECK(one_attr("{scalar: [float32, 1.5]}") == Attribute::scalar_float(DataType::kFloat32, 1.5));
  CHECK(one_attr("{scalar: [int32, 4]}") == Attribute::scalar_int(DataType::kInt32, 4));
  CHECK(one_attr("{scalar: [bool, true]}") == Attribute::scalar_bool(true));
  CHECK(one_attr("[{i32: 1}, {i32: 2}]") == Attribute::array({Attribute::int32(1), Attribute::int32(2)}));
}

TEST_CASE("yaml: dialect-qualified names, null operands and declared result types") {
  Program p = read_yaml_ok(R"(program: t
inputs: [{name: a, dtype: float32, shape: [2]}, {name: b, dtype: float32, shape: [2]}]
ops:
  - {op: builtin.combine, in: [a, b], out: [ab]}
  - op: pd_op.concat
    in: [ab, ~]
    out: [{name: c, dtype: float32, shape: [4]}]
    attrs: {axis: {scalar: [int32, 0]}}
outputs: [c]
)");
  const std::vector<OpId> ops = p.top_level_ops();
  CHECK(p.op(ops[2]).full_name() == "builtin.combine");
  const Op& concat = p.op(ops[3]);
  CHECK(concat.full_name() == "pd_op.concat");
  REQUIRE(concat.operands.size() == 2);
  CHECK_FALSE(concat.operands[1].valid());
  CHECK(p.type_of(concat.results[0]) == Type::tensor(DataType::kFloat32, {4}));
  CHECK(p.type_of(p.op(ops[4]).results[0]) == Type::tensor(DataType::kFloat32, {4}));  // the fetch's type
}

TEST_CASE("yaml: scalars resolve by the YAML 1.2 core schema, as template data does (support/yaml_scalar.h)") {
  // 0o / 0x ints were strings here before (and ints in template data); both readers now share one resolver.
  CHECK(one_attr("0x1F") == guessed(Attribute::int64(31)));
  CHECK(one_attr("0o17") == guessed(Attribute::int64(15)));
  CHECK(one_attr("{i32: 0x10}") == Attribute::int32(16));
  CHECK(one_attr("{f64: 0x10}") == Attribute::float64(16));
  CHECK(one_attr("{int_array: [0o7, 0x7]}") == Attribute::int_array({7, 7}));
  CHECK(one_attr("0X1F") == guessed(Attribute::string("0X1F")));  // the core schema's prefixes are lower case
  CHECK(one_attr("-0x1F") == guessed(Attribute::string("-0x1F")));  // and unsigned
  CHECK(one_attr("\"0x1F\"") == Attribute::string("0x1F"));
  CHECK(one_attr("yes") == guessed(Attribute::string("yes")));  // YAML 1.1's booleans are strings
  CHECK(std::isnan(one_attr(".nan").float_value));
  CHECK(first_line(read_errors("p.yaml", "program: t\nops:\n  - {op: a, attrs: {k: {i64: 0x8000000000000000}}}\n")) ==
        "p.yaml:3:30: error: integer 0x8000000000000000 for an i64 attribute is out of range");
}

TEST_CASE("yaml errors") {
  CHECK(read_errors("p.yaml", "program: t\nops:\n  - {op: relu, in: [x], out: [y]}\n") ==
        "p.yaml:3:21: error: use of undefined value 'x'\n"
        "   - {op: relu, in: [x], out: [y]}\n"
        "                     ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.yaml", "program: t\ninputs: [{name: x0, dtype: float32, shape: [1]}]\nops:\n  - {op: relu, in: [x1], "
                              "out: [y]}\n") ==
        "p.yaml:4:21: error: use of undefined value 'x1'; did you mean 'x0'?\n"
        "   - {op: relu, in: [x1], out: [y]}\n"
        "                     ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.yaml", "program: t\nops:\n  - {op: relu, in: [], out: [y], atrs: {}}\n") ==
        "p.yaml:3:34: error: unknown key 'atrs' in an op; did you mean 'attrs'?\n"
        "   - {op: relu, in: [], out: [y], atrs: {}}\n"
        "                                  ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.yaml", "program: t\nops:\n  - {op: a, out: [y]}\n  - {op: b, out: [y]}\n") ==
        "p.yaml:4:19: error: value 'y' is defined twice\n"
        "   - {op: b, out: [y]}\n"
        "                   ^\n"
        "p.yaml:3:19: note: first defined here\n"
        "   - {op: a, out: [y]}\n"
        "                   ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.yaml", "program: t\ninputs: [{name: x, dtype: flaot32, shape: [1]}]\nops: []\n") ==
        "p.yaml:2:27: error: unknown data type 'flaot32'; did you mean 'float32'?\n"
        " inputs: [{name: x, dtype: flaot32, shape: [1]}]\n"
        "                           ^\n"
        "1 error generated.\n");
  CHECK(first_line(read_errors("p.yaml", "program: t\ninputs: [{name: x, dtype: float32, shape: [-2]}]\nops: []\n")) ==
        "p.yaml:2:44: error: invalid dim -2 (dims are >= 0, or -1 for a dynamic dim)");
  CHECK(first_line(read_errors("p.yaml", "program: t\ninputs: [{name: x, dtype: float32}]\nops: []\n")) ==
        "p.yaml:2:10: error: missing key 'shape' in an input");
  CHECK(first_line(read_errors("p.yaml", "ops: []\n")) == "p.yaml:1:1: error: missing key 'program' in a program YAML");
  CHECK(first_line(read_errors("p.yaml", "program: t\nops:\n  - {op: a, attrs: {k: {i33: 1}}}\n")) ==
        "p.yaml:3:25: error: unknown attribute kind 'i33'; did you mean 'i32'?");
  CHECK(first_line(read_errors("p.yaml", "program: t\nops:\n  - {op: a, attrs: {k: {i32: 3000000000}}}\n")) ==
        "p.yaml:3:30: error: value 3000000000 does not fit in an i32 attribute");
  CHECK(first_line(read_errors("p.yaml", "program: t\nops:\n  - {op: a, attrs: {k: {i32: 1, i64: 2}}}\n")) ==
        "p.yaml:3:24: error: expected a one-key mapping giving the attribute kind, such as {i32: 3}");
  CHECK(first_line(read_errors("p.yaml", "program: t\nops: {op: a}\n")) ==
        "p.yaml:2:6: error: expected a list for 'ops', got a mapping");
  CHECK(first_line(read_errors("p.yaml", "program: t\nops: [\n")) ==
        "p.yaml:3:1: error: invalid YAML: end of sequence flow not found");
  CHECK(first_line(read_errors("p.yaml", "- 1\n")) ==
        "p.yaml:1:1: error: expected a mapping with 'program' and 'ops' at the top of a program YAML, got a list");
  CHECK(first_line(read_errors("p.yaml", "program: t\nops: []\noutputs: [z]\n")) ==
        "p.yaml:3:11: error: use of undefined value 'z'");
}

TEST_CASE("read_program picks the reader from the extension, else from the content") {
  auto format_of = [](const std::string& path, const std::string& text) {
    SourceManager sources;
    return detect_program_format(sources, sources.add_buffer(path, text));
  };
  CHECK(format_of("m.json", "") == SourceFormat::kPirJson);
  CHECK(format_of("m.yaml", "") == SourceFormat::kProgramYaml);
  CHECK(format_of("m.yml", "") == SourceFormat::kProgramYaml);
  CHECK(format_of("m.txt", "") == SourceFormat::kPirText);
  CHECK(format_of("m.pir", "") == SourceFormat::kPirText);
  CHECK(format_of("model", " {\n \"base_code\": {}}") == SourceFormat::kPirJson);
  CHECK(format_of("model", "{\n    (%0) = \"pd_op.a\" () {} : () -> f32\n}") == SourceFormat::kPirText);
  CHECK(format_of("model", "program: x\n") == SourceFormat::kProgramYaml);

  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  CHECK_FALSE(read_program_file(sources, "/nonexistent/model.json", diags).has_value());
  CHECK(out.str() == "/nonexistent/model.json: error: cannot read the program: no such file or directory\n");
}
