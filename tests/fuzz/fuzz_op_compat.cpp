// Fuzz target: Paddle's op_compat.yaml, read on its own and then used to derive the PIR signatures of a small
// fixed op library (so that its scalar/int_array metadata reaches the signature rules).
#include "fuzz_input.h"
#include "opdef/op_compat.h"
#include "opdef/op_loader.h"
#include "opdef/pir_signature.h"

using namespace kforge;

namespace {

// Ops whose attributes op_compat entries commonly make mutable (Scalar, IntArray) or rename.
constexpr const char* kOps = R"(
- op : add
  args : (Tensor x, Tensor y)
  output : Tensor(out)
  infer_meta :
    func : ElementwiseInferMeta
  kernel :
    func : add
  inplace : (x -> out)
- op : full
  args : (IntArray shape, Scalar value = 0.0, DataType dtype = DataType::FLOAT32, Place place = CPUPlace())
  output : Tensor(out)
  infer_meta :
    func : CreateInferMeta
  kernel :
    func : full
- op : reshape
  args : (Tensor x, IntArray shape)
  output : Tensor(out), Tensor(xshape)
  infer_meta :
    func : ReshapeWithXShapeInferMeta
  kernel :
    func : reshape
  inplace : (x -> out)
- op : scale
  args : (Tensor x, Scalar scale = 1.0, float bias = 0.0, bool bias_after_scale = true)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : scale
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput input(data, size, "op_compat.yaml");
  const opdef::OpCompat compat = opdef::read_op_compat(input.sources(), input.file(), input.diags());
  const uint32_t ops_file = input.sources().add_buffer("ops.yaml", kOps);
  opdef::OpLoader loader(input.sources(), input.diags());
  loader.add_buffer(ops_file);
  const opdef::OpLibrary library = std::move(loader).finish();
  const auto signatures = opdef::derive_pir_signatures(library, &compat, input.diags());
  static_cast<void>(opdef::signatures_to_json(signatures, input.sources()));
  input.require_located_errors();
  return 0;
}
