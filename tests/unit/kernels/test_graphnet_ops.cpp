// The kernels issue 34 adds for GraphNet's Paddle models: values on small inputs (worked by hand from Paddle's
// definitions; tests/paddle/ checks the same ops against Paddle itself) and the errors of bad indices and inputs.
#include <catch2/catch.hpp>

#include <cmath>

#include "tensor_builder.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;

namespace {

using GnDims = std::vector<int64_t>;

}  // namespace

TEST_CASE("gather_nd: rows of every length, negative indices, and an index out of range is an error") {
  const Tensor x = iota({2, 3, 4});
  const Tensor index = i64({2, 2}, {1, -1, 0, 1});  // (1, 2) and (0, 1)
  Tensor out = output_from([&](Tensor* o) { return m::GatherNdInferMeta(x, index, o); });
  CHECK(dims_of(out) == GnDims{2, 4});
  REQUIRE(k::gather_nd(cpu(), x, index, &out).ok());
  check_close<float>(out, {20, 21, 22, 23, 4, 5, 6, 7}, 0);
  const Tensor full = i32({1, 3}, {1, 0, -2});
  Tensor one = output_from([&](Tensor* o) { return m::GatherNdInferMeta(x, full, o); });
  CHECK(dims_of(one) == GnDims{1});
  REQUIRE(k::gather_nd(cpu(), x, full, &one).ok());
  check_close<float>(one, {14}, 0);
  const Tensor bad = i64({1, 2}, {2, 0});
  Tensor o2 = empty(DataType::kFloat32, {1, 4});
  CHECK(error_of(k::gather_nd(cpu(), x, bad, &o2)).find("index 2 is out of range for axis 0 of size 2") !=
        std::string::npos);
  Tensor e;
  CHECK(error_of(m::GatherNdInferMeta(x, i64({1, 4}, {0, 0, 0, 0}), &e)).find("rank 3") != std::string::npos);
  // Empty index rows pick the whole of x, once per row.
  const Tensor none = i64({2, 0}, {});
  Tensor whole = output_from([&](Tensor* o) { return m::GatherNdInferMeta(x, none, o); });
  CHECK(dims_of(whole) == GnDims{2, 2, 3, 4});
  REQUIRE(k::gather_nd(cpu(), x, none, &whole).ok());
  CHECK(values<float>(whole)[24 + 23] == 23.f);
}

TEST_CASE("take_along_axis: negative indices, and one out of range is an error") {
  const Tensor x = iota({2, 3});
  const Tensor idx = i64({2, 2}, {2, -3, 1, 1});
  Tensor t = output_from([&](Tensor* o) { return m::TakeAlongAxisInferMeta(x, idx, 1, o); });
  REQUIRE(k::take_along_axis(cpu(), x, idx, 1, &t).ok());
  check_close<float>(t, {2, 0, 4, 4}, 0);
  Tensor bad_t = empty(DataType::kFloat32, {2, 2});
  CHECK(error_of(k::take_along_axis(cpu(), x, i64({2, 2}, {0, 3, 0, 0}), 1, &bad_t)).find("out of range") !=
        std::string::npos);
}

TEST_CASE("diag: a vector to a padded matrix, a matrix to its diagonal") {
  const Tensor x = iota({2, 3});
  const Tensor v = f32({2}, {5, 6});
  Tensor d = output_from([&](Tensor* o) { return m::DiagInferMeta(v, 1, -1.f, o); });
  REQUIRE(k::diag(cpu(), v, 1, -1.f, &d).ok());
  check_close<float>(d, {-1, 5, -1, -1, -1, 6, -1, -1, -1}, 0);
  Tensor dd = output_from([&](Tensor* o) { return m::DiagInferMeta(x, -1, 0.f, o); });
  REQUIRE(k::diag(cpu(), x, -1, 0.f, &dd).ok());
  check_close<float>(dd, {3}, 0);
}

TEST_CASE("meshgrid: each output repeats its input along its own axis") {
  const Tensor a = i64({2}, {1, 2}), b = i64({3}, {7, 8, 9});
  const Tensor* ins[] = {&a, &b};
  Tensor g0, g1;
  Tensor* outs[] = {&g0, &g1};
  REQUIRE(m::MeshgridInferMeta(TensorList{ins, 2}, MutableTensorList{outs, 2}).ok());
  g0 = empty(DataType::kInt64, dims_of(g0));
  g1 = empty(DataType::kInt64, dims_of(g1));
  REQUIRE(k::meshgrid(cpu(), TensorList{ins, 2}, MutableTensorList{outs, 2}).ok());
  CHECK(values<int64_t>(g0) == std::vector<int64_t>{1, 1, 1, 2, 2, 2});
  CHECK(values<int64_t>(g1) == std::vector<int64_t>{7, 8, 9, 7, 8, 9});
}

TEST_CASE("pad: constant padding before and after each dim") {
  const Tensor x = iota({2, 3});
  const std::vector<int> paddings{0, 1, 1, 0};
  Tensor p = output_from([&](Tensor* o) { return m::PadInferMeta(x, paddings, Scalar(9.0), o); });
  CHECK(dims_of(p) == GnDims{3, 4});
  REQUIRE(k::pad(cpu(), x, paddings, Scalar(9.0), &p).ok());
  check_close<float>(p, {9, 0, 1, 2, 9, 3, 4, 5, 9, 9, 9, 9}, 0);
  Tensor e;
  CHECK(error_of(m::PadInferMeta(x, {1, 1}, Scalar(0.0), &e)).find("needs 4") != std::string::npos);
}

TEST_CASE("expand_as: x broadcast to y's dims") {
  const Tensor x = iota({2, 3});
  Tensor e;
  const Tensor col = f32({2, 1}, {1, 2});
  Tensor ea = output_from([&](Tensor* o) { return m::ExpandAsInferMeta(col, &x, {}, o); });
  REQUIRE(k::expand_as(cpu(), col, &x, {}, &ea).ok());
  check_close<float>(ea, {1, 1, 1, 2, 2, 2}, 0);
  CHECK(error_of(m::ExpandAsInferMeta(x, &col, {}, &e)).find("cannot expand x [2, 3] to [2, 1]") != std::string::npos);
}

TEST_CASE("share_data: a copy of x") {
  const Tensor x = iota({2, 3});
  Tensor s = output_from([&](Tensor* o) { return m::UnchangedInferMeta(x, o); });
  REQUIRE(k::share_data(cpu(), x, &s).ok());
  check_close<float>(s, values<float>(x), 0);
}

TEST_CASE("min: the smallest element along the axes") {
  const Tensor x = f32({2, 3}, {3, -1, 2, 0, 5, -4});
  Tensor mn = output_from([&](Tensor* o) { return m::ReduceIntArrayAxisInferMeta(x, IntArray({1}), false, o); });
  REQUIRE(k::min(cpu(), x, IntArray({1}), false, &mn).ok());
  check_close<float>(mn, {-1, -4}, 0);
}

TEST_CASE("any and all: bool results of nonzero elements, whatever x's dtype") {
  const Tensor x = f32({2, 3}, {3, -1, 2, 0, 5, -4});
  const Tensor mask = boolean({2, 3}, {1, 0, 0, 1, 1, 1});
  Tensor an = output_from([&](Tensor* o) { return m::ReduceInferMeta(mask, {0}, true, o); });
  CHECK(dims_of(an) == GnDims{1, 3});
  REQUIRE(k::any(cpu(), mask, {0}, true, &an).ok());
  CHECK(values<bool>(an) == std::vector<bool>{true, true, true});
  Tensor al = output_from([&](Tensor* o) { return m::ReduceInferMeta(x, {}, false, o); });
  CHECK(al.dtype == DataType::kBool);  // bool whatever x's dtype
  REQUIRE(k::all(cpu(), x, {}, false, &al).ok());
  CHECK(values<bool>(al) == std::vector<bool>{false});  // x holds a 0
}

TEST_CASE("p_norm: p = 1, 2, 0 (nonzeros), +-inf, along an axis and as a vector") {
  const Tensor x = f32({2, 3}, {3, -1, 2, 0, 5, -4});
  auto norm = [&](float p, bool asvector) {
    Tensor out = output_from([&](Tensor* o) { return m::PNormInferMeta(x, p, -1, 1e-12f, false, asvector, o); });
    REQUIRE(k::p_norm(cpu(), x, p, -1, 1e-12f, false, asvector, &out).ok());
    return values<float>(out);
  };
  CHECK(norm(1, false) == std::vector<float>{6, 9});
  CHECK(norm(0, false) == std::vector<float>{3, 2});  // nonzeros
  CHECK(norm(INFINITY, false) == std::vector<float>{3, 5});
  CHECK(norm(-INFINITY, true) == std::vector<float>{0});
  check_close<float>(f32({2}, norm(2, false)), {std::sqrt(14.f), std::sqrt(41.f)}, 1e-6);
}

TEST_CASE("bce_loss: logs clamped at -100, and an input outside [0, 1] is an error") {
  const Tensor p = f32({3}, {0.25f, 1.f, 0.f}), y = f32({3}, {1, 1, 0});
  Tensor b = output_from([&](Tensor* o) { return m::BCELossInferMeta(p, y, o); });
  REQUIRE(k::bce_loss(cpu(), p, y, &b).ok());
  check_close<float>(b, {-std::log(0.25f), 0, 0}, 1e-6);
  CHECK(error_of(k::bce_loss(cpu(), f32({3}, {0.5f, 1.5f, 0.f}), y, &b)).find("must be in [0, 1]") !=
        std::string::npos);
}

TEST_CASE("sigmoid_cross_entropy_with_logits: ignore_index and normalize") {
  const Tensor logits = f32({3}, {2, -1, 0.5f}), label = f32({3}, {1, 0, -100});
  Tensor s = output_from(
      [&](Tensor* o) { return m::SigmoidCrossEntropyWithLogitsInferMeta(logits, label, nullptr, false, -100, o); });
  REQUIRE(k::sigmoid_cross_entropy_with_logits(cpu(), logits, label, nullptr, false, -100, &s).ok());
  check_close<float>(s, {std::log1p(std::exp(-2.f)), std::log1p(std::exp(-1.f)), 0}, 1e-6);  // ignored: 0
  REQUIRE(k::sigmoid_cross_entropy_with_logits(cpu(), logits, label, nullptr, true, -100, &s).ok());
  check_close<float>(s, {std::log1p(std::exp(-2.f)) / 2, std::log1p(std::exp(-1.f)) / 2, 0}, 1e-6);
}

TEST_CASE("cross_entropy_with_softmax: -log of the label's probability, ignore_index, and a label out of range") {
  // Two rows of 2 classes: softmax of (0, log 3) is (1/4, 3/4).
  const Tensor logits = f32({2, 2}, {0, std::log(3.f), 0, std::log(3.f)}), label = i64({2, 1}, {1, -100});
  Tensor p, l;
  REQUIRE(m::CrossEntropyWithSoftmaxInferMeta(logits, label, false, true, true, -100, -1, &p, &l).ok());
  CHECK(dims_of(l) == GnDims{2, 1});
  p = empty(DataType::kFloat32, {2, 2});
  l = empty(DataType::kFloat32, {2, 1});
  REQUIRE(k::cross_entropy_with_softmax(cpu(), logits, label, false, true, true, -100, -1, &p, &l).ok());
  check_close<float>(p, {0.25f, 0.75f, 0.25f, 0.75f}, 1e-6);
  check_close<float>(l, {-std::log(0.75f), 0}, 1e-6);  // the second label is ignore_index
  CHECK(error_of(k::cross_entropy_with_softmax(cpu(), logits, i64({2, 1}, {1, 2}), false, true, true, -100, -1, &p,
                                               &l))
            .find("label[1] is 2, outside [0, 2)") != std::string::npos);
  Tensor bad_p, bad_l;
  CHECK(error_of(m::CrossEntropyWithSoftmaxInferMeta(logits, i64({2, 2}, {0, 0, 0, 0}), false, true, true, -100, -1,
                                                     &bad_p, &bad_l))
            .find("with 1 along axis 1") != std::string::npos);
}

TEST_CASE("leaky_relu: max(x, slope * x) below a slope of 1, min above") {
  const Tensor x = f32({3}, {-2, 0, 3});
  Tensor out = empty(DataType::kFloat32, {3});
  REQUIRE(k::leaky_relu(cpu(), x, 0.1f, &out).ok());
  check_close<float>(out, {-0.2f, 0, 3}, 1e-7);
  REQUIRE(k::leaky_relu(cpu(), x, 2.0f, &out).ok());
  check_close<float>(out, {-4, 0, 3}, 0);  // min(x, 2x): 2x below 0, x above
}

TEST_CASE("grid_sample: bilinear and nearest, zeros, border and reflection padding, NaN in the grid") {
  // A 2x2 image sampled at its corners, its centre and outside (zeros padding), align_corners.
  const Tensor img = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor grid = f32({1, 1, 3, 2}, {-1, -1, 0, 0, 3, 0});
  Tensor g = output_from([&](Tensor* o) { return m::GridSampleBaseInferMeta(img, grid, o); });
  REQUIRE(k::grid_sample(cpu(), img, grid, "bilinear", "zeros", true, &g).ok());
  check_close<float>(g, {1, 2.5f, 0}, 1e-6);
  REQUIRE(k::grid_sample(cpu(), img, grid, "bilinear", "border", true, &g).ok());
  check_close<float>(g, {1, 2.5f, 3}, 1e-6);
  REQUIRE(k::grid_sample(cpu(), img, grid, "nearest", "reflection", true, &g).ok());
  check_close<float>(g, {1, 4, 3}, 1e-6);  // 3 reflects to -1 (column 0); round(0.5) is 1
  CHECK(error_of(k::grid_sample(cpu(), img, grid, "bicubic", "zeros", true, &g)).find("mode") != std::string::npos);
  // A NaN in the grid never reads an undefined pixel: nearest gives 0, bilinear NaN (its weights are NaN).
  const Tensor nan_grid = f32({1, 1, 3, 2}, {NAN, 0, 0, NAN, NAN, NAN});
  for (const char* padding : {"zeros", "border", "reflection"}) {
    REQUIRE(k::grid_sample(cpu(), img, nan_grid, "nearest", padding, false, &g).ok());
    check_close<float>(g, {0, 0, 0}, 0);
    REQUIRE(k::grid_sample(cpu(), img, nan_grid, "bilinear", padding, false, &g).ok());
    for (float v : values<float>(g)) CHECK(std::isnan(v));
  }
}

TEST_CASE("mean_all: the mean of every element, 0-D") {
  const Tensor x = f32({2, 2}, {1, 2, 3, 6});
  Tensor out = output_from([&](Tensor* o) { return m::MeanAllInferMeta(x, o); });
  CHECK(dims_of(out).empty());
  REQUIRE(k::mean_all(cpu(), x, &out).ok());
  check_close<float>(out, {3}, 0);
}

TEST_CASE("linear_interp: a 3-D NCW or NWC input, align_corners, and 4-D is refused") {
  const Tensor x = f32({1, 1, 3}, {0, 1, 2});
  auto run = [&](const Tensor& in, const std::string& format, int out_w, bool align_corners) {
    Tensor out = output_from([&](Tensor* o) {
      return m::InterpolateInferMeta(in, nullptr, {}, nullptr, format, -1, -1, out_w, {}, "linear", align_corners, 0,
                                     o);
    });
    Status s = k::linear_interp(cpu(), in, nullptr, {}, nullptr, format, -1, -1, out_w, {}, "linear", align_corners,
                                0, &out);
    INFO(s.message());
    REQUIRE(s.ok());
    return out;
  };
  check_close<float>(run(x, "NCHW", 5, true), {0, 0.5f, 1, 1.5f, 2}, 1e-6);
  Tensor nwc = run(f32({1, 3, 2}, {0, 10, 1, 11, 2, 12}), "NHWC", 5, true);
  CHECK(dims_of(nwc) == GnDims{1, 5, 2});
  check_close<float>(nwc, {0, 10, 0.5f, 10.5f, 1, 11, 1.5f, 11.5f, 2, 12}, 1e-6);
  Tensor o4 = empty(DataType::kFloat32, {1, 1, 1, 5});
  CHECK(error_of(k::linear_interp(cpu(), iota({1, 1, 1, 3}), nullptr, {}, nullptr, "NCHW", -1, -1, 5, {}, "linear",
                                  true, 0, &o4))
            .find("must be 3-D") != std::string::npos);
}

TEST_CASE("broadcast_tensors: every input to the shape of all of them, and dims that do not broadcast") {
  const Tensor a = iota({2, 1}), b = f32({3}, {7, 8, 9}), c = f32({}, {5});
  const Tensor* ins[] = {&a, &b, &c};
  Tensor o0, o1, o2;
  Tensor* outs[] = {&o0, &o1, &o2};
  REQUIRE(m::BroadcastTensorsInferMeta(TensorList{ins, 3}, MutableTensorList{outs, 3}).ok());
  for (Tensor* o : outs) {
    CHECK(dims_of(*o) == GnDims{2, 3});
    *o = empty(DataType::kFloat32, dims_of(*o));
  }
  REQUIRE(k::broadcast_tensors(cpu(), TensorList{ins, 3}, MutableTensorList{outs, 3}).ok());
  check_close<float>(o0, {0, 0, 0, 1, 1, 1}, 0);
  check_close<float>(o1, {7, 8, 9, 7, 8, 9}, 0);
  check_close<float>(o2, {5, 5, 5, 5, 5, 5}, 0);
  const Tensor d = iota({2, 4});
  const Tensor* bad[] = {&b, &d};
  const std::string error = error_of(m::BroadcastTensorsInferMeta(TensorList{bad, 2}, MutableTensorList{outs, 2}));
  CHECK(error.find("does not broadcast") != std::string::npos);
}

namespace {

float sig(float a) { return 1.f / (1.f + std::exp(-a)); }

/// rnn over one batch row with hidden size 1: the outputs [out..., h..., c...] and the status.
struct RnnRun {
  Status status;
  std::vector<float> out, h, c;
};

RnnRun run_rnn(const std::string& mode, const Tensor& x, std::vector<Tensor> pre, std::vector<Tensor> weights,
               const Tensor* lengths = nullptr, bool is_test = true, float dropout = 0.f, int layers = 1,
               bool bidirec = false) {
  std::vector<const Tensor*> p, w;
  for (const Tensor& t : pre) p.push_back(&t);
  for (const Tensor& t : weights) w.push_back(&t);
  Tensor out, dropout_state, reserve;
  const Tensor state_in = make<uint8_t>(DataType::kUInt8, {}, {1});  // the layer's dropout state (a 0-D parameter)
  std::vector<Tensor> states(pre.size());
  std::vector<Tensor*> s;
  for (Tensor& t : states) s.push_back(&t);
  const TensorList pl{p.data(), p.size()}, wl{w.data(), w.size()};
  const MutableTensorList sl{s.data(), s.size()};
  RnnRun r;
  r.status = m::RnnInferMeta(x, pl, wl, lengths, state_in, dropout, bidirec, 1, 1, layers, mode, 0, is_test,
                             &out, &dropout_state, sl, &reserve);
  if (!r.status.ok()) return r;
  out = empty(out.dtype, dims_of(out));
  for (Tensor& t : states) t = empty(t.dtype, dims_of(t));
  CHECK(dims_of(dropout_state) == GnDims{0});  // empty, as Paddle's predictor returns it
  CHECK(dropout_state.dtype == DataType::kUInt8);
  CHECK(reserve.dtype == DataType::kFloat32);
  dropout_state = empty(dropout_state.dtype, dims_of(dropout_state));
  reserve = empty(reserve.dtype, {});
  r.status = k::rnn(cpu(), x, pl, wl, lengths, state_in, dropout, bidirec, 1, 1, layers, mode, 0, is_test, &out,
                    &dropout_state, sl, &reserve);
  if (!r.status.ok()) return r;
  r.out = values<float>(out);
  r.h = values<float>(states[0]);
  if (states.size() > 1) r.c = values<float>(states[1]);
  return r;
}

}  // namespace

TEST_CASE("rnn: RNN_TANH and RNN_RELU steps h = act(x W_ih + b_ih + b_hh + h W_hh), sequence_length masks") {
  const Tensor x = f32({2, 1, 1}, {1, -1});  // [time, batch, input]
  const std::vector<Tensor> w = {f32({1, 1}, {0.5f}), f32({1, 1}, {2}), f32({1}, {0.1f}), f32({1}, {0.2f})};
  RnnRun r = run_rnn("RNN_TANH", x, {f32({1, 1, 1}, {0.25f})}, w);
  REQUIRE(r.status.ok());
  const float h1 = std::tanh(0.5f + 0.3f + 2 * 0.25f), h2 = std::tanh(-0.5f + 0.3f + 2 * h1);
  CHECK(r.out[0] == Approx(h1));
  CHECK(r.out[1] == Approx(h2));
  CHECK(r.h[0] == Approx(h2));
  RnnRun relu = run_rnn("RNN_RELU", x, {f32({1, 1, 1}, {0})}, w);
  REQUIRE(relu.status.ok());
  CHECK(relu.out[0] == Approx(0.8f));
  CHECK(relu.out[1] == Approx(std::max(-0.2f + 1.6f, 0.f)));
  // A row of length 1: step 1 writes 0 and keeps the state of step 0.
  const Tensor one = i32({1}, {1});
  RnnRun masked = run_rnn("RNN_TANH", x, {f32({1, 1, 1}, {0.25f})}, w, &one);
  REQUIRE(masked.status.ok());
  CHECK(masked.out[1] == 0.f);
  CHECK(masked.h[0] == Approx(h1));
  const Tensor too_long = i32({1}, {3});
  CHECK(error_of(run_rnn("RNN_TANH", x, {f32({1, 1, 1}, {0})}, w, &too_long).status).find("outside [0, 2]") !=
        std::string::npos);
}

TEST_CASE("rnn: LSTM gates in Paddle's order i, f, c, o; GRU's reset gate scales h W_hc + b_hc") {
  const Tensor x = f32({1, 1, 1}, {0});
  // With x = 0 and W_hh = 0 the gates are the biases: b_ih + b_hh = (i, f, c, o) = (0.3, -0.2, 0.7, 1.1).
  const std::vector<Tensor> lstm_w = {f32({4, 1}, {0, 0, 0, 0}), f32({4, 1}, {0, 0, 0, 0}),
                                      f32({4}, {0.1f, -0.1f, 0.5f, 1.0f}), f32({4}, {0.2f, -0.1f, 0.2f, 0.1f})};
  RnnRun l = run_rnn("LSTM", x, {f32({1, 1, 1}, {0.4f}), f32({1, 1, 1}, {-0.6f})}, lstm_w);
  REQUIRE(l.status.ok());
  const float c = std::tanh(0.7f) * sig(0.3f) + -0.6f * sig(-0.2f);
  CHECK(l.c[0] == Approx(c));
  CHECK(l.out[0] == Approx(sig(1.1f) * std::tanh(c)));
  CHECK(l.h[0] == Approx(l.out[0]));
  // GRU gates (r, u, c): r = sig(0.2 + 0.5 h0), u = sig(-0.3 + 0.1 h0), n = tanh(0.4 + (2 h0 + 0.6) r).
  const std::vector<Tensor> gru_w = {f32({3, 1}, {0, 0, 0}), f32({3, 1}, {0.5f, 0.1f, 2}),
                                     f32({3}, {0.1f, -0.1f, 0.4f}), f32({3}, {0.1f, -0.2f, 0.6f})};
  const float h0 = 0.7f;
  RnnRun g = run_rnn("GRU", x, {f32({1, 1, 1}, {h0})}, gru_w);
  REQUIRE(g.status.ok());
  const float r = sig(0.2f + 0.5f * h0), u = sig(-0.3f + 0.1f * h0), n = std::tanh(0.4f + (2 * h0 + 0.6f) * r);
  CHECK(g.out[0] == Approx((1 - u) * n + u * h0));
}

TEST_CASE("rnn: the infer-meta's errors") {
  const Tensor x = f32({2, 1, 1}, {1, -1});
  const std::vector<Tensor> w = {f32({1, 1}, {0.5f}), f32({1, 1}, {2}), f32({1}, {0.1f}), f32({1}, {0.2f})};
  CHECK(error_of(run_rnn("LSTM", x, {f32({1, 1, 1}, {0})}, w).status).find("takes 2 initial states") !=
        std::string::npos);
  CHECK(error_of(run_rnn("RNN_TANH", x, {f32({1, 1, 1}, {0})}, {w[0], w[1]}).status).find("must hold 4 tensors") !=
        std::string::npos);
  CHECK(error_of(run_rnn("GRU", x, {f32({1, 1, 1}, {0})}, w).status).find("must be [3, 1]") != std::string::npos);
  CHECK(error_of(run_rnn("CELL", x, {f32({1, 1, 1}, {0})}, w).status).find("mode must be") != std::string::npos);
  // Two layers (8 weights) in training with dropout between them: Paddle draws the mask.
  std::vector<Tensor> w2 = {w[0], w[1], w[0], w[1], w[2], w[3], w[2], w[3]};
  CHECK(error_of(run_rnn("RNN_TANH", x, {f32({2, 1, 1}, {0, 0})}, w2, nullptr, false, 0.5f, 2).status)
            .find("only inference is supported") != std::string::npos);
  CHECK(run_rnn("RNN_TANH", x, {f32({2, 1, 1}, {0, 0})}, w2, nullptr, false, 0.f, 2).status.ok());
}
