// kforge_python_device.h: device memory and its ordering for the Python module of a CUDA class (kforge_python.h
// lists the CPU parts, kforge_python_cuda.h is the class): CUDA errors as Python errors, the model's stream and
// events, DLPack's stream numbers, and `DeviceTensor`, the type of run()'s outputs. It needs the CUDA runtime
// (cuda_runtime.h, libcudart).
// How a run, its inputs and its outputs are ordered on the streams: kforge_python_cuda.h.
#ifndef KFORGE_PYTHON_DEVICE_H_
#define KFORGE_PYTHON_DEVICE_H_

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "kforge_python_args.h"
#include "kforge_python_dlpack.h"
#include "kforge_python_tensor.h"

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

// A Tensor (the getters, __dlpack_device__ and wrap() of kforge_python_tensor.h read it as one) that knows the
// run that wrote it.
struct PyDeviceTensor : PyTensor {
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
struct DeviceExport : DlpackExport {
  std::shared_ptr<Stream> producer;
  cudaStream_t consumer = nullptr;
  bool sync = false;
};

inline void device_export_deleter(dlpack::ManagedTensor* managed) {
  auto* exp = static_cast<DeviceExport*>(static_cast<DlpackExport*>(managed->manager_ctx));
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
  if (exp != nullptr) {
    exp->producer = t->stream;
    exp->consumer = consumer;
    exp->sync = sync && t->stream != nullptr;
  }
  return dlpack_capsule(exp, t->tensor, device_export_deleter);
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
  return numpy_array(std::move(host));
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

// Creates the module's DeviceTensor type and adds it to `module`.
inline bool add_device_tensor_type(PyObject* module) {
  static PyMethodDef methods[] = {
      {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(device_tensor_dlpack)),
       METH_FASTCALL | METH_KEYWORDS,
       "__dlpack__(stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule sharing the device "
       "memory; `stream` (DLPack's numbering) is made to wait for the run that wrote the tensor."},
      {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS, "(2, device id): kDLCUDA."},
      {"numpy", device_tensor_numpy, METH_NOARGS, "Waits for the run, copies the tensor to the host: a numpy array."},
      {nullptr, nullptr, 0, nullptr}};
  static PyGetSetDef getset[] = {tensor_getset[0], tensor_getset[1], tensor_getset[2],
                                 {"device", device_tensor_device, nullptr, "'cuda:N'.", nullptr},
                                 {nullptr, nullptr, nullptr, nullptr, nullptr}};
  static PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(dealloc_object<PyDeviceTensor>)},
      {Py_tp_repr, reinterpret_cast<void*>(device_tensor_repr)},
      {Py_tp_methods, methods},
      {Py_tp_getset, getset},
      {Py_tp_doc, const_cast<char*>("An output of run() in device memory: torch.from_dlpack(t), cupy.from_dlpack(t) "
                                    "read it without copying, t.numpy() copies it to the host.")},
      {0, nullptr}};
  static PyType_Spec spec = {KFORGE_PYTHON_STR(KFORGE_PYTHON_MODULE) ".DeviceTensor", sizeof(PyDeviceTensor), 0,
                             Py_TPFLAGS_DEFAULT, slots};
  return add_type(module, "DeviceTensor", &spec, &device_tensor_type()) != nullptr;
}

inline PyObject* wrap_device(const Tensor& tensor, const std::shared_ptr<Stream>& stream,
                             const std::shared_ptr<Event>& ready) {
  PyObject* obj = wrap(Tensor(tensor), device_tensor_type());
  if (obj == nullptr) return nullptr;
  auto* t = reinterpret_cast<PyDeviceTensor*>(obj);
  new (&t->stream) std::shared_ptr<Stream>(stream);
  new (&t->ready) std::shared_ptr<Event>(ready);
  return obj;
}

}  // namespace kforge::python::cuda

#endif  // KFORGE_PYTHON_DEVICE_H_
