// kforge_python_cuda.h: the Python class of a CUDA class that `kforge compile --target cuda --python MODULE`
// generated, on the ModelTypeBase that the CPU class's type shares (kforge_python_model.h); the device memory,
// streams and DeviceTensor outputs it uses are kforge_python_device.h. Include it after kforge_python.h in the
// module's one translation unit; it needs Python.h and the CUDA runtime (cuda_runtime.h, libcudart).
//
// Streams (docs/python.md, "A compiled program on the GPU"):
//   - A model runs on its own stream, a non-blocking one it creates, or the stream set through `model.stream`
//     (a cudaStream_t as an int, e.g. torch.cuda.current_stream().cuda_stream; 1 and 2 are CUDA's legacy and
//     per-thread default streams, as in DLPack). run() only enqueues the work and returns.
//   - Inputs follow DLPack's stream protocol: a CUDA tensor is taken with x.__dlpack__(stream=<the model's
//     stream>), so its producer (torch, cupy) makes that stream wait for the work that writes it. The tensors
//     are kept alive until the stream has finished with them (released at a later run() or synchronize()).
//   - Outputs are DeviceTensors: out.__dlpack__(stream=S) makes S wait for the run that wrote `out` (an event),
//     so torch.from_dlpack(out) is ordered after the run without blocking the host; stream=-1 skips that.
//     A consumer's stream is also made to fence the model's stream when it lets go of the memory, so that the
//     next run(), which writes into outputs nobody refers to any more, cannot overtake the consumer's reads.
//   - Host inputs (numpy arrays, CPU tensors) are copied to the device on the model's stream.
#ifndef KFORGE_PYTHON_CUDA_H_
#define KFORGE_PYTHON_CUDA_H_

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kforge_cuda_runtime.h"
#include "kforge_params.h"
#include "kforge_python_args.h"
#include "kforge_python_device.h"
#include "kforge_python_inputs.h"
#include "kforge_python_model.h"

namespace kforge::python::cuda {

// The parameters of a generated class as the module declares them (the class binds device tensors by name).
struct ParameterTable {
  const ParameterSpec* specs = nullptr;
  const uint32_t* file_order = nullptr;  // the .pdiparams order: sorted by name
  size_t count = 0;
};

// A CUDA model object's state: the class, its device and stream, the outputs and events that runs take turns
// with, and what the stream may still read.
template <typename Model>
struct CudaModelState {
  static constexpr size_t kIn = Model::kNumInputs;
  static constexpr size_t kOut = Model::kNumOutputs;
  Model model;
  int device = 0;
  bool busy = false;
  std::shared_ptr<Stream> stream;
  std::shared_ptr<Event> done;               // recorded after the last run
  std::array<Tensor, kOut + 1> outputs;      // reused while nothing else refers to them
  // What the run before the last returned, set aside while the caller holds the last run's outputs, so that
  // `y = model.run(x)` in a loop allocates neither memory nor events: the two sets take turns.
  std::shared_ptr<Event> spare_done;
  std::array<Tensor, kOut + 1> spare_outputs;
  std::array<Tensor, kIn + 1> staging;       // device copies of host inputs
  std::vector<std::shared_ptr<void>> held;   // inputs the stream may still read, until `done`
  Event inputs_written;                      // orders the stream after a producer's (DLPack exchange API)
  void* fenced_producer = nullptr;           // the producer stream that event last fenced, in this run()
  bool fenced = false;
  cudaError_t recorded = cudaSuccess;        // recording `done` after the last launch
  Tensor weights;                            // one device allocation holding every parameter

  // The inputs the stream may still read are released only once it is done with them.
  ~CudaModelState() {
    if (stream == nullptr || held.empty()) return;
    Py_BEGIN_ALLOW_THREADS
    DeviceScope scope(device);
    static_cast<void>(cudaStreamSynchronize(stream->handle));
    Py_END_ALLOW_THREADS
  }
};

// The Python class of a CUDA class: Model(params=None), load_parameters(path), run(*inputs, **inputs_by_name)
// -> DeviceTensor or tuple, synchronize(), stream, device, input_names, output_names. The model belongs to the
// CUDA device current when it is created.
template <typename Model>
class CudaModelType : public ModelTypeBase<CudaModelType<Model>, Model, CudaModelState<Model>> {
  using Base = ModelTypeBase<CudaModelType<Model>, Model, CudaModelState<Model>>;
  using State = CudaModelState<Model>;
  using Base::kIn;
  using Base::kOut;
  friend Base;

 public:
  static bool add(PyObject* module, const char* qualified_name, const char* name, const char* doc,
                  ParameterTable parameters) {
    table() = parameters;
    static PyMethodDef methods[] = {
        {"load_parameters", Base::load_parameters, METH_O,
         "load_parameters(path): reads every parameter from Paddle's .pdiparams file and copies them to the "
         "device once."},
        {"run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Base::run)), METH_FASTCALL | METH_KEYWORDS,
         "run(*inputs) -> outputs: the inputs in input_names order or by name (CUDA tensors with __dlpack__ "
         "zero-copy, host arrays copied to the device); the outputs as DeviceTensors, one object for one output, a "
         "tuple for several. Enqueues on `stream` and returns; releases the GIL."},
        {"synchronize", synchronize, METH_NOARGS, "Waits until the model's stream has finished (releases the GIL)."},
        {nullptr, nullptr, 0, nullptr}};
    static PyGetSetDef getset[] = {
        {"stream", get_stream, set_stream,
         "The stream run() enqueues on, as an int (DLPack's numbering: 1 legacy default, 2 per-thread default, "
         "else a cudaStream_t); None when not yet created. Set an int (e.g. torch.cuda.current_stream()."
         "cuda_stream) to run on that stream, or None for a stream of the model's own.",
         nullptr},
        {"device", get_device, nullptr, "The CUDA device the model runs on (an int).", nullptr},
        {nullptr, nullptr, nullptr, nullptr, nullptr}};
    return Base::add_model_type(module, qualified_name, name, doc, methods, getset);
  }

 private:
  using Input = Tensor;

  static ParameterTable& table() {
    static ParameterTable t;
    return t;
  }

  static bool created(State& state) {
    const cudaError_t error = cudaGetDevice(&state.device);
    if (error != cudaSuccess) return cuda_failed("__init__", error, "cudaGetDevice");
    install_cuda_allocator();
    return true;
  }

  // Reads the file on the host (kforge_params.h: checked against the program's declarations), copies it to one
  // device allocation with one cudaMemcpy and binds each parameter to its place in it.
  static PyObject* load(State& state, const char* path) {
    const ParameterTable& params = table();
    std::vector<Tensor> host;
    Status status;
    Py_BEGIN_ALLOW_THREADS
    status = params::load_file(path, params.specs, params.file_order, params.count, &host);
    Py_END_ALLOW_THREADS
    if (!status.ok()) return raise_status("load_parameters", status);
    if (host.empty()) Py_RETURN_NONE;
    // load_file puts every tensor into one host allocation, in file order: copy its whole extent at once.
    const char* begin = static_cast<const char*>(host[0].data);
    const char* end = begin;
    for (const Tensor& t : host) {
      const char* data = static_cast<const char*>(t.data);
      if (data < begin) begin = data;
      if (data + t.bytes() > end) end = data + t.bytes();
    }
    Tensor weights;
    weights.dtype = DataType::kUInt8;
    weights.place = GPUPlace(static_cast<int8_t>(state.device));
    status = weights.set_dims({static_cast<int64_t>(end - begin)});
    cudaError_t error = cudaSuccess;
    Py_BEGIN_ALLOW_THREADS
    DeviceScope scope(state.device);
    if (status.ok()) status = weights.allocate();
    if (status.ok() && end != begin) error = cudaMemcpy(weights.data, begin, static_cast<size_t>(end - begin), cudaMemcpyHostToDevice);
    Py_END_ALLOW_THREADS
    if (!status.ok()) return raise_status("load_parameters", status);
    if (error != cudaSuccess) return raise_cuda("load_parameters", error, "copying the parameters to the device");
    for (size_t i = 0; i < params.count; ++i) {
      Tensor t = host[i];
      t.place = weights.place;
      t.data = static_cast<char*>(weights.data) + (static_cast<const char*>(host[i].data) - begin);
      t.holder = weights.holder;
      status = state.model.bind_parameter(params.specs[i].name, t);
      if (!status.ok()) return raise_status("load_parameters", status);
    }
    state.weights = std::move(weights);
    Py_RETURN_NONE;
  }

  // Creates the model's own stream when it has none yet.
  static bool ensure_stream(State& state) {
    if (state.stream != nullptr) return true;
    auto stream = std::make_shared<Stream>();
    stream->device = state.device;
    const cudaError_t error = cudaStreamCreateWithFlags(&stream->handle, cudaStreamNonBlocking);
    if (error != cudaSuccess) return cuda_failed("run", error, "cudaStreamCreateWithFlags");
    stream->owned = true;
    state.model.set_stream(stream->handle);
    state.stream = std::move(stream);
    return true;
  }

  static PyObject* get_stream(PyObject* self, void*) {
    State& state = Base::state_of(self);
    if (state.stream == nullptr) Py_RETURN_NONE;
    return stream_number(state.stream->handle);
  }

  static int set_stream(PyObject* self, PyObject* value, void*) {
    static const char* const kNames[] = {"stream", nullptr};
    static const bool kRequired[] = {true, false};
    static const Signature kSig{"stream", kNames, kRequired, 1};
    State& state = Base::state_of(self);
    if (value == nullptr) {
      PyErr_SetString(PyExc_AttributeError, "stream cannot be deleted (set None for the model's own)");
      return -1;
    }
    if (!Base::not_busy(state, "stream")) return -1;
    std::shared_ptr<Stream> next;
    if (value != Py_None) {
      cudaStream_t handle = nullptr;
      bool sync = true;
      if (!stream_of_number(value, Arg{&kSig, 0}, &handle, &sync)) return -1;
      if (!sync) {
        PyErr_SetString(PyExc_ValueError, "stream(): -1 is no stream");
        return -1;
      }
      next = std::make_shared<Stream>();
      next->handle = handle;
      next->device = state.device;
    }
    // The new stream starts after everything the old one was given; outputs of the old one are not reused (their
    // consumers fence the old stream).
    if (state.stream != nullptr && next != nullptr) {
      DeviceScope scope(state.device);
      const cudaError_t error = fence(state.stream->handle, next->handle);
      if (error != cudaSuccess) {
        raise_cuda("stream", error, "ordering the new stream after the old one");
        return -1;
      }
    } else if (state.stream != nullptr) {
      PyObject* done = synchronize(self, nullptr);
      if (done == nullptr) return -1;
      Py_DECREF(done);
    }
    for (Tensor& t : state.outputs) t = Tensor{};
    for (Tensor& t : state.spare_outputs) t = Tensor{};
    state.done.reset();
    state.spare_done.reset();
    // The class lets go of the old stream before it may be destroyed with state.stream (None: synchronised above).
    state.model.set_stream(next != nullptr ? next->handle : nullptr);
    state.stream = std::move(next);
    return 0;
  }

  static PyObject* get_device(PyObject* self, void*) { return PyLong_FromLong(Base::state_of(self).device); }

  static PyObject* synchronize(PyObject* self, PyObject*) {
    State& state = Base::state_of(self);
    if (state.stream == nullptr) Py_RETURN_NONE;
    cudaError_t error = cudaSuccess;
    Py_BEGIN_ALLOW_THREADS
    DeviceScope scope(state.device);
    error = cudaStreamSynchronize(state.stream->handle);
    Py_END_ALLOW_THREADS
    if (error != cudaSuccess) return raise_cuda("synchronize", error, "cudaStreamSynchronize");
    state.held.clear();
    Py_RETURN_NONE;
  }

  // One input on the device: a DeviceTensor or a CUDA DLPack tensor as it is, a host array copied to
  // staging memory on the model's stream. Keeps what the stream reads in `state.held`.
  static bool device_input(State& state, size_t i, PyObject* obj, const Arg& arg, Tensor* out) {
    cudaStream_t stream = state.stream->handle;
    if (is_device_tensor(obj)) {
      auto* t = reinterpret_cast<PyDeviceTensor*>(obj);
      if (t->ready != nullptr && (t->stream == nullptr || t->stream->handle != stream)) {
        const cudaError_t e = cudaStreamWaitEvent(stream, t->ready->handle, 0);
        if (e != cudaSuccess) return cuda_failed("run", e, "cudaStreamWaitEvent");
      }
      *out = t->tensor;
    } else {
      InputTensor in;
      if (!from_object(state, obj, arg, &in)) return false;
      *out = in.get();
    }
    if (out->place.backend == Backend::kGPU) {
      if (out->place.device != state.device) {
        return value_error(arg, "a tensor on cuda:" + std::to_string(out->place.device) + ", the model runs on cuda:" +
                                    std::to_string(state.device));
      }
      state.held.push_back(out->holder);
      return true;
    }
    // A host array: copied on the stream into staging memory the model keeps (reallocated when it grows).
    Tensor& staging = state.staging[i];
    if (staging.data == nullptr || staging.bytes() < out->bytes() || staging.bytes() == 0) {
      Tensor fresh;
      fresh.dtype = DataType::kUInt8;
      fresh.place = GPUPlace(static_cast<int8_t>(state.device));
      Status s = fresh.set_dims({static_cast<int64_t>(out->bytes())});
      if (s.ok()) s = fresh.allocate();
      if (!s.ok()) return value_error(arg, s.message());
      staging = std::move(fresh);
    }
    if (out->bytes() != 0) {
      const cudaError_t e = cudaMemcpyAsync(staging.data, out->data, out->bytes(), cudaMemcpyHostToDevice, stream);
      if (e != cudaSuccess) return cuda_failed("run", e, "copying a host input to the device");
    }
    state.held.push_back(out->holder);  // pinned host memory is read asynchronously
    out->data = staging.data;
    out->holder = staging.holder;
    out->place = staging.place;
    return true;
  }

  // Any other object: one whose type publishes DLPack's C exchange API (torch.Tensor) is read through it, and
  // the model's stream made to wait for the producer's current stream; another CUDA producer (by
  // __dlpack_device__) is asked for its tensor on the model's stream (DLPack's stream protocol); anything else
  // is a host array (buffer protocol, DLPack on the CPU). The device is asked before the buffer protocol: a cupy
  // array has a buffer slot that only raises.
  static bool from_object(State& state, PyObject* obj, const Arg& arg, InputTensor* in) {
    static PyObject* device_name = PyUnicode_InternFromString("__dlpack_device__");
    static PyObject* dlpack_name = PyUnicode_InternFromString("__dlpack__");
    static PyObject* stream_kw = Py_BuildValue("(s)", "stream");
    const cudaStream_t stream = state.stream->handle;
    if (is_tensor(obj)) return in->from(obj, arg);
    if (const dlpack::ExchangeAPI* api = exchange_api_of(obj)) {
      if (!in->from_exchange(obj, *api, arg)) return false;
      const Place place = in->get().place;
      if (place.backend != Backend::kGPU || place.device != state.device) return true;  // device_input's checks
      void* producer = nullptr;
      if (api->current_work_stream(dlpack::kCUDA, place.device, &producer) != 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "the DLPack exchange API gave no current stream");
        return false;
      }
      if (state.fenced && state.fenced_producer == producer) return true;  // one fence per stream and run
      const cudaError_t e = fence_with(state.inputs_written, static_cast<cudaStream_t>(producer), stream);
      if (e != cudaSuccess) return cuda_failed("run", e, "ordering the model's stream after the input's producer");
      state.fenced = true;
      state.fenced_producer = producer;
      return true;
    }
    PyObject* device = PyObject_CallMethodNoArgs(obj, device_name);
    if (device == nullptr) {
      // No __dlpack_device__: __dlpack__() is asked without a stream. A CUDA tensor that comes back has no
      // ordering with the model's stream, so the device is synchronised first (slow, but never a race).
      PyErr_Clear();
      if (!in->from(obj, arg)) return false;
      if (in->get().place.backend != Backend::kGPU) return true;
      cudaError_t error = cudaSuccess;
      Py_BEGIN_ALLOW_THREADS
      error = cudaDeviceSynchronize();
      Py_END_ALLOW_THREADS
      return error == cudaSuccess || cuda_failed("run", error, "cudaDeviceSynchronize");
    }
    int type = 0, id = 0;
    const bool parsed = PyTuple_Check(device) && PyArg_ParseTuple(device, "ii", &type, &id);
    Py_DECREF(device);
    if (!parsed) {
      PyErr_Clear();
      return value_error(arg, "__dlpack_device__() did not return (device type, device id)");
    }
    if (type != dlpack::kCUDA) return in->from(obj, arg);
    PyObject* number = stream_number(stream);
    if (number == nullptr) return false;
    PyObject* call[] = {obj, number};
    PyObject* capsule = PyObject_VectorcallMethod(dlpack_name, call, 1, stream_kw);
    Py_DECREF(number);
    if (capsule == nullptr) return false;
    const bool ok = in->from_capsule(capsule, arg);
    Py_DECREF(capsule);
    return ok;
  }

  // Makes the model's device current and its stream ready for run(), and releases what earlier runs read once
  // the stream is past them.
  class RunScope {
   public:
    explicit RunScope(State& state) : device_(state.device) {
      if (device_.error() != cudaSuccess) {
        raise_cuda("run", device_.error(), "cudaSetDevice");
        return;
      }
      if (!ensure_stream(state)) return;
      ok_ = true;
      if (!state.held.empty() && state.done != nullptr) {
        const cudaError_t query = cudaEventQuery(state.done->handle);
        if (query == cudaSuccess) {
          state.held.clear();
        } else {
          // cudaErrorNotReady is no error, but cudaGetLastError() would report it to the next kernel launch's check.
          static_cast<void>(cudaGetLastError());
        }
      }
      state.fenced = false;
    }
    bool ok() const { return ok_; }

   private:
    DeviceScope device_;
    bool ok_ = false;
  };

  static bool input(State& state, size_t i, PyObject* obj, const Arg& arg, Input& in, const Tensor** tensor) {
    *tensor = &in;
    return device_input(state, i, obj, arg, &in);
  }

  static Tensor* output(State& state, size_t i) {
    // Still shared with a DeviceTensor or a consumer: leave that memory alone, and take the spare set's if
    // nothing refers to it any more.
    Tensor& out = state.outputs[i];
    if (out.holder.use_count() > 1) {
      Tensor& spare = state.spare_outputs[i];
      if (spare.holder.use_count() == 1) {
        std::swap(out, spare);
      } else {
        spare = std::move(out);
        out = Tensor{};
      }
    }
    return &out;
  }

  // An event no output of an earlier run still waits on: the last one, the spare, or a fresh one.
  static bool before_launch(State& state) {
    if (state.done == nullptr || state.done.use_count() != 1) {
      if (state.spare_done != nullptr && state.spare_done.use_count() == 1) {
        std::swap(state.done, state.spare_done);
      } else {
        state.spare_done = std::move(state.done);
      }
    }
    if (state.done == nullptr || state.done.use_count() != 1) {
      auto event = std::make_shared<Event>();
      const cudaError_t e = cudaEventCreateWithFlags(&event->handle, cudaEventDisableTiming);
      if (e != cudaSuccess) return cuda_failed("run", e, "cudaEventCreate");
      state.done = std::move(event);
    }
    return true;
  }

  static Status launch(State& state, TensorList inputs, MutableTensorList outputs) {
    Status status = state.model.run(inputs, outputs);
    state.recorded = cudaEventRecord(state.done->handle, state.stream->handle);
    return status;
  }

  static bool finish(PyObject* self, State& state) {
    if (state.recorded != cudaSuccess) return cuda_failed("run", state.recorded, "cudaEventRecord");
    if (state.held.size() > 1024) {  // a caller that never synchronises: bound what is kept
      PyObject* done = synchronize(self, nullptr);
      if (done == nullptr) return false;
      Py_DECREF(done);
    }
    return true;
  }

  static PyObject* result(State& state, size_t i) { return wrap_device(state.outputs[i], state.stream, state.done); }
};

}  // namespace kforge::python::cuda

#endif  // KFORGE_PYTHON_CUDA_H_
