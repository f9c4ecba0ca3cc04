// Every real Paddle program in refdata/paddle/pir_json and pir_text loads, and what it loads is what the file
// says: checked against facts read off the files, across formats (the same program as JSON and as typed
// text; the same program in the 2024 and 2025 printer eras), and by dump -> read -> dump round trips.
// Skipped, with a message, when <source root>/../shared/refdata is absent.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "program/pir_text_reader.h"
#include "test_util.h"

using namespace kforge;
using namespace kforge::ir;
using kforge::ir::test::slurp;

namespace {

bool skip_without_refdata(const std::string& dir) {
  if (!dir.empty()) return false;
  WARN("SKIPPED: " KFORGE_SOURCE_ROOT "/../shared/refdata/paddle is absent; the refdata tests need it");
  return true;
}

Program load(const std::string& dir, const std::string& name) {
  test::ReadResult r = test::read_buffer(dir + "/" + name, slurp(dir + "/" + name));
  INFO(name << "\n" << r.diagnostics);
  REQUIRE(r.program);
  CHECK(r.diagnostics.empty());
  CHECK(r.program->check_structure().empty());
  return std::move(*r.program);
}

std::vector<std::string> op_names(const Program& p) {
  std::vector<std::string> out;
  for (OpId id : p.ops_in_order()) out.push_back(p.op(id).full_name());
  return out;
}

// Reads `text` (a dump) back as PIR text and checks that it dumps the same.
void check_round_trip(const std::string& what, const std::string& text) {
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  std::optional<Program> again = read_pir_text(sources, sources.add_buffer(what + ".dump", text), diags);
  INFO(what << "\n" << out.str());
  REQUIRE(again);
  CHECK(again->dump() == text);
  CHECK(again->check_structure().empty());
}

}  // namespace

TEST_CASE("refdata: every PIR JSON file loads and round-trips") {
  const std::string dir = test::refdata_dir("pir_json");
  if (skip_without_refdata(dir)) return;
  const std::set<std::string> known = {"docs_pir_save_load_example_v1.json", "paddle2onnx_ifelse_model.json",
                                       "paddle2onnx_thresholded_relu_model.json"};
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    INFO(name);
    CHECK(known.count(name) == 1);  // a new refdata file deserves its own checks below
    const Program p = load(dir, name);
    CHECK(p.format == SourceFormat::kPirJson);
    CHECK(p.pir_version == 1);
    CHECK(p.trainable);
    check_round_trip(name, p.dump());
  }
}

TEST_CASE("refdata: the fc+relu JSON program") {
  const std::string dir = test::refdata_dir("pir_json");
  if (skip_without_refdata(dir)) return;
  const Program p = load(dir, "docs_pir_save_load_example_v1.json");
  CHECK(op_names(p) == std::vector<std::string>{"builtin.parameter", "builtin.parameter", "pd_op.data", "pd_op.matmul",
                                                "pd_op.add", "pd_op.relu", "pd_op.full", "pd_op.scale", "pd_op.fetch"});
  std::vector<std::string> params;
  for (OpId id : p.parameters()) params.push_back(p.value(p.op(id).results[0]).name);
  CHECK(params == std::vector<std::string>{"fc_0.b_0", "fc_0.w_0"});
  REQUIRE(p.feeds().size() == 1);
  const Op& data = p.op(p.feeds()[0]);
  CHECK(p.value(data.results[0]).name == "A");
  CHECK(p.type_of(data.results[0]) == Type::tensor(DataType::kFloat32, {-1, 30}));
  CHECK(*data.attr("shape") == Attribute::int_array({-1, 30}));
  CHECK(*data.attr("place") == Attribute::place_attr(Place{}));
  REQUIRE(p.fetches().size() == 1);
  CHECK(p.value(p.op(p.fetches()[0]).results[0]).name == "fetch_name_0");
  const Op& full = p.op(p.find_ops("pd_op.full").at(0));
  CHECK(*full.attr("value") == Attribute::float32(1));
  CHECK(*full.attr("place") == Attribute::place_attr(Place{AllocationType::kCpu, 0, ""}));
}

TEST_CASE("refdata: the if/else JSON program has its regions") {
  const std::string dir = test::refdata_dir("pir_json");
  if (skip_without_refdata(dir)) return;
  const Program p = load(dir, "paddle2onnx_ifelse_model.json");
  CHECK(p.ops_in_order().size() == 29);
  const std::vector<OpId> ifs = p.find_ops("pd_op.if");
  REQUIRE(ifs.size() == 1);
  const Op& if_op = p.op(ifs[0]);
  REQUIRE(if_op.regions.size() == 2);
  CHECK(if_op.results.size() == 4);
  const Block& then_block = p.block(if_op.regions[0].blocks.at(0));
  const Block& else_block = p.block(if_op.regions[1].blocks.at(0));
  CHECK(then_block.ops.size() == 9);
  CHECK(else_block.ops.size() == 9);
  const Op& yield = p.op(then_block.ops.back());
  CHECK(yield.full_name() == "cf.yield");
  CHECK(yield.operands.size() == 4);
  // The branches use the program's inputs, defined outside them.
  CHECK(p.op(then_block.ops[1]).operands[0] == p.op(p.feeds()[0]).results[0]);
  CHECK(*if_op.attr("stop_gradient") ==
        Attribute::array({Attribute::boolean(true), Attribute::boolean(true), Attribute::boolean(false),
                          Attribute::boolean(false)}));
  CHECK(p.fetches().size() == 2);
}

TEST_CASE("refdata: thresholded_relu keeps f32 and f64 attributes apart") {
  const std::string dir = test::refdata_dir("pir_json");
  if (skip_without_refdata(dir)) return;
  const Program p = load(dir, "paddle2onnx_thresholded_relu_model.json");
  const Op& relu = p.op(p.find_ops("pd_op.thresholded_relu").at(0));
  CHECK(*relu.attr("threshold") == Attribute::float32(1));
  CHECK(*relu.attr("value") == Attribute::float32(0));
  CHECK(*p.op(p.find_ops("pd_op.full").at(0)).attr("value") == Attribute::float64(1));
  CHECK(*p.op(p.fetches().at(0)).attr("col") == Attribute::int32(0));
  CHECK(p.type_of(p.op(p.feeds().at(0)).results[0]) == Type::tensor(DataType::kFloat32, {}));
}

TEST_CASE("refdata: every PIR text program loads and round-trips") {
  const std::string dir = test::refdata_dir("pir_text");
  if (skip_without_refdata(dir)) return;
  const std::set<std::string> programs = {"SYNTH_2025fmt_auto_layout_program.txt", "auto_layout_program.txt",
                                          "docs_fc_relu_program_typed2024.txt", "docs_if_op_program_draft2024.txt",
                                          "fuse_allreduce_split_to_reducescatter_1.txt"};
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    INFO(name);
    if (name == "TestParserText.txt" || name == "docs_paddle_ir_cn_add_relu_op_and_kernel.txt") continue;  // below
    CHECK(programs.count(name) == 1);
    const Program p = load(dir, name);
    CHECK(p.format == SourceFormat::kPirText);
    check_round_trip(name, p.dump());
  }
}

TEST_CASE("refdata: the same program as JSON and as typed text reads the same") {
  const std::string json_dir = test::refdata_dir("pir_json");
  const std::string text_dir = test::refdata_dir("pir_text");
  if (skip_without_refdata(json_dir) || skip_without_refdata(text_dir)) return;
  const Program from_json = load(json_dir, "docs_pir_save_load_example_v1.json");
  const Program from_text = load(text_dir, "docs_fc_relu_program_typed2024.txt");
  const std::vector<OpId> a = from_json.ops_in_order(), b = from_text.ops_in_order();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const Op& x = from_json.op(a[i]);
    const Op& y = from_text.op(b[i]);
    INFO(x.full_name());
    CHECK(x.full_name() == y.full_name());
    REQUIRE(x.results.size() == y.results.size());
    for (size_t r = 0; r < x.results.size(); ++r) CHECK(from_json.type_of(x.results[r]) == from_text.type_of(y.results[r]));
    REQUIRE(x.operands.size() == y.operands.size());
    for (size_t o = 0; o < x.operands.size(); ++o) {
      CHECK(from_json.defining_op(x.operands[o]).index == a[0].index + (from_text.defining_op(y.operands[o]).index - b[0].index));
    }
    REQUIRE(x.attributes.size() == y.attributes.size());
    for (const NamedAttribute& attr : x.attributes) {
      INFO(attr.name);
      const Attribute* other = y.attr(attr.name);
      REQUIRE(other);
      if (x.is("pd_op", "full") && attr.name == "value") {
        // The two files differ here: the JSON stores a float, the printed program a double.
        CHECK(attr.value == Attribute::float32(1));
        CHECK(*other == Attribute::float64(1));
      } else {
        CHECK(attr.value == *other);
      }
    }
  }
}

TEST_CASE("refdata: the 2025 untyped program reads like its 2024 typed original") {
  const std::string dir = test::refdata_dir("pir_text");
  if (skip_without_refdata(dir)) return;
  const Program typed = load(dir, "auto_layout_program.txt");
  const Program untyped = load(dir, "SYNTH_2025fmt_auto_layout_program.txt");
  const std::vector<OpId> a = typed.ops_in_order(), b = untyped.ops_in_order();
  REQUIRE(a.size() == 14);
  REQUIRE(a.size() == b.size());
  size_t guessed = 0;
  // Equal, except where the untyped text cannot say the kind: then the value is the same.
  std::function<void(const Attribute&, const Attribute&)> compatible = [&](const Attribute& t, const Attribute& u) {
    if (!u.kind_guessed) {
      CHECK(t == u);
      return;
    }
    ++guessed;
    if (t.is_integer()) {
      CHECK(u.kind == AttrKind::kInt64);
      CHECK(u.int_value == t.int_value);
    } else if (t.is_floating()) {
      CHECK(u.kind == AttrKind::kDouble);
      CHECK(static_cast<float>(u.float_value) == static_cast<float>(t.float_value));
    } else {
      REQUIRE(t.kind == AttrKind::kArray);
      REQUIRE(u.elements.size() == t.elements.size());
      for (size_t i = 0; i < t.elements.size(); ++i) compatible(t.elements[i], u.elements[i]);
    }
  };
  for (size_t i = 0; i < a.size(); ++i) {
    const Op& t = typed.op(a[i]);
    const Op& u = untyped.op(b[i]);
    INFO(t.full_name());
    CHECK(t.full_name() == u.full_name());
    for (size_t r = 0; r < t.results.size(); ++r) CHECK(typed.type_of(t.results[r]) == untyped.type_of(u.results[r]));
    REQUIRE(t.attributes.size() == u.attributes.size());
    for (const NamedAttribute& attr : t.attributes) {
      INFO(attr.name);
      REQUIRE(u.attr(attr.name));
      compatible(attr.value, *u.attr(attr.name));
    }
  }
  CHECK(guessed > 10);
  const Op& bn = untyped.op(untyped.find_ops("pd_op.batch_norm_").at(0));
  CHECK(bn.results.size() == 6);
  CHECK(bn.attr("epsilon")->kind_guessed);
  CHECK(std::abs(bn.attr("epsilon")->float_value - 1e-05) < 1e-12);
}

TEST_CASE("refdata: the program before and after lowering to the kernel dialect") {
  const std::string dir = test::refdata_dir("pir_text");
  if (skip_without_refdata(dir)) return;
  const std::string path = dir + "/docs_paddle_ir_cn_add_relu_op_and_kernel.txt";
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  std::vector<Program> programs = read_pir_text_programs(sources, sources.add_buffer(path, slurp(path)), diags);
  INFO(out.str());
  REQUIRE(programs.size() == 2);
  CHECK(out.str().empty());
  const Program& ops = programs[0];
  const Program& kernels = programs[1];
  CHECK(op_names(ops) == std::vector<std::string>{"pd_op.data", "pd_op.data", "pd_op.add", "pd_op.relu",
                                                  "builtin.shadow_output"});
  CHECK(op_names(kernels) == std::vector<std::string>{"pd_kernel.phi_kernel", "pd_kernel.phi_kernel",
                                                      "pd_kernel.phi_kernel", "pd_kernel.phi_kernel",
                                                      "pd_kernel.phi_kernel", "pd_kernel.phi_kernel",
                                                      "builtin.shadow_output"});
  std::vector<std::string> kernel_names;
  for (OpId id : kernels.find_ops("pd_kernel.phi_kernel")) kernel_names.push_back(kernels.op(id).string_attr("kernel_name"));
  CHECK(kernel_names == std::vector<std::string>{"data", "shadow_feed", "data", "shadow_feed", "add", "relu"});
  const Op& add = kernels.op(kernels.find_ops("pd_kernel.phi_kernel")[4]);
  CHECK(add.string_attr("op_name") == "pd_op.add");
  CHECK(add.attr("kernel_key")->text == "<backend:GPU|layout:NCHW|dtype:float32>");
  CHECK(to_string(kernels.type_of(add.results[0])) == "gpu_tensor<-1x-1xf32>");
  for (const Program& p : programs) {
    CHECK(p.check_structure().empty());
    check_round_trip(p.name, p.dump());
  }
}

TEST_CASE("refdata: every CHECK section of Paddle's TestParserText.txt") {
  const std::string dir = test::refdata_dir("pir_text");
  if (skip_without_refdata(dir)) return;
  // The file is Paddle's parser test: "//CHECK attribute|type|program" ... "//END" sections.
  const std::string text = slurp(dir + "/TestParserText.txt");
  std::vector<std::pair<std::string, std::string>> sections;
  size_t pos = 0;
  while ((pos = text.find("//CHECK ", pos)) != std::string::npos) {
    const size_t kind_end = text.find('\n', pos);
    const size_t end = text.find("//END", kind_end);
    REQUIRE(end != std::string::npos);
    sections.push_back({text.substr(pos + 8, kind_end - pos - 8), text.substr(kind_end + 1, end - kind_end - 1)});
    pos = end;
  }
  REQUIRE(sections.size() == 17);
  std::vector<Attribute> attributes;
  std::vector<Type> types;
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  for (size_t i = 0; i < sections.size(); ++i) {
    const auto& [kind, body] = sections[i];
    INFO("section " << i << " (" << kind << "):\n" << body << "\n" << out.str());
    const uint32_t file = sources.add_buffer("TestParserText.txt#" + std::to_string(i), body);
    if (kind == "attribute") {
      std::optional<Attribute> a = read_pir_attribute(sources, file, diags);
      REQUIRE(a);
      CHECK_FALSE(a->kind_guessed);  // the typed era says every kind
      attributes.push_back(*a);
    } else if (kind == "type") {
      std::optional<Type> t = read_pir_type(sources, file, diags);
      REQUIRE(t);
      types.push_back(*t);
    } else {
      REQUIRE(kind == "program");
      std::optional<Program> p = read_pir_text(sources, file, diags);
      REQUIRE(p);
      CHECK(op_names(*p) == std::vector<std::string>{"builtin.parameter", "pd_op.feed", "pd_op.conv2d"});
      const Op& conv = p->op(p->top_level_ops()[2]);
      CHECK(*conv.attr("strides") == Attribute::array({Attribute::int32(2), Attribute::int32(2)}));
      CHECK(p->type_of(conv.results[0]) == Type::tensor(DataType::kFloat32, {-1, 64, 112, 112}));
    }
  }
  CHECK(out.str().empty());
  REQUIRE(attributes.size() == 9);
  REQUIRE(types.size() == 7);

  CHECK(attributes[0].elements.size() == 20);  // a Python call stack, with \" inside
  CHECK(attributes[0].elements[0].text == "  File \"train.py\", line 225, in <module>");
  std::vector<std::string> dtypes;
  for (const Attribute& a : attributes[1].elements) dtypes.push_back(std::string(dtype_name(a.dtype)));
  CHECK(dtypes == std::vector<std::string>{"bool", "float32", "float64", "complex64", "complex128", "Undefined",
                                           "Undefined", "Undefined", "Undefined", "bfloat16", "uint8", "uint32",
                                           "int8", "uint16", "int16", "int32", "uint64", "int64"});
  std::vector<std::string> places;
  for (const Attribute& a : attributes[2].elements) places.push_back(place_to_string(a.place));
  CHECK(places == std::vector<std::string>{"Place(gpu:0)", "Place(gpu_pinned)", "Place(gpu_pinned)", "Place(xpu:0)",
                                           "Place(ipu:0)", "Place(:0)", "Place(cpu)"});
  std::vector<std::string> layouts;
  for (const Attribute& a : attributes[3].elements) layouts.push_back(std::string(layout_name(a.layout)));
  CHECK(layouts == std::vector<std::string>{"NHWC", "STRIDED", "NCHW", "Undefined(AnyLayout)", "ONEDNN",
                                            "SPARSE_COO", "SPARSE_CSR", "NDHWC", "NCDHW", "PSTRING_UNION"});
  CHECK(attributes[4] == Attribute::array({Attribute::float64(1), Attribute::int64(0), Attribute::string("1")}));
  CHECK(attributes[5].elements.at(1).text == "\\\"");
  CHECK(attributes[6] == Attribute::array({}));
  CHECK(attributes[7].elements.size() == 2);
  CHECK(std::isinf(attributes[7].elements[1].float_value));
  CHECK(attributes[7].elements[1].float_value < 0);
  CHECK(attributes[8] == Attribute::array({Attribute::float32(-1), Attribute::float32(-1.00001f),
                                           Attribute::float64(-1.00001), Attribute::float32(-1.1e+30f),
                                           Attribute::float64(1e+200), Attribute::float32(0.123456f),
                                           Attribute::float64(0.123456)}));
  // Printed again, every value reads back to itself.
  CHECK(to_string(attributes[8]) ==
        "[(Float)-1,(Float)-1.00001,(Double)-1.00001,(Float)-1.1e+30,(Double)1e+200,(Float)0.123456,(Double)0.123456]");

  CHECK(types[0] == Type::element(DataType::kFloat32));
  CHECK(types[1] == Type::tensor(DataType::kFloat32, {256}));
  CHECK(to_string(types[2]) == "vec[bf16,f64,b,i8,u8,i16,c64,c128]");
  CHECK(types[3] == Type::element(DataType::kFloat16));
  CHECK(to_string(types[4]) == "vec[vec[],vec[]]");
  CHECK(to_string(types[6]) == "vec[vec[i8,bf16],vec[],vec[u8]]");
}
