// Compiled by check_runtime_header.py with every compiler at hand, with strict warnings: it exercises the whole
// runtime header the way generated code and kernel libraries do, and exits 0 when the results are right.
#include "kforge_runtime.h"
#include "kforge_shape_meta.h"
#include "kforge_shape_meta_interp.h"
#include "kforge_math.h"
#include "kforge_sampling.h"

#include <cstdio>

namespace {

static_assert(KFORGE_RUNTIME_VERSION == 4, "the probe is written for runtime version 4");

// Kernel library hooks as a library installs them (plain function pointers, no captures).
size_t g_declared_bytes = 0;
void declare_hook(const void* data, size_t bytes) { g_declared_bytes += data != nullptr ? bytes : 0; }
void release_hook(const void* data) { g_declared_bytes = data != nullptr ? 0 : g_declared_bytes; }

// A kernel in the calling convention, with YAML-style defaults that must compile as written.
kforge::Status scale_like(const kforge::KernelContext& ctx, const kforge::Tensor& x, const kforge::Scalar& scale = 1.0,
                          const kforge::Scalar& stop = false, const kforge::IntArray& axis = {0, 0},
                          kforge::DataType dtype = kforge::DataType::FLOAT32,
                          const kforge::Place& place = kforge::CPUPlace(), kforge::Tensor* out = nullptr) {
  (void)axis;
  (void)stop;
  if (ctx.dtype != dtype || place != kforge::CPUPlace()) return kforge::Status::Error("bad dtype ", ctx.dtype);
  if (out == nullptr) return kforge::Status::Error("no output");
  const float* in = x.data_as<const float>();
  float* o = out->data_as<float>();
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] * scale.to<float>();
  return kforge::Status::OK();
}

kforge::Status run() {
  // Sizes as generated classes check them (codegen/size_table.h, the generated compute_sizes()).
  const int64_t s0 = int64_t{1} << 61;
  if (!(64 * kforge::checked_ceil_div(12 * kforge::CheckedInt(3), 64) + kforge::checked_max(kforge::CheckedInt(3), 1)).ok() ||
      (8 * kforge::CheckedInt(s0)).ok()) {
    return kforge::Status::Error("CheckedInt");
  }
  kforge::Tensor x;
  x.dtype = kforge::DataType::kFloat32;
  KFORGE_RETURN_IF_ERROR(x.set_dims({2, 3}));
  KFORGE_RETURN_IF_ERROR(x.allocate());
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = static_cast<float>(i);
  kforge::Tensor out = x;
  out.holder.reset();
  alignas(64) static unsigned char buffer[256];
  kforge::Workspace ws(buffer, sizeof buffer);
  out.data = ws.allocate(out.bytes());
  if (out.data == nullptr) return kforge::Status::Error("workspace too small");
  kforge::KernelContext ctx;
  ctx.dtype = kforge::DataType::kFloat32;
  ctx.scratch = &ws;
  KFORGE_RETURN_IF_ERROR(scale_like(ctx, x, 2, true, {}, kforge::DataType::FLOAT32, kforge::CPUPlace(), &out));
  if (out.data_as<float>()[5] != 10.0f) return kforge::Status::Error("wrong value ", out.data_as<float>()[5]);
  const kforge::Tensor* items[] = {&x, &out};
  kforge::TensorList list{items, 2};
  for (const kforge::Tensor* t : list) {
    if (!t->same_dims(x)) return kforge::Status::Error("dims ", t->dims_string());
  }
  kforge::DataType parsed = kforge::DataType::kUndefined;
  if (!kforge::parse_data_type("DataType::INT64", &parsed) || kforge::size_of(parsed) != 8) {
    return kforge::Status::Error("parse_data_type");
  }
  kforge::Scalar s;
  kforge::Tensor one = x;
  KFORGE_RETURN_IF_ERROR(one.set_dims({1}));
  KFORGE_RETURN_IF_ERROR(kforge::scalar_from_tensor(one, &s));
  kforge::declare_constant(x);  // no hooks installed: nothing happens
  kforge::kernel_library_hooks().declare_constant = &declare_hook;
  kforge::kernel_library_hooks().release_constant = &release_hook;
  kforge::declare_constant(x);
  if (g_declared_bytes != x.bytes()) return kforge::Status::Error("declare_constant hook: ", g_declared_bytes);
  kforge::release_constant(x);
  if (g_declared_bytes != 0) return kforge::Status::Error("release_constant hook");
  kforge::Status copy = kforge::Status::Error("a");
  kforge::Status moved = copy;
  moved = kforge::Status::OK();
  return moved;
}

// kforge_shape_meta.h as a --target cuda class uses it (on the runtime header alone): values copied back from the
// device into a host tensor become an IntArray / Scalar, and the rule gives the dims or a message.
kforge::Status shape_rules() {
  kforge::Tensor x;
  x.dtype = kforge::DataType::kFloat32;
  KFORGE_RETURN_IF_ERROR(x.set_dims({3, 4}));
  kforge::Tensor values;  // an int32 shape tensor [-1, 2] read back from the device
  values.dtype = kforge::DataType::kInt32;
  KFORGE_RETURN_IF_ERROR(values.set_dims({2}));
  KFORGE_RETURN_IF_ERROR(values.allocate());
  values.data_as<int32_t>()[0] = -1;
  values.data_as<int32_t>()[1] = 2;
  kforge::IntArray shape;
  KFORGE_RETURN_IF_ERROR(kforge::int_array_from_tensor(values, &shape));
  kforge::Tensor out;
  KFORGE_RETURN_IF_ERROR(kforge::shape_meta::ReshapeInferMeta(x, shape, &out));
  if (out.shape() != std::vector<int64_t>{6, 2}) return kforge::Status::Error("reshape to [-1, 2]: ", out.dims_string());
  if (kforge::shape_meta::ReshapeInferMeta(x, kforge::IntArray{5, -1}, &out).ok()) {
    return kforge::Status::Error("reshape of 12 elements to [5, -1] must fail");
  }
  // An end past the axis is clamped, a negative one counts from the back; a decreased axis is dropped.
  KFORGE_RETURN_IF_ERROR(kforge::shape_meta::SliceRawInferMeta(x, {1}, kforge::IntArray{1}, kforge::IntArray{100}, {-1},
                                                               {}, &out));
  if (out.shape() != std::vector<int64_t>{3, 3}) return kforge::Status::Error("slice [1, 100): ", out.dims_string());
  KFORGE_RETURN_IF_ERROR(kforge::shape_meta::SliceRawInferMeta(x, {0}, kforge::IntArray{-1}, kforge::IntArray{3}, {-1},
                                                               {0}, &out));
  if (out.shape() != std::vector<int64_t>{4}) return kforge::Status::Error("slice [-1, 3) decreased: ", out.dims_string());
  if (kforge::shape_meta::SliceRawInferMeta(x, {1}, kforge::IntArray{3}, kforge::IntArray{1}, {-1}, {}, &out).ok()) {
    return kforge::Status::Error("a slice whose end comes before its start must fail");
  }
  KFORGE_RETURN_IF_ERROR(kforge::shape_meta::ExpandInferMeta(x, kforge::IntArray{2, -1, 4}, &out));
  if (out.shape() != std::vector<int64_t>{2, 3, 4}) return kforge::Status::Error("expand: ", out.dims_string());
  KFORGE_RETURN_IF_ERROR(kforge::shape_meta::TileInferMeta(x, kforge::IntArray{2}, &out));
  if (out.shape() != std::vector<int64_t>{3, 8}) return kforge::Status::Error("tile: ", out.dims_string());
  KFORGE_RETURN_IF_ERROR(kforge::shape_meta::ArangeInferMeta(kforge::Scalar(0.5), kforge::Scalar(int64_t{3}),
                                                             kforge::Scalar(int64_t{1}), kforge::DataType::kFloat32, &out));
  if (out.shape() != std::vector<int64_t>{3}) return kforge::Status::Error("arange(0.5, 3): ", out.dims_string());
  KFORGE_RETURN_IF_ERROR(kforge::shape_meta::FullWithTensorInferMeta(kforge::IntArray{0, 2}, kforge::DataType::kInt64,
                                                                     &out));
  if (out.numel() != 0 || out.dtype != kforge::DataType::kInt64) return kforge::Status::Error("full [0, 2]");
  return kforge::Status::OK();
}

// kforge_math.h as a generated fused loop calls it: inlined into a function compiled for AVX2 and the baseline.
KFORGE_MATH_CLONES void gelu_rows(const float* in, float* out, int n) {
  for (int i = 0; i < n; ++i) out[i] = 0.5f * in[i] * (1.0f + kforge::math::erf(in[i] * 0.70710677f));
}

kforge::Status math() {
  float in[20], out[20];
  for (int i = 0; i < 20; ++i) in[i] = static_cast<float>(i - 10) * 0.5f;
  gelu_rows(in, out, 20);
  if (out[10] != 0.0f || !(out[19] > 4.49f && out[19] < 4.5f)) return kforge::Status::Error("gelu through kforge_math.h");
  if (kforge::math::exp(0.0f) != 1.0f || kforge::math::exp(0.0) != 1.0 || kforge::math::erf(0.0f) != 0.0f) {
    return kforge::Status::Error("kforge::math at 0");
  }
  return kforge::Status::OK();
}

// kforge_shape_meta_interp.h as --target cuda's host runs it: a size from two size tensors' values; and
// kforge_sampling.h as the CPU kernels call it on the host.
kforge::Status interp_and_sampling() {
  kforge::Tensor x, h, w, out;
  x.dtype = kforge::DataType::kFloat32;
  KFORGE_RETURN_IF_ERROR(x.set_dims({1, 2, 4, 5}));
  int64_t sizes[2] = {6, 7};
  for (kforge::Tensor* t : {&h, &w}) {
    t->dtype = kforge::DataType::kInt64;
    KFORGE_RETURN_IF_ERROR(t->set_dims({1}));
    t->data = t == &h ? &sizes[0] : &sizes[1];
  }
  const kforge::Tensor* const list[] = {&h, &w};
  KFORGE_RETURN_IF_ERROR(kforge::shape_meta::InterpolateInferMeta(x, nullptr, kforge::TensorList{list, 2}, nullptr,
                                                                  "NCHW", -1, -1, -1, {}, "bilinear", false, 0,
                                                                  &out));
  if (out.ndim != 4 || out.dims[2] != 6 || out.dims[3] != 7) return kforge::Status::Error("interpolation size");
  const float plane[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  if (kforge::sampling::dmcn_bilinear(plane, 2, 2, 0.5f, 0.5f) != 2.5f) return kforge::Status::Error("dmcn_bilinear");
  const kforge::sampling::CubicSource<double> c = kforge::sampling::cubic_source<double>(0.5f, 3, true);
  if (c.index != 1 || c.t != 0.5) return kforge::Status::Error("cubic_source");
  if (kforge::sampling::cubic_interp<double>(1.0, 1.0, 1.0, 1.0, 0.25) != 1.0) {
    return kforge::Status::Error("cubic_interp of a constant");
  }
  return kforge::Status::OK();
}

}  // namespace

int main() {
  if (kforge::Status i = interp_and_sampling(); !i.ok()) {
    std::printf("interpolation / sampling probe failed: %s\n", i.message().c_str());
    return 1;
  }
  if (kforge::Status m = math(); !m.ok()) {
    std::printf("math probe failed: %s\n", m.message().c_str());
    return 1;
  }
  if (kforge::Status rules = shape_rules(); !rules.ok()) {
    std::printf("shape rules probe failed: %s\n", rules.message().c_str());
    return 1;
  }
  kforge::Status s = run();
  if (!s.ok()) {
    std::printf("runtime probe failed: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
