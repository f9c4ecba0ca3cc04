#include "compare.h"

#include <cmath>

namespace kforge::interp {

namespace {

double element(const kforge::Tensor& t, int64_t i) {
  switch (t.dtype) {
    case kforge::DataType::kFloat32: return t.data_as<const float>()[i];
    case kforge::DataType::kFloat64: return t.data_as<const double>()[i];
    case kforge::DataType::kInt32: return t.data_as<const int32_t>()[i];
    case kforge::DataType::kInt64: return static_cast<double>(t.data_as<const int64_t>()[i]);
    case kforge::DataType::kInt16: return t.data_as<const int16_t>()[i];
    case kforge::DataType::kInt8: return t.data_as<const int8_t>()[i];
    case kforge::DataType::kUInt8: return t.data_as<const uint8_t>()[i];
    case kforge::DataType::kBool: return t.data_as<const bool>()[i] ? 1 : 0;
    default: return 0;
  }
}

}  // namespace

Difference compare_tensors(const kforge::Tensor& actual, const kforge::Tensor& expected, double atol, double rtol) {
  Difference d;
  if (actual.dtype != expected.dtype) {
    d.comparable = false;
    d.why = std::string("dtype ") + kforge::name_of(actual.dtype) + " vs " + kforge::name_of(expected.dtype);
    return d;
  }
  if (!actual.same_dims(expected)) {
    d.comparable = false;
    d.why = "shape " + actual.dims_string() + " vs " + expected.dims_string();
    return d;
  }
  const int64_t n = expected.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double a = element(actual, i), e = element(expected, i);
    if (std::isnan(a) || std::isnan(e)) {
      if (!(std::isnan(a) && std::isnan(e))) {
        ++d.mismatches;
        d.max_abs = d.max_rel = INFINITY;
      }
      continue;
    }
    const double abs = a == e ? 0.0 : std::fabs(a - e);  // a == e also covers equal infinities
    const double rel = abs == 0 ? 0.0 : abs / std::fmax(std::fabs(e), 1e-30);
    if (abs > d.max_abs) d.max_abs = abs;
    if (rel > d.max_rel) d.max_rel = rel;
    if (abs > atol + rtol * std::fabs(e)) ++d.mismatches;
  }
  return d;
}

}  // namespace kforge::interp
