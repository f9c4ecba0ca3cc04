// kforge_python_inputs.h: tensors in (kforge_python.h lists the other parts): a tensor argument as the C++ API
// takes it, from the module's own Tensor, anything with the buffer protocol (numpy) or DLPack (torch, paddle,
// cupy), zero-copy where the memory is compact; Tensor[] arguments; Tensor(data) and the Tensor type.
#ifndef KFORGE_PYTHON_INPUTS_H_
#define KFORGE_PYTHON_INPUTS_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kforge_python_args.h"
#include "kforge_python_dlpack.h"
#include "kforge_python_tensor.h"

namespace kforge::python {

// The dtype of a buffer-protocol format ("<f", "=i", "l", ...), from its kind and item size.
inline bool dtype_of_format(const char* format, Py_ssize_t itemsize, DataType* out) {
  if (format == nullptr) format = "B";
  while (*format == '@' || *format == '=' || *format == '<' || *format == '!') ++format;
  const std::string f(format);
  if (f == "?") *out = DataType::kBool;
  else if (f == "e") *out = DataType::kFloat16;
  else if (f == "f") *out = DataType::kFloat32;
  else if (f == "d") *out = DataType::kFloat64;
  else if (f == "Zf") *out = DataType::kComplex64;
  else if (f == "Zd") *out = DataType::kComplex128;
  else if (f == "b" || f == "h" || f == "i" || f == "l" || f == "q" || f == "n") {
    if (itemsize == 1) *out = DataType::kInt8;
    else if (itemsize == 2) *out = DataType::kInt16;
    else if (itemsize == 4) *out = DataType::kInt32;
    else if (itemsize == 8) *out = DataType::kInt64;
    else return false;
  } else if (f == "B" && itemsize == 1) {
    *out = DataType::kUInt8;
  } else {
    return false;
  }
  return true;
}

constexpr const char* kTensorExpected =
    "a tensor (a kforge Tensor, a numpy array or other buffer, or an object with __dlpack__ such as a torch or "
    "paddle tensor)";

// Copies a strided array (strides in bytes) into the compact row-major `dst`.
inline void copy_strided(const char* src, const int64_t* dims, const int64_t* byte_strides, int32_t ndim,
                         size_t item, char* dst) {
  int64_t index[kMaxRank] = {};
  int64_t total = 1;
  for (int32_t i = 0; i < ndim; ++i) total *= dims[i];
  for (int64_t n = 0; n < total; ++n) {
    int64_t offset = 0;
    for (int32_t i = 0; i < ndim; ++i) offset += index[i] * byte_strides[i];
    std::memcpy(dst + n * static_cast<int64_t>(item), src + offset, item);
    for (int32_t i = ndim - 1; i >= 0; --i) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
  }
}

// A tensor argument as the C++ API takes it: a pointer at a kforge Tensor's own tensor (no copy), or a view of a
// buffer / DLPack tensor whose holder keeps the Python-side memory alive for as long as any copy of it lives
// (a view output of the op shares it).
class InputTensor {
 public:
  const Tensor& get() const { return *ptr_; }
  const Tensor* get_if() const { return ptr_; }
  Tensor& mutable_get() { return *const_cast<Tensor*>(ptr_); }

  bool from(PyObject* obj, const Arg& arg, bool writable = false) {
    if (is_tensor(obj)) {
      ptr_ = &reinterpret_cast<PyTensor*>(obj)->tensor;
      return true;
    }
    ptr_ = &own_;
    if (const dlpack::ExchangeAPI* api = writable ? nullptr : exchange_api_of(obj)) return from_exchange(obj, *api, arg);
    if (PyObject_CheckBuffer(obj)) return from_buffer(obj, arg, writable);
    static PyObject* dlpack_name = PyUnicode_InternFromString("__dlpack__");
    PyObject* method = PyObject_GetAttr(obj, dlpack_name);
    if (method == nullptr) {
      PyErr_Clear();
      return type_error(arg, kTensorExpected, obj);
    }
    PyObject* capsule = PyObject_CallNoArgs(method);
    Py_DECREF(method);
    if (capsule == nullptr) return false;
    const bool ok = from_dlpack(capsule, arg);
    Py_DECREF(capsule);
    return ok;
  }

  // An optional input: None is absent (get_if() is null).
  bool from_optional(PyObject* obj, const Arg& arg) {
    if (obj == nullptr || obj == Py_None) {
      ptr_ = nullptr;
      return true;
    }
    return from(obj, arg);
  }

  // The tensor of a "dltensor" capsule (what __dlpack__() returned), which this takes over: zero-copy when
  // compact; a strided CPU tensor is copied, a strided GPU tensor is a ValueError.
  bool from_capsule(PyObject* capsule, const Arg& arg) {
    ptr_ = &own_;
    return from_dlpack(capsule, arg);
  }

  // The tensor of an object whose type publishes the DLPack exchange API (exchange_api_of), read through it:
  // no __dlpack__ call, no stream synchronisation (the caller orders its stream after the producer's). The view
  // stays valid while the object lives: the tensor holds a reference to it.
  bool from_exchange(PyObject* obj, const dlpack::ExchangeAPI& api, const Arg& arg) {
    ptr_ = &own_;
    dlpack::Tensor dl{};
    if (api.dltensor_from_py_object_no_sync(obj, &dl) != 0) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "the DLPack exchange API failed without a message");
      return false;
    }
    Py_INCREF(obj);
    std::shared_ptr<void> holder(obj, [](void* p) {
      PyGILState_STATE gil = PyGILState_Ensure();
      Py_DECREF(static_cast<PyObject*>(p));
      PyGILState_Release(gil);
    });
    return from_dltensor(dl, std::move(holder), arg);
  }

 private:
  bool from_buffer(PyObject* obj, const Arg& arg, bool writable) {
    auto* view = new Py_buffer;
    if (PyObject_GetBuffer(obj, view, PyBUF_RECORDS_RO | (writable ? PyBUF_WRITABLE : 0)) < 0) {
      delete view;
      PyErr_Clear();
      return type_error(arg, writable ? "a writable tensor" : kTensorExpected, obj);
    }
    // Released with the GIL held, whoever drops the last copy.
    std::shared_ptr<void> holder(view, [](void* p) {
      PyGILState_STATE gil = PyGILState_Ensure();
      PyBuffer_Release(static_cast<Py_buffer*>(p));
      PyGILState_Release(gil);
      delete static_cast<Py_buffer*>(p);
    });
    if (!dtype_of_format(view->format, view->itemsize, &own_.dtype)) {
      return value_error(arg, std::string("buffer format '") + (view->format ? view->format : "") +
                                  "' is not a dtype kforge knows");
    }
    if (view->ndim > kMaxRank) return value_error(arg, "rank " + std::to_string(view->ndim) + " exceeds kforge's maximum");
    own_.place = CPUPlace();
    own_.ndim = view->ndim;
    int64_t strides[kMaxRank];
    for (int i = 0; i < view->ndim; ++i) {
      own_.dims[i] = view->shape[i];
      strides[i] = view->strides ? view->strides[i] : 0;
    }
    if (view->strides == nullptr || PyBuffer_IsContiguous(view, 'C')) {
      own_.data = view->buf;
      own_.holder = std::move(holder);
      return true;
    }
    if (writable) return value_error(arg, "an in-place argument must be C-contiguous");
    Status s = own_.allocate();
    if (!s.ok()) return value_error(arg, s.message());
    copy_strided(static_cast<const char*>(view->buf), own_.dims, strides, own_.ndim, size_of(own_.dtype),
                 static_cast<char*>(own_.data));
    return true;
  }

  bool from_dlpack(PyObject* capsule, const Arg& arg) {
    auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (managed == nullptr) {
      PyErr_Clear();
      return value_error(arg, "__dlpack__() did not return an unused \"dltensor\" capsule");
    }
    PyCapsule_SetName(capsule, "used_dltensor");
    std::shared_ptr<void> holder(managed, [](void* p) {
      auto* m = static_cast<dlpack::ManagedTensor*>(p);
      if (m->deleter == nullptr) return;
      PyGILState_STATE gil = PyGILState_Ensure();
      m->deleter(m);
      PyGILState_Release(gil);
    });
    return from_dltensor(managed->dl_tensor, std::move(holder), arg);
  }

  // A DLPack tensor whose memory `holder` keeps alive: zero-copy when compact; a strided CPU tensor is copied,
  // a strided GPU tensor is a ValueError.
  bool from_dltensor(const dlpack::Tensor& dl, std::shared_ptr<void> holder, const Arg& arg) {
    if (dl.dtype.lanes != 1 || !dtype_of_dlpack(dl.dtype, &own_.dtype)) {
      return value_error(arg, "DLPack dtype (code " + std::to_string(dl.dtype.code) + ", " +
                                  std::to_string(dl.dtype.bits) + " bits) is not a dtype kforge knows");
    }
    if (dl.device.device_type == dlpack::kCPU || dl.device.device_type == dlpack::kCUDAHost) {
      own_.place = CPUPlace();
    } else if (dl.device.device_type == dlpack::kCUDA) {
      own_.place = GPUPlace(static_cast<int8_t>(dl.device.device_id));
    } else {
      return value_error(arg, "DLPack device type " + std::to_string(dl.device.device_type) + " is neither CPU nor CUDA");
    }
    if (dl.ndim > kMaxRank) return value_error(arg, "rank " + std::to_string(dl.ndim) + " exceeds kforge's maximum");
    own_.ndim = dl.ndim;
    bool compact = true;
    int64_t expected = 1;
    int64_t byte_strides[kMaxRank];
    const size_t item = size_of(own_.dtype);
    for (int32_t i = dl.ndim - 1; i >= 0; --i) {
      own_.dims[i] = dl.shape[i];
      const int64_t stride = dl.strides ? dl.strides[i] : expected;
      byte_strides[i] = stride * static_cast<int64_t>(item);
      if (dl.shape[i] != 1 && stride != expected) compact = false;
      expected *= dl.shape[i];
    }
    char* base = static_cast<char*>(dl.data) + dl.byte_offset;
    if (compact) {
      own_.data = base;
      own_.holder = std::move(holder);
      return true;
    }
    if (own_.place.backend != Backend::kCPU) {
      return value_error(arg, "a GPU tensor must be contiguous (row-major without gaps), e.g. x.contiguous()");
    }
    Status s = own_.allocate();
    if (!s.ok()) return value_error(arg, s.message());
    copy_strided(base, own_.dims, byte_strides, own_.ndim, item, static_cast<char*>(own_.data));
    return true;
  }

  const Tensor* ptr_ = nullptr;
  Tensor own_;
};

// A Tensor[] argument: a list or tuple of tensors.
class InputTensorList {
 public:
  TensorList get() const { return TensorList{pointers_.data(), pointers_.size()}; }

  bool from(PyObject* obj, const Arg& arg) {
    if (!PyList_Check(obj) && !PyTuple_Check(obj)) return type_error(arg, "a list or tuple of tensors", obj);
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    items_.resize(static_cast<size_t>(n));
    pointers_.resize(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (!items_[i].from(PySequence_Fast_GET_ITEM(obj, i), arg)) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
          PyErr_Clear();
          PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %zd): item %zd must be %s", arg.sig->function,
                       arg.sig->names[arg.index], arg.index + 1, i, kTensorExpected);
        }
        return false;
      }
      pointers_[i] = items_[i].get_if();
    }
    return true;
  }

  // An optional Tensor[]: None is the empty list.
  bool from_optional(PyObject* obj, const Arg& arg) {
    if (obj == nullptr || obj == Py_None) return true;
    return from(obj, arg);
  }

 private:
  std::vector<InputTensor> items_;
  std::vector<const Tensor*> pointers_;
};

// Tensor(data): a CPU tensor that owns a copy of `data` (what the in-place functions update).
inline PyObject* tensor_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  static const char* const kNames[] = {"data", nullptr};
  static const bool kRequired[] = {true, false};
  static const Signature kSig{"Tensor", kNames, kRequired, 1};
  static const char* keywords[] = {"data", nullptr};
  PyObject* data = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:Tensor", const_cast<char**>(keywords), &data)) return nullptr;
  InputTensor in;
  if (!in.from(data, Arg{&kSig, 0})) return nullptr;
  if (in.get().place.backend != Backend::kCPU) {
    PyErr_SetString(PyExc_ValueError, "Tensor(): data must be on the CPU");
    return nullptr;
  }
  Tensor copy;
  copy.dtype = in.get().dtype;
  Status s = copy.set_dims(in.get().dims, static_cast<size_t>(in.get().ndim));
  if (s.ok()) s = copy.allocate();
  if (!s.ok()) return raise_status("Tensor", s);
  if (copy.bytes() != 0) std::memcpy(copy.data, in.get().data, copy.bytes());
  return wrap(std::move(copy));
}

// Creates the module's Tensor type (kforge_python_tensor.h; here for its constructor, Tensor(data) above) and
// adds it to `module` as `Tensor`.
inline bool add_tensor_type(PyObject* module) {
  static PyMethodDef methods[] = {
      {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tensor_dlpack)),
       METH_FASTCALL | METH_KEYWORDS, "A DLPack capsule sharing the tensor's memory."},
      {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS, "(device type, device id) as DLPack numbers."},
      {"numpy", tensor_numpy, METH_NOARGS, "numpy.asarray(self): a numpy array sharing the memory (CPU)."},
      {nullptr, nullptr, 0, nullptr}};
  static PyType_Slot slots[] = {{Py_tp_new, reinterpret_cast<void*>(tensor_new)},
                                {Py_tp_dealloc, reinterpret_cast<void*>(dealloc_object<PyTensor>)},
                                {Py_tp_repr, reinterpret_cast<void*>(tensor_repr)},
                                {Py_tp_methods, methods},
                                {Py_tp_getset, tensor_getset},
                                {Py_tp_doc, const_cast<char*>("Tensor(data): a kforge tensor holding a copy of data (a numpy "
                                                              "array, any buffer or __dlpack__ object, CPU). "
                                                              "numpy.asarray() and DLPack read it without copying.")},
                                {Py_bf_getbuffer, reinterpret_cast<void*>(tensor_getbuffer)},
                                {0, nullptr}};
  static PyType_Spec spec = {KFORGE_PYTHON_STR(KFORGE_PYTHON_MODULE) ".Tensor", sizeof(PyTensor), 0,
                             Py_TPFLAGS_DEFAULT, slots};
  return add_type(module, "Tensor", &spec, &tensor_type()) != nullptr;
}

}  // namespace kforge::python

#endif  // KFORGE_PYTHON_INPUTS_H_
