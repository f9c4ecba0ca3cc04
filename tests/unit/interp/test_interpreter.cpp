// Unit tests of the reference interpreter (tools/interp/): attribute maps, the op registry, seeded inputs, and
// running small programs op by op (the oracle must itself be right: results are checked by hand here).
#include <catch2/catch.hpp>

#include <sstream>

#include "attr_map.h"
#include "compare.h"
#include "interpreter.h"
#include "program/program_reader.h"

namespace kforge::interp {
namespace {

TEST_CASE("attr map: getters convert the kinds untyped sources guess") {
  std::vector<ir::NamedAttribute> attrs;
  attrs.push_back({"flag", ir::Attribute::array({ir::Attribute::boolean(true)}), {}});
  attrs.push_back({"axis", ir::Attribute::int64(-1), {}});
  attrs.push_back({"eps", ir::Attribute::float32(0.5f), {}});
  attrs.push_back({"shape", ir::Attribute::int_array({2, 3}), {}});
  attrs.push_back({"dtype", ir::Attribute::string("float64"), {}});
  attrs.push_back({"place", ir::Attribute::place_attr({}), {}});
  const AttrMap map = AttrMap::from_attributes(attrs);
  bool flag = false;
  CHECK(map.get_bool("flag", &flag).ok());
  CHECK(flag);
  int axis = 0;
  CHECK(map.get_int32("axis", &axis).ok());
  CHECK(axis == -1);
  double eps = 0;
  CHECK(map.get_float("eps", &eps).ok());
  CHECK(eps == 0.5);
  std::vector<int> shape;
  CHECK(map.get_int32s("shape", &shape).ok());
  CHECK(shape == std::vector<int>{2, 3});
  kforge::DataType dtype = kforge::DataType::kUndefined;
  CHECK(map.get_dtype("dtype", &dtype).ok());
  CHECK(dtype == kforge::DataType::kFloat64);
  kforge::Scalar s;
  CHECK(map.get_scalar("axis", &s).ok());
  CHECK(s.to<int>() == -1);
  CHECK_FALSE(map.has("place"));  // no run-time meaning: left out
  int missing = 7;
  CHECK(map.get_int32("missing", &missing, 3).ok());
  CHECK(missing == 3);
  CHECK(map.get_int32("missing", &missing).message() == "missing attribute 'missing'");
  CHECK(map.get_bool("shape", &flag).message() == "attribute 'shape' is not a bool");
}

TEST_CASE("registry: every op of kernels/ops.yaml, and in-place twins") {
  const OpRegistry& r = OpRegistry::builtin();
  for (const char* name : {"add", "batch_norm", "conv2d", "full_int_array", "nearest_interp", "split_with_num"}) {
    CHECK(r.find(name) != nullptr);
  }
  CHECK(r.find("relu_") == r.find("relu"));
  CHECK(r.find("assign_value_") != nullptr);
  CHECK(r.find("thresholded_relu") != nullptr);
  CHECK(r.find("add_n") != nullptr);
  CHECK(r.find("logsigmoid") == nullptr);
}

struct Run {
  SourceManager sources;
  std::ostringstream errors;
  DiagnosticEngine diags{sources, errors};
  std::optional<ir::Program> program;
  std::optional<Interpreter> interp;

  explicit Run(const std::string& text) {
    program = ir::read_program(sources, sources.add_buffer("p.yaml", text), diags);
    REQUIRE(program);
    interp = Interpreter::prepare(*program, sources, diags);
  }
};

kforge::Tensor make(std::vector<float>& values, std::vector<int64_t> dims) {
  kforge::Tensor t;
  t.dtype = kforge::DataType::kFloat32;
  REQUIRE(t.set_dims(dims).ok());
  t.data = values.data();
  return t;
}

TEST_CASE("interpreter: a mutable attribute arriving as an operand (reshape by full_int_array)") {
  Run r(R"(program: t
inputs: [{name: x, dtype: float32, shape: [2, 3]}]
params: [{name: b, dtype: float32, shape: [3]}]
ops:
  - {op: add, in: [x, b], out: [a]}
  - {op: full_int_array, out: [shape], attrs: {value: [3, -1], dtype: int64}}
  - {op: reshape, in: [a, shape], out: [y]}
  - {op: full, out: [two], attrs: {shape: [1], value: 2.0, dtype: float32}}
  - {op: scale, in: [y, two], out: [z], attrs: {bias: 1.0}}
outputs: [y, z]
)");
  INFO(r.errors.str());
  REQUIRE(r.interp);
  CHECK(r.interp->kernel_op_count() == 5);
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30};
  std::vector<bundle::NamedTensor> outputs;
  REQUIRE(r.interp->run({{"x", make(x, {2, 3})}}, {{"b", make(b, {3})}}, &outputs).ok());
  REQUIRE(outputs.size() == 2);
  CHECK(outputs[0].name == "y");
  CHECK(outputs[0].tensor.dims_string() == "[3, 2]");
  const float* y = outputs[0].tensor.data_as<const float>();
  CHECK(std::vector<float>(y, y + 6) == std::vector<float>{11, 22, 33, 14, 25, 36});
  const float* z = outputs[1].tensor.data_as<const float>();
  CHECK(z[0] == 23);  // 11 * 2 + 1
  CHECK(z[5] == 73);
}

TEST_CASE("interpreter: combine / split vectors and the trace of every result") {
  Run r(R"(program: t
inputs: [{name: x, dtype: float32, shape: [4]}]
ops:
  - {op: split, in: [x], out: [parts], attrs: {sections: [1, 3], axis: 0}}
  - {op: builtin.split, in: [parts], out: [a, b]}
  - {op: builtin.combine, in: [b, a], out: [ba]}
  - {op: concat, in: [ba], out: [y], attrs: {axis: 0}}
outputs: [y]
)");
  INFO(r.errors.str());
  REQUIRE(r.interp);
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<bundle::NamedTensor> outputs;
  std::vector<TraceEntry> trace;
  REQUIRE(r.interp->run({{"x", make(x, {4})}}, {}, &outputs, &trace).ok());
  const float* y = outputs[0].tensor.data_as<const float>();
  CHECK(std::vector<float>(y, y + 4) == std::vector<float>{2, 3, 4, 1});
  REQUIRE(trace.size() == 3);  // split's two elements, concat's result
  CHECK(trace[0].value_key == "parts[0]");
  CHECK(trace[2].value_key == "y");
  CHECK(trace[2].op_name == "pd_op.concat");
}

TEST_CASE("interpreter: unsupported ops are located errors, then one summary naming them") {
  Run r(R"(program: t
inputs: [{name: x, dtype: float32, shape: [4]}]
ops:
  - {op: lgamma, in: [x], out: [a]}
  - {op: lgamma, in: [a], out: [y]}
outputs: [y]
)");
  CHECK_FALSE(r.interp);
  const std::string text = r.errors.str();
  CHECK(text.find("p.yaml:4:10: error: the reference interpreter has no kernel for 'pd_op.lgamma'") != std::string::npos);
  CHECK(text.find("error: unsupported ops (no reference kernel): pd_op.lgamma\n") != std::string::npos);
}

TEST_CASE("interpreter: pd_op.if runs the branch its condition picks") {
  // docs_if_op_program_draft2024's if with an output: i >= 3 ? a + a : a - a.
  SourceManager sources;
  std::ostringstream errors;
  DiagnosticEngine diags{sources, errors};
  std::optional<ir::Program> program = ir::read_program(sources, sources.add_buffer("p.pir", R"({
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"i",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[1],stop_gradient:[true]} : () -> pd_op.tensor<1xf32>
    (%1) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"a",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[1],stop_gradient:[true]} : () -> pd_op.tensor<1xf32>
    (%2) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[],stop_gradient:[true],value:(Float)3} : () -> pd_op.tensor<f32>
    (%3) = "pd_op.greater_equal" (%0, %2) {stop_gradient:[true]} : (pd_op.tensor<1xf32>, pd_op.tensor<f32>) -> pd_op.tensor<1xb>
    (%4) = pd_op.if (%3) {stop_gradient:[true]} -> pd_op.tensor<1xf32>
    {
        (%5) = "pd_op.add" (%1, %1) {stop_gradient:[true]} : (pd_op.tensor<1xf32>, pd_op.tensor<1xf32>) -> pd_op.tensor<1xf32>
        () = "cf.yield" (%5) {} : (pd_op.tensor<1xf32>) ->
    } else {
        (%6) = "pd_op.subtract" (%1, %1) {stop_gradient:[true]} : (pd_op.tensor<1xf32>, pd_op.tensor<1xf32>) -> pd_op.tensor<1xf32>
        () = "cf.yield" (%6) {} : (pd_op.tensor<1xf32>) ->
    }
    (%8) = "pd_op.fetch" (%4) {col:(Int32)0,name:"out",persistable:[true],stop_gradient:[false]} : (pd_op.tensor<1xf32>) -> pd_op.tensor<1xf32>
})"), diags);
  REQUIRE(program);
  std::optional<Interpreter> interp = Interpreter::prepare(*program, sources, diags);
  INFO(errors.str());
  REQUIRE(interp);
  CHECK(interp->kernel_op_count() == 2);  // full, greater_equal (the branches' ops run inside the if)
  for (const auto& [i, want] : std::vector<std::pair<float, float>>{{5, 14}, {1, 0}}) {
    std::vector<float> iv = {i}, av = {7};
    std::vector<bundle::NamedTensor> outputs;
    REQUIRE(interp->run({{"i", make(iv, {1})}, {"a", make(av, {1})}}, {}, &outputs).ok());
    REQUIRE(outputs.size() == 1);
    CHECK(outputs[0].tensor.data_as<const float>()[0] == want);
  }
}

TEST_CASE("random inputs: seeded, per-name, dynamic dims from --shape, positive variances") {
  std::vector<TensorSlot> slots = {{"x", kforge::DataType::kFloat32, {-1, 3}, false},
                                   {"v", kforge::DataType::kFloat32, {5}, true},
                                   {"ids", kforge::DataType::kInt64, {4}, false}};
  std::vector<bundle::NamedTensor> a, b, c;
  REQUIRE(random_tensors(slots, 7, {{"x", {2, 3}}}, &a).ok());
  REQUIRE(random_tensors(slots, 7, {{"x", {2, 3}}}, &b).ok());
  REQUIRE(random_tensors({slots[1]}, 7, {}, &c).ok());
  CHECK(a[0].tensor.dims_string() == "[2, 3]");
  CHECK(compare_tensors(a[0].tensor, b[0].tensor).agree());
  CHECK(compare_tensors(a[1].tensor, c[0].tensor).agree());  // independent of the other slots
  for (int i = 0; i < 5; ++i) CHECK(a[1].tensor.data_as<float>()[i] >= 0.5f);
  for (int i = 0; i < 4; ++i) CHECK((a[2].tensor.data_as<int64_t>()[i] >= 0 && a[2].tensor.data_as<int64_t>()[i] < 4));
  std::vector<bundle::NamedTensor> other;
  REQUIRE(random_tensors(slots, 8, {{"x", {2, 3}}}, &other).ok());
  CHECK_FALSE(compare_tensors(a[0].tensor, other[0].tensor).agree());
  CHECK(random_tensors(slots, 7, {{"x", {2, 4}}}, &other).message() ==
        "--shape x: dim 1 is 4 but the program fixes it to 3");
}

TEST_CASE("compare: exact by default, NaN matches NaN, shapes must agree") {
  std::vector<float> a = {1, NAN, 3}, b = {1, NAN, 3.5f}, c = {1, 2};
  const Difference d = compare_tensors(make(a, {3}), make(b, {3}));
  CHECK(d.mismatches == 1);
  CHECK(d.max_abs == 0.5);
  CHECK(compare_tensors(make(a, {3}), make(b, {3}), 0.5).agree());
  CHECK(compare_tensors(make(a, {3}), make(a, {3})).agree());
  CHECK(compare_tensors(make(c, {2}), make(a, {3})).why == "shape [2] vs [3]");
}

}  // namespace
}  // namespace kforge::interp
