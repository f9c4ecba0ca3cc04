// An application of the code `kforge compile` generates for classifier.json (class `classifier`): bind the
// parameters once, run two batches of different sizes, print the class probabilities, and show the error
// status an input of the wrong shape gets. Built by tools/demo.sh against kernels/.
#include <cmath>
#include <cstdio>
#include <vector>

#include "classifier.h"

namespace {

// A float32 tensor viewing `values` (the caller keeps them alive).
kforge::Tensor view(std::vector<float>& values, std::vector<int64_t> dims) {
  kforge::Tensor t;
  t.dtype = kforge::DataType::kFloat32;
  if (!t.set_dims(dims).ok()) std::abort();
  t.data = values.data();
  return t;
}

// Deterministic "trained" weights: a smooth pattern, so that the demo prints the same numbers everywhere.
std::vector<float> weights(size_t n, float phase) {
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = 0.5f * std::sin(phase + 0.7f * static_cast<float>(i));
  return w;
}

void print(const char* title, const kforge::Tensor& probs) {
  std::printf("%s: probs %s\n", title, probs.dims_string().c_str());
  const float* p = probs.data_as<const float>();
  for (int64_t row = 0; row < probs.dims[0]; ++row) {
    std::printf("  sample %lld:", static_cast<long long>(row));
    for (int64_t c = 0; c < probs.dims[1]; ++c) std::printf(" %.4f", p[row * probs.dims[1] + c]);
    std::printf("\n");
  }
}

}  // namespace

int main() {
  std::vector<float> w0 = weights(4 * 8, 0.1f), b0 = weights(8, 1.3f), w1 = weights(8 * 3, 2.1f), b1 = weights(3, 0.4f);
  classifier model;
  classifier::Parameters params;
  params.linear_0_w_0 = view(w0, {4, 8});
  params.linear_0_b_0 = view(b0, {8});
  params.linear_1_w_0 = view(w1, {8, 3});
  params.linear_1_b_0 = view(b1, {3});
  if (kforge::Status s = model.bind_parameters(params); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }

  kforge::Tensor probs;  // run() allocates it once per shape and reuses it after
  std::vector<float> batch2 = {1.0f, 0.5f, -0.5f, 2.0f, -1.0f, 0.0f, 0.25f, 1.5f};
  if (kforge::Status s = model.run(view(batch2, {2, 4}), &probs); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  print("batch of 2", probs);

  std::vector<float> batch3 = {0.1f, 0.2f, 0.3f, 0.4f, -2.0f, 1.0f, 0.5f, 0.0f, 3.0f, -1.0f, 2.0f, 1.0f};
  if (kforge::Status s = model.run(view(batch3, {3, 4}), &probs); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  print("batch of 3", probs);

  std::vector<float> wrong(3 * 5, 1.0f);
  kforge::Status s = model.run(view(wrong, {3, 5}), &probs);
  std::printf("an input of shape [3, 5]: %s\n", s.ok() ? "accepted (unexpected)" : s.message().c_str());
  return s.ok() ? 1 : 0;
}
