// Paddle's rnn op on the GPU (kforge compile --target cuda): LSTM, GRU, RNN_TANH and RNN_RELU, layers and
// directions, sequence_length, computed as kernels/rnn.cc computes them on the CPU. For each layer:
//   1. projection: gates[d][t, b, :] = in[t, b, :] W_ih^T + b_ih + b_hh (GRU: b_hh's candidate part left out),
//      one thread per element, every step at once (the layer's input is not read again after it);
//   2. a launch per step (the backward direction walks the steps from the last), a thread per direction, batch row
//      and hidden unit: h W_hh^T, the cell, h' into the other h of a pair (the state output and one in the scratch)
//      and out, c in place in the state output; a row past its sequence_length keeps h and c and writes 0.
// Every layer writes `out` [steps, batch, directions * hidden], which the next layer's projection reads; the final
// h (and c) are the state outputs, which start as copies of the initial states. Plain grid-stride kernels: no
// shared memory, no block synchronisation. CUDA runtime only.
#ifndef KFORGE_RNN_CUH_
#define KFORGE_RNN_CUH_

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace kforge::cuda_rnn {

enum class Cell : int { kLstm = 0, kGru = 1, kTanh = 2, kRelu = 3 };

__host__ __device__ inline int64_t gate_count(Cell cell) {
  return cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1;
}

/// The scratch elements (of the element type) a call needs: a layer's gates of every step, and one h of each row and
/// direction (the steps alternate between it and the state output).
inline int64_t rnn_scratch_elements(Cell cell, int64_t steps, int64_t batch, int64_t hidden, int dirs) {
  return dirs * steps * batch * gate_count(cell) * hidden + dirs * batch * hidden;
}

/// One layer and direction's weights (Paddle's weight list: W_ih [G*H, in], W_hh [G*H, H], b_ih, b_hh [G*H]).
template <typename T>
struct Weights {
  const T* w_ih;
  const T* w_hh;
  const T* b_ih;
  const T* b_hh;
};

struct RnnShape {
  Cell cell;
  int64_t steps, batch, input, hidden;
  int layers, dirs;
};

// exp and tanh in the element type (float or double overloads).
template <typename T>
__device__ inline T rnn_exp(T a) {
  using std::exp;
  return exp(a);
}

template <typename T>
__device__ inline T rnn_tanh(T a) {
  using std::tanh;
  return tanh(a);
}

template <typename T>
__device__ inline T rnn_sigmoid(T a) {
  return static_cast<T>(1) / (static_cast<T>(1) + rnn_exp<T>(-a));
}

// Paddle's LSTM tanh (TanhV2): 2 / (1 + e^(-2a)) - 1.
template <typename T>
__device__ inline T rnn_tanh_v2(T a) {
  return static_cast<T>(2) / (static_cast<T>(1) + rnn_exp<T>(static_cast<T>(-2) * a)) - static_cast<T>(1);
}

/// One layer's launch arguments (a struct, so that each launch is one short statement).
template <typename T>
struct LayerArgs {
  Weights<T> w0, w1;  // direction 0 and 1 (w1 = w0 with one direction)
  Cell cell;
  int64_t steps, batch, hidden;
  int dirs;
  const int32_t* len32;
  const int64_t* len64;
  T* gates;  // [dirs, steps, batch, gates * hidden]
  T* out;    // [steps, batch, dirs * hidden]
  T* c;      // the layer's c state (LSTM), else null
};

template <typename T>
__global__ void __launch_bounds__(256) rnn_projection_kernel(LayerArgs<T> a, const T* __restrict__ in, int64_t width) {
  const Weights<T>& w0 = a.w0;
  const Weights<T>& w1 = a.w1;
  const Cell cell = a.cell;
  const int64_t rows = a.steps * a.batch, hidden = a.hidden;
  const int dirs = a.dirs;
  T* __restrict__ gates = a.gates;
  const int64_t g = gate_count(cell) * hidden, per_dir = rows * g, n = dirs * per_dir;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = e / per_dir, r = (e % per_dir) / g, q = e % g;
    const Weights<T>& w = d == 0 ? w0 : w1;
    const T* x = in + r * width;
    const T* wr = w.w_ih + q * width;
    T acc = 0;
    for (int64_t k = 0; k < width; ++k) acc += x[k] * wr[k];
    acc = acc + w.b_ih[q];
    // GRU: b_hh's candidate part is added inside the reset gate's product (the recurrence).
    if (cell != Cell::kGru || q < 2 * hidden) acc = acc + w.b_hh[q];
    gates[e] = acc;
  }
}

// One step of every batch row and direction of a layer: a thread per (direction, row, hidden unit) reads h (every
// unit of its row) and writes h_next, so the steps are separate launches; c is updated in place (unit j is one
// thread's alone).
template <typename T>
__global__ void __launch_bounds__(256) rnn_step_kernel(LayerArgs<T> a, int64_t s, const T* __restrict__ h,
                                                       T* __restrict__ h_next) {
  const Weights<T>& w0 = a.w0;
  const Weights<T>& w1 = a.w1;
  const Cell cell = a.cell;
  const int64_t steps = a.steps, batch = a.batch, hidden = a.hidden;
  const int dirs = a.dirs;
  const int32_t* len32 = a.len32;
  const int64_t* len64 = a.len64;
  const T* __restrict__ gates = a.gates;
  T* c = a.c;
  T* out = a.out;
  const int64_t n = dirs * batch * hidden, g = gate_count(cell) * hidden;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = e / (batch * hidden), b = (e / hidden) % batch, j = e % hidden;
    const Weights<T>& w = d == 0 ? w0 : w1;
    const int64_t t = d == 1 ? steps - 1 - s : s;
    const int64_t length = len32 != nullptr ? len32[b] : len64 != nullptr ? len64[b] : steps;
    const bool live = t < length;
    const T* gr = gates + ((d * steps + t) * batch + b) * g;
    const T* hr = h + (d * batch + b) * hidden;
    T hp[4] = {0, 0, 0, 0};
    for (int64_t q = 0; q < gate_count(cell); ++q) {
      const T* wr = w.w_hh + (q * hidden + j) * hidden;
      T acc = 0;
      for (int64_t k = 0; k < hidden; ++k) acc += hr[k] * wr[k];
      hp[q] = acc;
    }
    T value;
    if (cell == Cell::kLstm) {
      T& cj = c[(d * batch + b) * hidden + j];
      const T gi = rnn_sigmoid<T>(gr[j] + hp[0]);
      const T gf = rnn_sigmoid<T>(gr[hidden + j] + hp[1]);
      const T gc = rnn_tanh_v2<T>(gr[2 * hidden + j] + hp[2]);
      const T c_new = gc * gi + cj * gf;
      const T go = rnn_sigmoid<T>(gr[3 * hidden + j] + hp[3]);
      value = go * rnn_tanh_v2<T>(c_new);
      if (live) cj = c_new;
    } else if (cell == Cell::kGru) {
      const T r = rnn_sigmoid<T>(gr[j] + hp[0]);
      const T u = rnn_sigmoid<T>(gr[hidden + j] + hp[1]);
      const T cand = rnn_tanh<T>(gr[2 * hidden + j] + (hp[2] + w.b_hh[2 * hidden + j]) * r);
      value = (static_cast<T>(1) - u) * cand + u * hr[j];
    } else if (cell == Cell::kTanh) {
      value = rnn_tanh<T>(gr[j] + hp[0]);
    } else {
      const T pre = gr[j] + hp[0];
      value = pre > static_cast<T>(0) ? pre : static_cast<T>(0);
    }
    h_next[e] = live ? value : hr[j];
    out[(t * batch + b) * dirs * hidden + d * hidden + j] = live ? value : static_cast<T>(0);
  }
}

inline unsigned rnn_blocks(int64_t n) {
  const int64_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks < 65535 * 16 ? blocks : 65535 * 16);
}

/// Runs the op. weights: Paddle's weight list (4 * layers * dirs device pointers, a host array); h0 / c0 and h / c:
/// [layers * dirs, batch, hidden] (c0 and c null but for LSTM); len32 / len64: the sequence lengths (at most one;
/// both null when every row runs every step); scratch: rnn_scratch_elements elements.
template <typename T>
cudaError_t rnn(const RnnShape& a, const T* x, const T* h0, const T* c0, const T* const* weights,
                const int32_t* len32, const int64_t* len64, T* out, T* h, T* c, T* scratch, cudaStream_t stream) {
  const int64_t layer_plane = a.dirs * a.batch * a.hidden, plane = a.layers * layer_plane;
  const size_t state_bytes = static_cast<size_t>(plane) * sizeof(T);
  if (plane > 0) {
    if (cudaError_t e = cudaMemcpyAsync(h, h0, state_bytes, cudaMemcpyDeviceToDevice, stream); e != cudaSuccess) {
      return e;
    }
    if (a.cell == Cell::kLstm) {
      if (cudaError_t e = cudaMemcpyAsync(c, c0, state_bytes, cudaMemcpyDeviceToDevice, stream); e != cudaSuccess) {
        return e;
      }
    }
  }
  if (a.steps <= 0 || layer_plane <= 0) return cudaSuccess;
  const size_t cells = static_cast<size_t>(a.layers) * a.dirs;
  const int64_t rows = a.steps * a.batch, g = gate_count(a.cell) * a.hidden;
  T* gates = scratch;
  T* spare = scratch + a.dirs * rows * g;  // the other h of the step's pair
  for (int l = 0; l < a.layers; ++l) {
    Weights<T> w[2] = {};
    for (int d = 0; d < a.dirs; ++d) {
      const size_t k = static_cast<size_t>(l) * a.dirs + d;
      w[d] = {weights[2 * k], weights[2 * k + 1], weights[2 * cells + 2 * k], weights[2 * cells + 2 * k + 1]};
    }
    if (a.dirs == 1) w[1] = w[0];
    // Layer l + 1 reads layer l's out: every read of it is in this projection, before the steps overwrite it.
    const T* in = l == 0 ? x : out;
    const int64_t width = l == 0 ? a.input : a.dirs * a.hidden;
    T* state_h = h + l * layer_plane;
    T* state_c = a.cell == Cell::kLstm ? c + l * layer_plane : nullptr;
    const LayerArgs<T> la{w[0], w[1], a.cell, a.steps, a.batch, a.hidden, a.dirs, len32, len64, gates, out, state_c};
    const unsigned projection = rnn_blocks(a.dirs * rows * g);
    rnn_projection_kernel<T><<<projection, 256, 0, stream>>>(la, in, width);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    T* cur = state_h;
    T* next = spare;
    const unsigned blocks = rnn_blocks(layer_plane);
    for (int64_t s = 0; s < a.steps; ++s) {
      rnn_step_kernel<T><<<blocks, 256, 0, stream>>>(la, s, cur, next);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
      T* done = cur;
      cur = next;
      next = done;
    }
    if (cur != state_h) {
      const size_t bytes = static_cast<size_t>(layer_plane) * sizeof(T);
      if (cudaError_t e = cudaMemcpyAsync(state_h, cur, bytes, cudaMemcpyDeviceToDevice, stream); e != cudaSuccess) {
        return e;
      }
    }
  }
  return cudaSuccess;
}

}  // namespace kforge::cuda_rnn

#endif  // KFORGE_RNN_CUH_
