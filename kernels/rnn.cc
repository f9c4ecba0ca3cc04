// Paddle's rnn op on the CPU (kforge_kernels.h): LSTM, GRU, RNN_TANH and RNN_RELU over x [time, batch, input],
// computed as Paddle's CPU kernel (phi/kernels/cpu/rnn_kernel.cc) computes them at inference:
//   gates = x W_ih^T + b_ih + b_hh for every step at once (GRU: b_hh's candidate part left out), then per step
//   gates += h W_hh^T and the cell:
//   LSTM (gates i, f, c, o):  c' = tanh(g_c) sigmoid(g_i) + c sigmoid(g_f);  h' = sigmoid(g_o) tanh(c')
//   GRU  (gates r, u, c):     r = sigmoid(g_r); u = sigmoid(g_u); n = tanh(g_c + (h W_hc^T + b_hc) r);
//                             h' = (1 - u) n + u h
//   RNN_TANH / RNN_RELU:      h' = act(g)
// (LSTM's activations are Paddle's sigmoid_v2 / tanh_v2: 1 / (1 + e^-x) and 2 / (1 + e^-2x) - 1.) The backward
// direction runs the steps from the last to the first and writes the second half of out's last dim. With
// sequence_length, step t of row b past the row's length keeps the state and writes 0 (Paddle's mask). Layer l + 1
// reads layer l's output; dropout between layers is a training op that draws Paddle's own mask, refused by the
// infer-meta. dropout_state_out is empty (uint8 [0], what Paddle's predictor returns), the reserve 0.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge {

namespace {

enum class CellKind { kLstm, kGru, kTanh, kRelu, kUnknown };

CellKind cell_kind(const std::string& mode) {
  if (mode == "LSTM") return CellKind::kLstm;
  if (mode == "GRU") return CellKind::kGru;
  if (mode == "RNN_TANH") return CellKind::kTanh;
  if (mode == "RNN_RELU") return CellKind::kRelu;
  return CellKind::kUnknown;
}

int64_t gate_count(CellKind kind) {
  switch (kind) {
    case CellKind::kLstm: return 4;
    case CellKind::kGru: return 3;
    default: return 1;
  }
}

Status set_meta(Tensor* t, DataType dtype, const std::vector<int64_t>& dims, const char* op, const char* name) {
  if (t == nullptr) return Status::Error(op, ": output ", name, " is null");
  t->dtype = dtype;
  return t->set_dims(dims);
}

bool dims_are(const Tensor& t, std::initializer_list<int64_t> dims) {
  if (t.ndim != static_cast<int32_t>(dims.size())) return false;
  int32_t i = 0;
  for (int64_t d : dims) {
    if (t.dims[i++] != d) return false;
  }
  return true;
}

}  // namespace

namespace meta {

Status RnnInferMeta(const Tensor& x, TensorList pre_state, TensorList weight_list, const Tensor* sequence_length,
                    const Tensor& dropout_state_in, float dropout_prob, bool is_bidirec, int input_size,
                    int hidden_size, int num_layers, const std::string& mode, int seed, bool is_test, Tensor* out,
                    Tensor* dropout_state_out, MutableTensorList state, Tensor* reserve) {
  static constexpr const char* kOp = "RnnInferMeta";
  (void)input_size;  // Paddle's kernel reads the weights' dims, not this attribute
  (void)seed;
  const CellKind kind = cell_kind(mode);
  if (kind == CellKind::kUnknown) {
    return Status::Error(kOp, ": mode must be LSTM, GRU, RNN_TANH or RNN_RELU, got \"", mode, "\"");
  }
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64) {
    return Status::Error(kOp, ": x must be float32 or float64, got ", x.dtype);
  }
  if (x.ndim != 3) return Status::Error(kOp, ": x must be 3-D [time, batch, input], got ", x.dims_string());
  if (num_layers < 1 || hidden_size < 1) {
    return Status::Error(kOp, ": num_layers (", num_layers, ") and hidden_size (", hidden_size, ") must be positive");
  }
  if (!is_test && dropout_prob > 0.0f && num_layers > 1) {
    return Status::Error(kOp, ": a training rnn (is_test false) with dropout_prob ", dropout_prob,
                         " between its layers draws Paddle's own random mask; only inference is supported");
  }
  const int64_t dirs = is_bidirec ? 2 : 1, h = hidden_size, g = gate_count(kind) * h, batch = x.dims[1];
  const size_t states = kind == CellKind::kLstm ? 2 : 1;
  if (pre_state.size != states) {
    return Status::Error(kOp, ": ", mode, " takes ", states, " initial states, got ", pre_state.size);
  }
  for (size_t i = 0; i < states; ++i) {
    if (pre_state[i].dtype != x.dtype) return Status::Error(kOp, ": pre_state ", i, " is ", pre_state[i].dtype);
    if (!dims_are(pre_state[i], {num_layers * dirs, batch, h})) {
      return Status::Error(kOp, ": pre_state ", i, " must be [", num_layers * dirs, ", ", batch, ", ", h, "], got ",
                           pre_state[i].dims_string());
    }
  }
  const size_t cells = static_cast<size_t>(num_layers * dirs);
  if (weight_list.size != 4 * cells) {
    return Status::Error(kOp, ": weight_list must hold ", 4 * cells, " tensors (W_ih, W_hh per layer and "
                         "direction, then b_ih, b_hh), got ", weight_list.size);
  }
  for (size_t k = 0; k < cells; ++k) {
    const int64_t in = k < static_cast<size_t>(dirs) ? x.dims[2] : dirs * h;
    const Tensor* w[4] = {&weight_list[2 * k], &weight_list[2 * k + 1], &weight_list[2 * cells + 2 * k],
                          &weight_list[2 * cells + 2 * k + 1]};
    const bool ok = dims_are(*w[0], {g, in}) && dims_are(*w[1], {g, h}) && dims_are(*w[2], {g}) &&
                    dims_are(*w[3], {g});
    if (!ok) {
      return Status::Error(kOp, ": the weights of layer ", k / dirs, " direction ", k % dirs, " must be [", g, ", ",
                           in, "], [", g, ", ", h, "], [", g, "], [", g, "], got ", w[0]->dims_string(), ", ",
                           w[1]->dims_string(), ", ", w[2]->dims_string(), ", ", w[3]->dims_string());
    }
    for (const Tensor* t : w) {
      if (t->dtype != x.dtype) return Status::Error(kOp, ": a weight is ", t->dtype, " where x is ", x.dtype);
    }
  }
  if (sequence_length != nullptr) {
    if (sequence_length->dtype != DataType::kInt32 && sequence_length->dtype != DataType::kInt64) {
      return Status::Error(kOp, ": sequence_length must be int32 or int64, got ", sequence_length->dtype);
    }
    if (!dims_are(*sequence_length, {batch})) {
      return Status::Error(kOp, ": sequence_length must be [", batch, "] (the batch), got ",
                           sequence_length->dims_string());
    }
  }
  if (state.size != states) return Status::Error(kOp, ": ", states, " states but ", state.size, " outputs");
  KFORGE_RETURN_IF_ERROR(set_meta(out, x.dtype, {x.dims[0], batch, dirs * h}, kOp, "out"));
  for (size_t i = 0; i < states; ++i) {
    KFORGE_RETURN_IF_ERROR(set_meta(state.items[i], x.dtype, pre_state[i].shape(), kOp, "state"));
  }
  // Paddle's infer-meta leaves these two unset (its programs declare them float32 0-D). At inference its kernel never
  // writes dropout_state_out: the predictor returns it empty, uint8 [0] (GraphNet's PP-OCRv3_mobile_rec/subgraph_4
  // returns it).
  (void)dropout_state_in;
  if (dropout_state_out != nullptr) {
    KFORGE_RETURN_IF_ERROR(set_meta(dropout_state_out, DataType::kUInt8, {0}, kOp, "dropout_state_out"));
  }
  if (reserve != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(reserve, DataType::kFloat32, {}, kOp, "reserve"));
  return Status::OK();
}

}  // namespace meta

namespace kernels {

namespace {

template <typename T>
T sigmoid(T a) {
  return static_cast<T>(1) / (static_cast<T>(1) + std::exp(-a));
}

// Paddle's TanhV2 (LSTM): 2 / (1 + e^(-2a)) - 1, the quotient in double as Paddle's literals make it.
template <typename T>
T tanh_v2(T a) {
  const auto tmp = static_cast<T>(-2.0 * a);
  return static_cast<T>(2.0 / (1.0 + std::exp(tmp)) - 1.0);
}

Tensor view(DataType dtype, std::initializer_list<int64_t> dims, const void* data) {
  Tensor t;
  t.dtype = dtype;
  const std::vector<int64_t> d(dims);
  (void)t.set_dims(d);
  t.data = const_cast<void*>(data);
  return t;
}

// c[m, n] = a[m, k] w[n, k]^T through the library's matmul (oneDNN for float32 where built with it).
Status gemm_nt(const KernelContext& ctx, DataType dtype, const void* a, int64_t m, int64_t k, const void* w,
               int64_t n, void* c) {
  if (m == 0 || n == 0) return Status::OK();
  const Tensor ta = view(dtype, {m, k}, a), tw = view(dtype, {n, k}, w);
  Tensor tc = view(dtype, {m, n}, c);
  return matmul(ctx, ta, tw, false, true, &tc);
}

struct RnnArgs {
  CellKind kind;
  int64_t steps, batch, hidden, dirs, layers;
  std::vector<int64_t> lengths;  // empty: every row runs every step
};

// One layer, one direction: reads `in` [steps, batch, in_width], writes its half of `out` [steps, batch, dirs *
// hidden], and the final h (and c) into h / c, which hold the initial state on entry.
template <typename T>
Status run_direction(const KernelContext& ctx, const RnnArgs& a, const T* in, int64_t in_width, const T* w_ih,
                     const T* w_hh, const T* b_ih, const T* b_hh, bool reverse, int64_t column, T* out, T* h, T* c) {
  const DataType dtype = ctx.dtype;
  const int64_t hs = a.hidden, g = gate_count(a.kind) * hs, rows = a.steps * a.batch;
  const int64_t out_width = a.dirs * hs;
  std::vector<T> gates(static_cast<size_t>(rows * g)), hp(static_cast<size_t>(a.batch * g));
  KFORGE_RETURN_IF_ERROR(gemm_nt(ctx, dtype, in, rows, in_width, w_ih, g, gates.data()));
  for (int64_t r = 0; r < rows; ++r) {
    T* row = gates.data() + r * g;
    for (int64_t j = 0; j < g; ++j) {
      // GRU: b_hh's candidate part goes inside the reset gate's product, not here.
      const bool hh = a.kind != CellKind::kGru || j < 2 * hs;
      row[j] = row[j] + b_ih[j];
      if (hh) row[j] = row[j] + b_hh[j];
    }
  }
  for (int64_t s = 0; s < a.steps; ++s) {
    const int64_t t = reverse ? a.steps - 1 - s : s;
    KFORGE_RETURN_IF_ERROR(gemm_nt(ctx, dtype, h, a.batch, hs, w_hh, g, hp.data()));
    for (int64_t b = 0; b < a.batch; ++b) {
      const bool live = a.lengths.empty() || t < a.lengths[static_cast<size_t>(b)];
      T* gr = gates.data() + (t * a.batch + b) * g;
      const T* hr = hp.data() + b * g;
      T* hb = h + b * hs;
      T* cb = c == nullptr ? nullptr : c + b * hs;
      T* ob = out + (t * a.batch + b) * out_width + column;
      for (int64_t j = 0; j < hs; ++j) {
        T h_new, c_new = 0;
        switch (a.kind) {
          case CellKind::kLstm: {
            const T gi = sigmoid(static_cast<T>(gr[j] + hr[j]));
            const T gf = sigmoid(static_cast<T>(gr[hs + j] + hr[hs + j]));
            const T gc = tanh_v2(static_cast<T>(gr[2 * hs + j] + hr[2 * hs + j]));
            c_new = gc * gi + cb[j] * gf;
            const T go = sigmoid(static_cast<T>(gr[3 * hs + j] + hr[3 * hs + j]));
            h_new = go * tanh_v2(c_new);
            break;
          }
          case CellKind::kGru: {
            const T gr_ = sigmoid(static_cast<T>(gr[j] + hr[j]));
            const T gu = sigmoid(static_cast<T>(gr[hs + j] + hr[hs + j]));
            const T reset = (hr[2 * hs + j] + b_hh[2 * hs + j]) * gr_;
            const T n = std::tanh(static_cast<T>(gr[2 * hs + j] + reset));
            h_new = (static_cast<T>(1) - gu) * n + gu * hb[j];
            break;
          }
          case CellKind::kTanh: h_new = std::tanh(static_cast<T>(gr[j] + hr[j])); break;
          default: h_new = std::max(static_cast<T>(gr[j] + hr[j]), static_cast<T>(0)); break;
        }
        ob[j] = live ? h_new : static_cast<T>(0);
        if (live) {
          hb[j] = h_new;
          if (cb != nullptr) cb[j] = c_new;
        }
      }
    }
  }
  return Status::OK();
}

template <typename T>
Status run_rnn(const KernelContext& ctx, const RnnArgs& a, const Tensor& x, TensorList weights, TensorList pre_state,
               Tensor* out, MutableTensorList state) {
  const int64_t hs = a.hidden, width = a.dirs * hs, plane = a.batch * hs;
  const size_t cells = static_cast<size_t>(a.layers * a.dirs);
  T* h_all = state.items[0]->data_as<T>();
  T* c_all = a.kind == CellKind::kLstm ? state.items[1]->data_as<T>() : nullptr;
  std::memcpy(h_all, pre_state[0].data, pre_state[0].bytes());
  if (c_all != nullptr) std::memcpy(c_all, pre_state[1].data, pre_state[1].bytes());
  // Layers ping-pong between two scratch buffers; the last writes out.
  std::vector<T> buffers[2];
  const T* in = x.data_as<T>();
  int64_t in_width = x.dims[2];
  for (int64_t l = 0; l < a.layers; ++l) {
    T* dst = out->data_as<T>();
    if (l + 1 < a.layers) {
      std::vector<T>& buf = buffers[l % 2];
      buf.assign(static_cast<size_t>(a.steps * a.batch * width), static_cast<T>(0));
      dst = buf.data();
    }
    for (int64_t d = 0; d < a.dirs; ++d) {
      const size_t k = static_cast<size_t>(l * a.dirs + d);
      T* c = c_all == nullptr ? nullptr : c_all + static_cast<int64_t>(k) * plane;
      KFORGE_RETURN_IF_ERROR(run_direction<T>(
          ctx, a, in, in_width, weights[2 * k].data_as<T>(), weights[2 * k + 1].data_as<T>(),
          weights[2 * cells + 2 * k].data_as<T>(), weights[2 * cells + 2 * k + 1].data_as<T>(), d == 1, d * hs, dst,
          h_all + static_cast<int64_t>(k) * plane, c));
    }
    in = dst;
    in_width = width;
  }
  return Status::OK();
}

}  // namespace

Status rnn(const KernelContext& ctx, const Tensor& x, TensorList pre_state, TensorList weight_list,
           const Tensor* sequence_length, const Tensor& dropout_state_in, float dropout_prob, bool is_bidirec,
           int input_size, int hidden_size, int num_layers, const std::string& mode, int seed, bool is_test,
           Tensor* out, Tensor* dropout_state_out, MutableTensorList state, Tensor* reserve) {
  static constexpr const char* kOp = "rnn";
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  std::vector<Tensor> expected(state.size);
  std::vector<Tensor*> expected_ptrs;
  for (Tensor& t : expected) expected_ptrs.push_back(&t);
  Tensor expected_out, expected_dropout, expected_reserve;
  KFORGE_RETURN_IF_ERROR(meta::RnnInferMeta(x, pre_state, weight_list, sequence_length, dropout_state_in,
                                            dropout_prob, is_bidirec, input_size, hidden_size, num_layers, mode, seed,
                                            is_test, &expected_out, &expected_dropout,
                                            {expected_ptrs.data(), expected_ptrs.size()}, &expected_reserve));
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, expected_out, kOp));
  if (out->dtype != x.dtype) return Status::Error(kOp, ": out is ", out->dtype, " where x is ", x.dtype);
  for (size_t i = 0; i < state.size; ++i) {
    KFORGE_RETURN_IF_ERROR(util::require_output(state.items[i], kOp, "state"));
    KFORGE_RETURN_IF_ERROR(util::require_dims(*state.items[i], expected[i], kOp, "state"));
    if (state.items[i]->dtype != x.dtype) return Status::Error(kOp, ": a state is ", state.items[i]->dtype);
  }
  RnnArgs a{cell_kind(mode), x.dims[0], x.dims[1], hidden_size, is_bidirec ? 2 : 1, num_layers, {}};
  if (sequence_length != nullptr) {
    for (int64_t b = 0; b < a.batch; ++b) {
      const int64_t len = sequence_length->dtype == DataType::kInt64 ? sequence_length->data_as<int64_t>()[b]
                                                                     : sequence_length->data_as<int32_t>()[b];
      if (len < 0 || len > a.steps) {
        return Status::Error(kOp, ": sequence_length[", b, "] is ", len, ", outside [0, ", a.steps, "]");
      }
      a.lengths.push_back(len);
    }
  }
  // dropout_state_out is empty; the reserve is the training kernel's, 0 here.
  if (dropout_state_out != nullptr) {
    KFORGE_RETURN_IF_ERROR(util::require_dims(*dropout_state_out, expected_dropout, kOp, "dropout_state_out"));
  }
  if (reserve != nullptr && reserve->data != nullptr) std::memset(reserve->data, 0, reserve->bytes());
  KernelContext typed = ctx;
  typed.dtype = x.dtype;
  return util::visit_float(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return run_rnn<T>(typed, a, x, weight_list, pre_state, out, state);
  });
}

}  // namespace kernels

}  // namespace kforge
