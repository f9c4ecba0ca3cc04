// kforge_python_cuda.h: the CUDA half of `kforge compile --target cuda --python MODULE`: the Python class of a
// generated CUDA class, and `DeviceTensor`, the type of its outputs. Include it after kforge_python.h in the
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
#include <vector>

#include "kforge_cuda_runtime.h"
#include "kforge_params.h"
#include "kforge_python.h"

namespace kforge::python::cuda {

// A cudaError_t as a RuntimeError naming the function.
inline PyObject* raise_cuda(const char* function, cudaError_t error, const char* what) {
  PyErr_Format(PyExc_RuntimeError, "%s(): %s: %s (%s)", function, what, cudaGetErrorName(error),
               cudaGetErrorString(error));
  return nullptr;
}

inline bool cuda_failed(const char* function, cudaError_t error, const char* what) {
  raise_cuda(function, error, what);
  return false;
}

// Makes `device` current for the scope and restores the previous one after.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) == cudaSuccess && previous_ != device) {
      error_ = cudaSetDevice(device);
      switched_ = error_ == cudaSuccess;
    }
  }
  ~DeviceScope() {
    if (switched_) static_cast<void>(cudaSetDevice(previous_));
  }
  cudaError_t error() const { return error_; }

 private:
  int previous_ = 0;
  bool switched_ = false;
  cudaError_t error_ = cudaSuccess;
};

// The stream a model runs on. Shared by the model and every output it returned (their exports record on it
// when a consumer lets go), so it lives as long as any of them.
struct Stream {
  cudaStream_t handle = nullptr;
  bool owned = false;
  int device = 0;
  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (owned) static_cast<void>(cudaStreamDestroy(handle));
  }
};

// "The run that wrote these outputs is done": recorded on the model's stream after each run().
struct Event {
  cudaEvent_t handle = nullptr;
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (handle != nullptr) static_cast<void>(cudaEventDestroy(handle));
  }
};

// Makes `waiter` wait for the work enqueued on `on` so far (an event recorded now).
inline cudaError_t fence(cudaStream_t on, cudaStream_t waiter) {
  if (on == waiter) return cudaSuccess;
  cudaEvent_t e = nullptr;
  cudaError_t error = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (error == cudaSuccess) error = cudaEventRecord(e, on);
  if (error == cudaSuccess) error = cudaStreamWaitEvent(waiter, e, 0);
  if (e != nullptr) static_cast<void>(cudaEventDestroy(e));
  return error;
}

// Makes `waiter` wait for the work enqueued on `on` so far, through `event` (created on first use, then
// recorded again each time: a wait takes the event's state at the time of the call). For the ordering of every
// run's inputs, where a fresh event per call would cost its creation and destruction.
inline cudaError_t fence_with(Event& event, cudaStream_t on, cudaStream_t waiter) {
  if (on == waiter) return cudaSuccess;
  if (event.handle == nullptr) {
    if (cudaError_t e = cudaEventCreateWithFlags(&event.handle, cudaEventDisableTiming); e != cudaSuccess) {
      event.handle = nullptr;
      return e;
    }
  }
  cudaError_t error = cudaEventRecord(event.handle, on);
  if (error == cudaSuccess) error = cudaStreamWaitEvent(waiter, event.handle, 0);
  return error;
}

// The stream a DLPack stream number names: None and 1 the legacy default stream, 2 the per-thread default
// stream, any other positive int a cudaStream_t; -1 (no synchronisation wanted) sets *sync to false. 0, which
// the protocol leaves ambiguous (some consumers pass their null stream's handle), is the legacy default stream
// too: waiting on it is the conservative reading.
inline bool stream_of_number(PyObject* obj, const Arg& arg, cudaStream_t* out, bool* sync) {
  *sync = true;
  if (obj == nullptr || obj == Py_None) {
    *out = cudaStreamLegacy;
    return true;
  }
  if (!PyLong_Check(obj)) return type_error(arg, "None or an int (a CUDA stream as DLPack numbers them)", obj);
  const long long v = PyLong_AsLongLong(obj);
  if (v == -1 && PyErr_Occurred()) return false;
  if (v == -1) {
    *sync = false;
    *out = nullptr;
  } else if (v == 0 || v == 1) {
    *out = cudaStreamLegacy;
  } else if (v == 2) {
    *out = cudaStreamPerThread;
  } else if (v > 2) {
    *out = reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(v));
  } else {
    return value_error(arg, "stream " + std::to_string(v) +
                                " is not a CUDA stream in DLPack's numbering (None, -1, 0, 1, 2 or a cudaStream_t)");
  }
  return true;
}

// The DLPack number of a stream (what __dlpack__(stream=...) of a producer takes).
inline PyObject* stream_number(cudaStream_t stream) {
  if (stream == cudaStreamLegacy) return PyLong_FromLong(1);
  if (stream == cudaStreamPerThread) return PyLong_FromLong(2);
  return PyLong_FromUnsignedLongLong(static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(stream)));
}

// ---- DeviceTensor: an output in device memory ------------------------------------------------------------

struct PyDeviceTensor {
  PyObject_HEAD
  Tensor tensor;
  std::shared_ptr<Stream> stream;  // the stream that wrote it
  std::shared_ptr<Event> ready;    // recorded after that run
};

inline PyTypeObject*& device_tensor_type() {
  static PyTypeObject* type = nullptr;
  return type;
}

inline bool is_device_tensor(PyObject* obj) { return Py_TYPE(obj) == device_tensor_type(); }

// A DLPack export of a device tensor: when the consumer lets go, its stream fences the model's stream, so the
// model's next write into that memory comes after the consumer's last read.
struct DeviceExport {
  dlpack::ManagedTensor managed;
  Tensor keep;
  int64_t shape[kMaxRank];
  std::shared_ptr<Stream> producer;
  cudaStream_t consumer = nullptr;
  bool sync = false;
};

inline void device_export_deleter(dlpack::ManagedTensor* managed) {
  auto* exp = static_cast<DeviceExport*>(managed->manager_ctx);
  if (exp->sync && exp->producer != nullptr) {
    DeviceScope scope(exp->producer->device);
    // Nowhere to report a failure from a deleter; clear it so that no later launch check sees it.
    if (fence(exp->consumer, exp->producer->handle) != cudaSuccess) static_cast<void>(cudaGetLastError());
  }
  delete exp;
}

inline PyObject* device_tensor_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const char* const kNames[] = {"stream", "max_version", "dl_device", "copy", nullptr};
  static const bool kRequired[] = {false, false, false, false, false};
  static const Signature kSig{"__dlpack__", kNames, kRequired, 4};
  PyObject* slots[4];
  if (!parse_arguments(kSig, args, nargs, kwnames, slots)) return nullptr;
  auto* t = reinterpret_cast<PyDeviceTensor*>(self);
  cudaStream_t consumer = nullptr;
  bool sync = true;
  if (!stream_of_number(slots[0], Arg{&kSig, 0}, &consumer, &sync)) return nullptr;
  // max_version: the unversioned capsule is what every consumer still takes (they fall back to it).
  if (slots[2] != nullptr && slots[2] != Py_None) {
    int type = 0, id = 0;
    if (!PyArg_ParseTuple(slots[2], "ii", &type, &id)) return nullptr;
    if (type != dlpack::kCUDA || id != t->tensor.place.device) {
      PyErr_Format(PyExc_BufferError, "__dlpack__(): the tensor is on CUDA device %d; dl_device (%d, %d) would need a copy",
                   static_cast<int>(t->tensor.place.device), type, id);
      return nullptr;
    }
  }
  if (slots[3] != nullptr && slots[3] == Py_True) {
    PyErr_SetString(PyExc_BufferError, "__dlpack__(): copy=True is not supported: the export shares the memory");
    return nullptr;
  }
  DeviceScope scope(t->tensor.place.device);
  if (sync && t->ready != nullptr) {
    const cudaError_t e = cudaStreamWaitEvent(consumer, t->ready->handle, 0);
    if (e != cudaSuccess) return raise_cuda("__dlpack__", e, "cudaStreamWaitEvent(consumer stream)");
  }
  auto* exp = new (std::nothrow) DeviceExport();
  if (exp == nullptr) return PyErr_NoMemory();
  exp->keep = t->tensor;
  exp->producer = t->stream;
  exp->consumer = consumer;
  exp->sync = sync && t->stream != nullptr;
  dlpack::Tensor& dl = exp->managed.dl_tensor;
  if (!dlpack_dtype(t->tensor.dtype, &dl.dtype)) {
    delete exp;
    PyErr_Format(PyExc_BufferError, "a %s tensor cannot be exported through DLPack", name_of(t->tensor.dtype));
    return nullptr;
  }
  for (int32_t i = 0; i < t->tensor.ndim; ++i) exp->shape[i] = t->tensor.dims[i];
  dl.data = t->tensor.data;
  dl.device = dlpack::Device{dlpack::kCUDA, t->tensor.place.device};
  dl.ndim = t->tensor.ndim;
  dl.shape = exp->shape;
  dl.strides = nullptr;  // compact row-major
  dl.byte_offset = 0;
  exp->managed.manager_ctx = exp;
  exp->managed.deleter = device_export_deleter;
  PyObject* capsule = PyCapsule_New(&exp->managed, "dltensor", dlpack_capsule_destructor);
  if (capsule == nullptr) delete exp;
  return capsule;
}

inline PyObject* device_tensor_dlpack_device(PyObject* self, PyObject*) {
  return Py_BuildValue("(ii)", static_cast<int>(dlpack::kCUDA),
                       static_cast<int>(reinterpret_cast<PyDeviceTensor*>(self)->tensor.place.device));
}

// numpy(): waits for the run that wrote the tensor, copies it to the host and returns it as a numpy array.
inline PyObject* device_tensor_numpy(PyObject* self, PyObject*) {
  auto* t = reinterpret_cast<PyDeviceTensor*>(self);
  Tensor host;
  host.dtype = t->tensor.dtype;
  Status s = host.set_dims(t->tensor.dims, static_cast<size_t>(t->tensor.ndim));
  if (s.ok()) s = host.allocate();
  if (!s.ok()) return raise_status("numpy", s);
  cudaError_t error = cudaSuccess;
  Py_BEGIN_ALLOW_THREADS
  DeviceScope scope(t->tensor.place.device);
  if (t->ready != nullptr) error = cudaEventSynchronize(t->ready->handle);
  if (error == cudaSuccess && host.bytes() != 0) {
    error = cudaMemcpy(host.data, t->tensor.data, host.bytes(), cudaMemcpyDeviceToHost);
  }
  Py_END_ALLOW_THREADS
  if (error != cudaSuccess) return raise_cuda("numpy", error, "copying the tensor to the host");
  PyObject* wrapped = wrap(std::move(host));
  if (wrapped == nullptr) return nullptr;
  PyObject* array = tensor_numpy(wrapped, nullptr);
  Py_DECREF(wrapped);
  return array;
}

inline PyObject* device_tensor_shape(PyObject* self, void*) {
  return shape_tuple(reinterpret_cast<PyDeviceTensor*>(self)->tensor);
}

inline PyObject* device_tensor_dtype(PyObject* self, void*) {
  return PyUnicode_FromString(name_of(reinterpret_cast<PyDeviceTensor*>(self)->tensor.dtype));
}

inline PyObject* device_tensor_ndim(PyObject* self, void*) {
  return PyLong_FromLong(reinterpret_cast<PyDeviceTensor*>(self)->tensor.ndim);
}

inline PyObject* device_tensor_device(PyObject* self, void*) {
  return PyUnicode_FromFormat("cuda:%d", static_cast<int>(reinterpret_cast<PyDeviceTensor*>(self)->tensor.place.device));
}

inline PyObject* device_tensor_repr(PyObject* self) {
  const Tensor& t = reinterpret_cast<PyDeviceTensor*>(self)->tensor;
  return PyUnicode_FromFormat("%s.DeviceTensor(dtype=%s, shape=%s, device=cuda:%d)",
                              KFORGE_PYTHON_STR(KFORGE_PYTHON_MODULE), name_of(t.dtype), t.dims_string().c_str(),
                              static_cast<int>(t.place.device));
}

inline void device_tensor_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  auto* t = reinterpret_cast<PyDeviceTensor*>(self);
  t->tensor.~Tensor();
  t->stream.~shared_ptr<Stream>();
  t->ready.~shared_ptr<Event>();
  type->tp_free(self);
  Py_DECREF(type);
}

// Creates the module's DeviceTensor type and adds it to `module`.
inline bool add_device_tensor_type(PyObject* module) {
  static PyMethodDef methods[] = {
      {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(device_tensor_dlpack)),
       METH_FASTCALL | METH_KEYWORDS,
       "__dlpack__(stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule sharing the device "
       "memory; `stream` (DLPack's numbering) is made to wait for the run that wrote the tensor."},
      {"__dlpack_device__", device_tensor_dlpack_device, METH_NOARGS, "(2, device id): kDLCUDA."},
      {"numpy", device_tensor_numpy, METH_NOARGS, "Waits for the run, copies the tensor to the host: a numpy array."},
      {nullptr, nullptr, 0, nullptr}};
  static PyGetSetDef getset[] = {{"shape", device_tensor_shape, nullptr, "The dims, a tuple.", nullptr},
                                 {"dtype", device_tensor_dtype, nullptr, "The dtype's name, e.g. 'float32'.", nullptr},
                                 {"ndim", device_tensor_ndim, nullptr, "The rank.", nullptr},
                                 {"device", device_tensor_device, nullptr, "'cuda:N'.", nullptr},
                                 {nullptr, nullptr, nullptr, nullptr, nullptr}};
  static PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(device_tensor_dealloc)},
      {Py_tp_repr, reinterpret_cast<void*>(device_tensor_repr)},
      {Py_tp_methods, methods},
      {Py_tp_getset, getset},
      {Py_tp_doc, const_cast<char*>("An output of run() in device memory: torch.from_dlpack(t), cupy.from_dlpack(t) "
                                    "read it without copying, t.numpy() copies it to the host.")},
      {0, nullptr}};
  static PyType_Spec spec = {KFORGE_PYTHON_STR(KFORGE_PYTHON_MODULE) ".DeviceTensor", sizeof(PyDeviceTensor), 0,
                             Py_TPFLAGS_DEFAULT, slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (type == nullptr) return false;
  device_tensor_type() = reinterpret_cast<PyTypeObject*>(type);
  Py_INCREF(type);  // the module's reference; device_tensor_type() keeps the other
  if (PyModule_AddObject(module, "DeviceTensor", type) < 0) {
    Py_DECREF(type);
    return false;
  }
  return true;
}

inline PyObject* wrap_device(const Tensor& tensor, const std::shared_ptr<Stream>& stream,
                             const std::shared_ptr<Event>& ready) {
  PyTypeObject* type = device_tensor_type();
  PyObject* obj = type->tp_alloc(type, 0);
  if (obj == nullptr) return nullptr;
  auto* t = reinterpret_cast<PyDeviceTensor*>(obj);
  new (&t->tensor) Tensor(tensor);
  new (&t->stream) std::shared_ptr<Stream>(stream);
  new (&t->ready) std::shared_ptr<Event>(ready);
  return obj;
}

// ---- the model -------------------------------------------------------------------------------------------

// The parameters of a generated class as the module declares them (the class binds device tensors by name).
struct ParameterTable {
  const ParameterSpec* specs = nullptr;
  const uint32_t* file_order = nullptr;  // the .pdiparams order: sorted by name
  size_t count = 0;
};

// The Python class of a CUDA class that `kforge compile --target cuda` generated: Model(params=None),
// load_parameters(path), run(*inputs, **inputs_by_name) -> DeviceTensor or tuple, synchronize(), stream,
// device, input_names, output_names. The model belongs to the CUDA device current when it is created.
template <typename Model>
class CudaModelType {
 public:
  static constexpr size_t kIn = Model::kNumInputs;
  static constexpr size_t kOut = Model::kNumOutputs;

  struct State {
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
    Tensor weights;                            // one device allocation holding every parameter
  };

  struct Object {
    PyObject_HEAD
    State* state;
  };

  static bool add(PyObject* module, const char* qualified_name, const char* name, const char* doc,
                  ParameterTable parameters) {
    table() = parameters;
    static PyMethodDef methods[] = {
        {"load_parameters", load_parameters, METH_O,
         "load_parameters(path): reads every parameter from Paddle's .pdiparams file and copies them to the "
         "device once."},
        {"run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(run)), METH_FASTCALL | METH_KEYWORDS,
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
    static PyType_Slot slots[] = {{Py_tp_new, reinterpret_cast<void*>(create)},
                                  {Py_tp_init, reinterpret_cast<void*>(init)},
                                  {Py_tp_dealloc, reinterpret_cast<void*>(dealloc)},
                                  {Py_tp_methods, methods},
                                  {Py_tp_getset, getset},
                                  {Py_tp_doc, const_cast<char*>(doc)},
                                  {0, nullptr}};
    static PyType_Spec spec = {qualified_name, sizeof(Object), 0, Py_TPFLAGS_DEFAULT, slots};
    return add_model_type(module, name, &spec, Model::kInputNames, Model::kOutputNames);
  }

 private:
  static ParameterTable& table() {
    static ParameterTable t;
    return t;
  }

  static State& state_of(PyObject* self) { return *reinterpret_cast<Object*>(self)->state; }

  static PyObject* create(PyTypeObject* type, PyObject*, PyObject*) {
    PyObject* self = type->tp_alloc(type, 0);
    if (self == nullptr) return nullptr;
    Object* obj = reinterpret_cast<Object*>(self);
    obj->state = new (std::nothrow) State();
    if (obj->state == nullptr) {
      Py_DECREF(self);
      return PyErr_NoMemory();
    }
    const cudaError_t error = cudaGetDevice(&obj->state->device);
    if (error != cudaSuccess) {
      Py_DECREF(self);
      return raise_cuda("__init__", error, "cudaGetDevice");
    }
    install_cuda_allocator();
    return self;
  }

  static void dealloc(PyObject* self) {
    PyTypeObject* type = Py_TYPE(self);
    State* state = reinterpret_cast<Object*>(self)->state;
    if (state != nullptr) {
      // The inputs the stream may still read are released only once it is done with them.
      if (state->stream != nullptr && !state->held.empty()) {
        Py_BEGIN_ALLOW_THREADS
        DeviceScope scope(state->device);
        static_cast<void>(cudaStreamSynchronize(state->stream->handle));
        Py_END_ALLOW_THREADS
      }
      delete state;
    }
    type->tp_free(self);
    Py_DECREF(type);
  }

  // Model(params=None): with a path, load_parameters(params).
  static int init(PyObject* self, PyObject* args, PyObject* kwargs) {
    static const char* keywords[] = {"params", nullptr};
    PyObject* path = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O", const_cast<char**>(keywords), &path)) return -1;
    if (path == Py_None) return 0;
    PyObject* result = load_parameters(self, path);
    if (result == nullptr) return -1;
    Py_DECREF(result);
    return 0;
  }

  static bool not_busy(State& state, const char* function) {
    if (!state.busy) return true;
    PyErr_Format(PyExc_RuntimeError, "%s(): the model is running in another thread", function);
    return false;
  }

  // Marks the model busy from the check on: converting inputs runs Python code (__dlpack__), during which
  // another thread may take the GIL and call into the same object.
  class Busy {
   public:
    Busy(State& state, const char* function) : state_(state), ok_(not_busy(state, function)) {
      if (ok_) state_.busy = true;
    }
    ~Busy() {
      if (ok_) state_.busy = false;
    }
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;
    bool ok() const { return ok_; }

   private:
    State& state_;
    bool ok_;
  };

  // Reads the file on the host (kforge_params.h: checked against the program's declarations), copies it to one
  // device allocation with one cudaMemcpy and binds each parameter to its place in it.
  static PyObject* load_parameters(PyObject* self, PyObject* path) {
    PyObject* bytes = nullptr;
    if (!PyUnicode_FSConverter(path, &bytes)) return nullptr;
    State& state = state_of(self);
    Busy busy(state, "load_parameters");
    if (!busy.ok()) {
      Py_DECREF(bytes);
      return nullptr;
    }
    const ParameterTable& params = table();
    std::vector<Tensor> host;
    Status status;
    Py_BEGIN_ALLOW_THREADS
    status = params::load_file(PyBytes_AS_STRING(bytes), params.specs, params.file_order, params.count, &host);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
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
    State& state = state_of(self);
    if (state.stream == nullptr) Py_RETURN_NONE;
    return stream_number(state.stream->handle);
  }

  static int set_stream(PyObject* self, PyObject* value, void*) {
    static const char* const kNames[] = {"stream", nullptr};
    static const bool kRequired[] = {true, false};
    static const Signature kSig{"stream", kNames, kRequired, 1};
    State& state = state_of(self);
    if (value == nullptr) {
      PyErr_SetString(PyExc_AttributeError, "stream cannot be deleted (set None for the model's own)");
      return -1;
    }
    if (!not_busy(state, "stream")) return -1;
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

  static PyObject* get_device(PyObject* self, void*) { return PyLong_FromLong(state_of(self).device); }

  static PyObject* synchronize(PyObject* self, PyObject*) {
    State& state = state_of(self);
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

  static PyObject* run(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static bool required[kIn + 1] = {};
    static const Signature sig = [] {
      for (size_t i = 0; i < kIn; ++i) required[i] = true;
      return Signature{"run", Model::kInputNames.data(), required, static_cast<Py_ssize_t>(kIn)};
    }();
    PyObject* slots[kIn + 1];
    if (!parse_arguments(sig, args, nargs, kwnames, slots)) return nullptr;
    State& state = state_of(self);
    Busy busy(state, "run");
    if (!busy.ok()) return nullptr;
    DeviceScope scope(state.device);
    if (scope.error() != cudaSuccess) return raise_cuda("run", scope.error(), "cudaSetDevice");
    if (!ensure_stream(state)) return nullptr;
    // What earlier runs read is released once the stream is past them.
    if (!state.held.empty() && state.done != nullptr) {
      const cudaError_t query = cudaEventQuery(state.done->handle);
      if (query == cudaSuccess) {
        state.held.clear();
      } else {
        // cudaErrorNotReady is no error, but cudaGetLastError() would report it to the next kernel launch's check.
        static_cast<void>(cudaGetLastError());
      }
    }
    Tensor inputs[kIn + 1];
    const Tensor* input_ptrs[kIn + 1] = {};
    state.fenced = false;
    for (size_t i = 0; i < kIn; ++i) {
      if (!device_input(state, i, slots[i], Arg{&sig, static_cast<Py_ssize_t>(i)}, &inputs[i])) return nullptr;
      input_ptrs[i] = &inputs[i];
    }
    Tensor* output_ptrs[kOut + 1] = {};
    for (size_t i = 0; i < kOut; ++i) {
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
      output_ptrs[i] = &out;
    }
    // An event no output of an earlier run still waits on: the last one, the spare, or a fresh one.
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
      if (e != cudaSuccess) return raise_cuda("run", e, "cudaEventCreate");
      state.done = std::move(event);
    }
    Status status;
    cudaError_t recorded = cudaSuccess;
    Py_BEGIN_ALLOW_THREADS
    status = state.model.run(TensorList{input_ptrs, kIn}, MutableTensorList{output_ptrs, kOut});
    recorded = cudaEventRecord(state.done->handle, state.stream->handle);
    Py_END_ALLOW_THREADS
    if (!status.ok()) return raise_status("run", status);
    if (recorded != cudaSuccess) return raise_cuda("run", recorded, "cudaEventRecord");
    if (state.held.size() > 1024) {  // a caller that never synchronises: bound what is kept
      PyObject* done = synchronize(self, nullptr);
      if (done == nullptr) return nullptr;
      Py_DECREF(done);
    }
    if (kOut == 1) return wrap_device(state.outputs[0], state.stream, state.done);
    PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(kOut));
    for (size_t i = 0; tuple != nullptr && i < kOut; ++i) {
      PyObject* item = wrap_device(state.outputs[i], state.stream, state.done);
      if (item == nullptr) {
        Py_CLEAR(tuple);
        break;
      }
      PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), item);
    }
    return tuple;
  }
};

}  // namespace kforge::python::cuda

#endif  // KFORGE_PYTHON_CUDA_H_
