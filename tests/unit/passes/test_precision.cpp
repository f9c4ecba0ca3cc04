// The compute precision plan (src/passes/precision.h): which parameters become 16-bit and which stay float32, the
// casts at the program's ends, the dtype attributes, the file dtypes the lowered parameters keep, and that the
// rewritten program still verifies, analyses and lowers.
#include <set>

#include "pass_test_util.h"
#include "passes/precision.h"

namespace kforge::passes {
namespace {

const char* const kNet = R"(program: net
inputs: [{name: x, dtype: float32, shape: [2, 3, 8, 8]}]
params:
  - {name: w, dtype: float32, shape: [4, 3, 3, 3]}
  - {name: m, dtype: float32, shape: [4]}
  - {name: v, dtype: float32, shape: [4]}
  - {name: fc, dtype: float32, shape: [256, 5]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: {strides: [1, 1], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, data_format: NCHW}}
  - {op: batch_norm, in: [c, m, v, m, v], out: [n, nm, nv, ns, nt, nr], attrs: {is_test: true, momentum: 0.9, epsilon: 1.0e-5, data_format: NCHW, use_global_stats: false, trainable_statistics: false}}
  - {op: full, out: [six], attrs: {shape: [1], value: 6.0, dtype: float32, place: cpu}}
  - {op: minimum, in: [n, six], out: [r]}
  - {op: flatten, in: [r], out: [f], attrs: {start_axis: 1, stop_axis: -1}}
  - {op: matmul, in: [f, fc], out: [y], attrs: {transpose_x: false, transpose_y: false}}
outputs: [y, nm]
)";

struct PrecisionPlanned {
  ir::Program program;
  PrecisionReport report;
  std::optional<LoweredProgram> lowered;
};

PrecisionPlanned plan(test::Env& env, ir::DataType to, std::set<std::string> float32_ops = {},
                      bool float32_interface = true) {
  PrecisionPlanned p{env.read("t.yaml", kNet), {}, std::nullopt};
  PipelineOptions options;
  options.precision = to;
  options.precision_float32_interface = float32_interface;
  options.precision_float32_ops = std::move(float32_ops);
  options.precision_report = &p.report;
  p.lowered = env.compile(p.program, options);
  INFO(env.printed());
  REQUIRE(p.lowered.has_value());
  REQUIRE(p.program.check_structure().empty());
  return p;
}

const LoweredValue& named(const LoweredProgram& p, const std::string& name) {
  for (const LoweredValue& v : p.values) {
    if (v.source_id == name || v.name == name) return v;
  }
  FAIL("no value " << name);
  return p.values.front();
}

const ProgramParameter& parameter(const LoweredProgram& p, const std::string& name) {
  for (const ProgramParameter& pa : p.parameters) {
    if (pa.name == name) return pa;
  }
  FAIL("no parameter " << name);
  return p.parameters.front();
}

}  // namespace

TEST_CASE("precision: float16 makes activations and parameters 16-bit, keeps batch norms' vectors and the interface") {
  test::Env env;
  PrecisionPlanned p = plan(env, ir::DataType::kFloat16);
  const LoweredProgram& l = *p.lowered;
  // The filter and the classifier are float16 on the device and float32 in the file; the batch norm's vectors stay.
  CHECK(l.values[parameter(l, "w").value].dtype == ir::DataType::kFloat16);
  CHECK(parameter(l, "w").stored_dtype == ir::DataType::kFloat32);
  CHECK(l.values[parameter(l, "fc").value].dtype == ir::DataType::kFloat16);
  CHECK(l.values[parameter(l, "m").value].dtype == ir::DataType::kFloat32);
  CHECK(parameter(l, "m").stored_dtype == ir::DataType::kUndefined);  // not converted
  CHECK(l.file_dtype(parameter(l, "m")) == ir::DataType::kFloat32);
  CHECK(p.report.stored == std::map<std::string, ir::DataType>{{"fc", ir::DataType::kFloat32},
                                                                {"w", ir::DataType::kFloat32}});
  CHECK(p.report.kept == std::vector<std::string>{"m", "v"});
  // Activations: float16 from the cast after x on; the batch norm's y follows x, its running mean stays float32.
  CHECK(named(l, "c").dtype == ir::DataType::kFloat16);
  CHECK(named(l, "n").dtype == ir::DataType::kFloat16);
  CHECK(named(l, "nm").dtype == ir::DataType::kFloat32);
  // full's dtype attribute follows, so the minimum meets one dtype.
  CHECK(p.report.attributes == 1);
  CHECK(named(l, "six").dtype == ir::DataType::kFloat16);
  CHECK(named(l, "r").dtype == ir::DataType::kFloat16);
  // The interface: x and both outputs are float32 (three casts: x in, y and nm out; nm's is a copy).
  CHECK(l.inputs[0].dtype == ir::DataType::kFloat32);
  REQUIRE(l.outputs.size() == 2);
  CHECK(l.values[l.outputs[0].value].dtype == ir::DataType::kFloat32);
  CHECK(l.values[l.outputs[1].value].dtype == ir::DataType::kFloat32);
  REQUIRE(p.report.casts.size() == 3);
  CHECK(p.report.casts[2].to == ir::DataType::kFloat16);
  CHECK(p.report.casts[2].what == "input 'x'");
  CHECK(p.report.casts[0].to == ir::DataType::kFloat32);
  CHECK(p.report.casts[0].what == "output 'y'");
  size_t casts = 0;
  for (const KernelCall& c : l.calls) casts += c.op == "cast";
  CHECK(casts == 3);
  const std::string dump = p.report.dump(p.program);
  CHECK(dump.find("precision: float16, 2 parameters converted, 2 kept float32, 3 casts, 1 dtype attributes\n") == 0);
  CHECK(dump.find("precision: parameter w float32 -> float16\n") != std::string::npos);
  CHECK(dump.find("precision: parameter m stays float32\n") != std::string::npos);
  CHECK(dump.find("pd_op.cast -> float16 (input 'x')\n") != std::string::npos);
  CHECK(dump.find("pd_op.cast -> float32 (output 'nm')\n") != std::string::npos);
  CHECK(l.dump().find("parameter w v") != std::string::npos);
  CHECK(l.dump().find("float16[4, 3, 3, 3] (stored float32)") != std::string::npos);
}

TEST_CASE("precision: an op the target computes in float32 only stays float32 between casts") {
  test::Env env;
  PrecisionPlanned p = plan(env, ir::DataType::kFloat16, {"minimum"});
  const LoweredProgram& l = *p.lowered;
  // minimum reads n and six through casts to float32, and its readers read r through a cast back to float16.
  CHECK(named(l, "r").dtype == ir::DataType::kFloat32);
  const KernelCall* minimum = nullptr;
  for (const KernelCall& c : l.calls) minimum = c.op == "minimum" ? &c : minimum;
  REQUIRE(minimum != nullptr);
  for (const KernelArg& a : minimum->args) {
    if (a.kind == ArgKind::kTensor) CHECK(l.values[a.value].dtype == ir::DataType::kFloat32);
  }
  const KernelCall* flatten = nullptr;
  for (const KernelCall& c : l.calls) flatten = c.op == "flatten" ? &c : flatten;
  REQUIRE(flatten != nullptr);
  CHECK(l.values[flatten->arg("x")->value].dtype == ir::DataType::kFloat16);
  const std::string dump = p.report.dump(p.program);
  CHECK(dump.find("pd_op.cast -> float32 (operand of pd_op.minimum)\n") != std::string::npos);
  CHECK(dump.find("pd_op.cast -> float16 (result of pd_op.minimum)\n") != std::string::npos);
  CHECK(p.report.casts.size() == 6);  // x in, y and nm out, two operands, one result
}

TEST_CASE("precision: --io-precision compute makes the inputs and outputs 16-bit themselves, with no cast") {
  test::Env env;
  PrecisionPlanned p = plan(env, ir::DataType::kFloat16, {}, false);
  const LoweredProgram& l = *p.lowered;
  CHECK(l.inputs[0].dtype == ir::DataType::kFloat16);
  CHECK(named(l, "c").dtype == ir::DataType::kFloat16);
  REQUIRE(l.outputs.size() == 2);
  CHECK(l.values[l.outputs[0].value].dtype == ir::DataType::kFloat16);
  // The batch norm's running mean stays float32, as computed: an output of its own dtype, not converted.
  CHECK(l.values[l.outputs[1].value].dtype == ir::DataType::kFloat32);
  CHECK(p.report.casts.empty());
  CHECK(p.report.interface == 1);
  for (const KernelCall& c : l.calls) CHECK(c.op != "cast");
  CHECK(p.report.dump(p.program).find("precision: float16, 2 parameters converted, 2 kept float32, 0 casts, 1 dtype "
                                      "attributes, 1 inputs float16 themselves\n") == 0);
}

TEST_CASE("precision: bfloat16 alike; float32 changes nothing") {
  test::Env env;
  PrecisionPlanned b = plan(env, ir::DataType::kBFloat16);
  CHECK(named(*b.lowered, "c").dtype == ir::DataType::kBFloat16);
  CHECK(b.lowered->values[parameter(*b.lowered, "fc").value].dtype == ir::DataType::kBFloat16);
  PrecisionPlanned f = plan(env, ir::DataType::kFloat32);
  CHECK(f.report.empty());
  CHECK(named(*f.lowered, "c").dtype == ir::DataType::kFloat32);
  CHECK(parameter(*f.lowered, "w").stored_dtype == ir::DataType::kUndefined);
  CHECK(f.lowered->file_dtype(parameter(*f.lowered, "w")) == ir::DataType::kFloat32);
  for (const KernelCall& c : f.lowered->calls) CHECK(c.op != "cast");
}

}  // namespace kforge::passes
