// kforge_python.h: what the CPython extension modules of `kforge ops --python` and `kforge compile --python`
// share: the Tensor type they return, tensors in through the buffer protocol and DLPack, attributes from Python
// numbers, lists and tensors, argument parsing with Paddle's conventions, and the args-info dict.
//
// Plain CPython API (no pybind11): the per-call overhead is the point of these modules, and a METH_FASTCALL
// function that reads its own Tensor type by pointer is cheaper than any binding layer's dispatch
// (BENCHMARKS.md, "Python bindings"). Include it first in exactly one translation unit per module, after
// defining KFORGE_PYTHON_MODULE to the module's name; it needs Python.h (python3-dev) and nothing else.
#ifndef KFORGE_PYTHON_H_
#define KFORGE_PYTHON_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "kforge_runtime.h"

#ifndef KFORGE_PYTHON_MODULE
#error "define KFORGE_PYTHON_MODULE (the extension module's name) before including kforge_python.h"
#endif
#define KFORGE_PYTHON_STR2(x) #x
#define KFORGE_PYTHON_STR(x) KFORGE_PYTHON_STR2(x)

namespace kforge::python {

// ---- DLPack (dlpack.h v0.8, the unversioned "dltensor" capsule every framework still exchanges) ----------

namespace dlpack {
enum DeviceType : int32_t { kCPU = 1, kCUDA = 2, kCUDAHost = 3 };
enum TypeCode : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4, kComplex = 5, kBool = 6 };
struct Device {
  int32_t device_type;
  int32_t device_id;
};
struct DataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

// DLPack 1.2's C exchange API: a table of C functions a tensor type publishes (torch.Tensor since 2.10), so a
// consumer reads a tensor without calling __dlpack__ (a Python method: torch's takes 5 us, 29 us with a
// stream to order, BENCHMARKS.md "Python bindings") and asks for the producer's current stream itself. Only the
// two entries kforge calls are typed; the others are opaque.
struct Version {
  uint32_t major;
  uint32_t minor;
};
struct ExchangeAPIHeader {
  Version version;
  ExchangeAPIHeader* prev_api;
};
struct ExchangeAPI {
  ExchangeAPIHeader header;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object_no_sync;
  void* managed_tensor_to_py_object_no_sync;
  // A non-owning view of the object's tensor, valid while the object lives and its shape is not changed; no
  // stream synchronisation. 0, or -1 with a Python exception set.
  int (*dltensor_from_py_object_no_sync)(void* py_object, Tensor* out);
  // The producer's current stream of a device (torch.cuda.current_stream()). 0, or -1 with an exception set.
  int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_current_stream);
};
}  // namespace dlpack

// ---- where an argument goes: for messages ------------------------------------------------------------------

// The parameters of one Python entry point, in Python order. `interned` is filled on first use so keyword
// names compare by pointer.
struct Signature {
  const char* function;            // "add", "Model.run"
  const char* const* names;
  const bool* required;
  Py_ssize_t count;
  mutable std::vector<PyObject*> interned = {};
};

struct Arg {
  const Signature* sig;
  Py_ssize_t index;
};

inline const char* type_name(PyObject* obj) { return Py_TYPE(obj)->tp_name; }

// "add(): argument 'x' (position 1) must be <expected>, not <type>": a TypeError naming the function, the
// argument and what it takes.
inline bool type_error(const Arg& arg, const char* expected, PyObject* got) {
  PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %zd) must be %s, not %s", arg.sig->function,
               arg.sig->names[arg.index], arg.index + 1, expected, type_name(got));
  return false;
}

inline bool value_error(const Arg& arg, const std::string& what) {
  PyErr_Format(PyExc_ValueError, "%s(): argument '%s' (position %zd): %s", arg.sig->function,
               arg.sig->names[arg.index], arg.index + 1, what.c_str());
  return false;
}

// A Status error of the C++ API as a ValueError naming the function.
inline PyObject* raise_status(const char* function, const Status& status) {
  // The API's messages already start with "op: "; say it once.
  const std::string& message = status.message();
  const size_t n = std::strlen(function);
  const bool named = message.compare(0, n, function) == 0 && message.compare(n, 2, ": ") == 0;
  PyErr_Format(PyExc_ValueError, "%s(): %s", function, message.c_str() + (named ? n + 2 : 0));
  return nullptr;
}

// ---- argument parsing (METH_FASTCALL | METH_KEYWORDS) ----------------------------------------------------

// Fills slots[i] (borrowed, null when not given) from positional and keyword arguments; a TypeError for too
// many, unknown, repeated or missing required arguments.
inline bool parse_arguments(const Signature& sig, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                            PyObject** slots) {
  if (nargs > sig.count) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %zd argument%s (%zd given)", sig.function, sig.count,
                 sig.count == 1 ? "" : "s", nargs);
    return false;
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) slots[i] = args[i];
  for (Py_ssize_t i = nargs; i < sig.count; ++i) slots[i] = nullptr;
  if (kwnames != nullptr) {
    if (sig.interned.empty()) {
      for (Py_ssize_t i = 0; i < sig.count; ++i) sig.interned.push_back(PyUnicode_InternFromString(sig.names[i]));
    }
    const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; ++k) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      Py_ssize_t at = -1;
      for (Py_ssize_t i = 0; i < sig.count && at < 0; ++i) {
        if (sig.interned[i] == key) at = i;
      }
      for (Py_ssize_t i = 0; i < sig.count && at < 0; ++i) {
        if (PyUnicode_Compare(sig.interned[i], key) == 0) at = i;
      }
      if (at < 0) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", sig.function, key);
        return false;
      }
      if (slots[at] != nullptr) {
        PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", sig.function, sig.names[at]);
        return false;
      }
      slots[at] = args[nargs + k];
    }
  }
  for (Py_ssize_t i = 0; i < sig.count; ++i) {
    if (slots[i] == nullptr && sig.required[i]) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (position %zd)", sig.function,
                   sig.names[i], i + 1);
      return false;
    }
  }
  return true;
}

// ---- the Tensor type -------------------------------------------------------------------------------------

// A kforge::Tensor owned by Python. Exports the buffer protocol (CPU; numpy.asarray(t) is zero-copy) and
// __dlpack__ / __dlpack_device__ (torch.from_dlpack, paddle.from_dlpack, numpy.from_dlpack).
struct PyTensor {
  PyObject_HEAD
  Tensor tensor;
  Py_ssize_t shape[kMaxRank];
  Py_ssize_t strides[kMaxRank];
};

inline PyTypeObject*& tensor_type() {
  static PyTypeObject* type = nullptr;
  return type;
}

inline bool is_tensor(PyObject* obj) { return Py_TYPE(obj) == tensor_type(); }

// The DLPack exchange API a type publishes (`__dlpack_c_exchange_api__`, DLPack 1.2's earlier spelling
// `__c_dlpack_exchange_api__`; a "dlpack_exchange_api" capsule or an int address), of major version 1 and with
// the two functions kforge calls; null otherwise. Looked up once per type: the answers for the first few types
// are kept with a reference to the type, so that a freed type's address cannot come back as another type.
inline const dlpack::ExchangeAPI* read_exchange_api(PyObject* type) {
  static PyObject* const names[] = {PyUnicode_InternFromString("__dlpack_c_exchange_api__"),
                                    PyUnicode_InternFromString("__c_dlpack_exchange_api__")};
  for (PyObject* name : names) {
    PyObject* value = PyObject_GetAttr(type, name);
    if (value == nullptr) {
      PyErr_Clear();
      continue;
    }
    void* address = nullptr;
    if (PyCapsule_CheckExact(value)) {
      address = PyCapsule_GetPointer(value, "dlpack_exchange_api");
    } else if (PyLong_Check(value)) {
      address = PyLong_AsVoidPtr(value);
    }
    Py_DECREF(value);
    PyErr_Clear();
    const auto* header = static_cast<const dlpack::ExchangeAPIHeader*>(address);
    while (header != nullptr && header->version.major > 1) header = header->prev_api;
    const auto* api = reinterpret_cast<const dlpack::ExchangeAPI*>(header);
    if (api != nullptr && api->header.version.major == 1 && api->dltensor_from_py_object_no_sync != nullptr &&
        api->current_work_stream != nullptr) {
      return api;
    }
  }
  return nullptr;
}

inline const dlpack::ExchangeAPI* exchange_api_of(PyObject* obj) {
  struct Known {
    PyTypeObject* type;
    const dlpack::ExchangeAPI* api;
  };
  static Known known[8] = {};
  static size_t count = 0;
  PyTypeObject* type = Py_TYPE(obj);
  for (size_t i = 0; i < count; ++i) {
    if (known[i].type == type) return known[i].api;
  }
  const dlpack::ExchangeAPI* api = read_exchange_api(reinterpret_cast<PyObject*>(type));
  if (count < std::size(known)) {
    Py_INCREF(type);
    known[count++] = Known{type, api};
  }
  return api;
}

// The struct-module format of a dtype for the buffer protocol; null when it has none (bfloat16).
inline const char* buffer_format(DataType dtype) {
  switch (dtype) {
    case DataType::kBool: return "?";
    case DataType::kInt8: return "b";
    case DataType::kUInt8: return "B";
    case DataType::kInt16: return "h";
    case DataType::kInt32: return "i";
    case DataType::kInt64: return "q";
    case DataType::kFloat16: return "e";
    case DataType::kFloat32: return "f";
    case DataType::kFloat64: return "d";
    case DataType::kComplex64: return "Zf";
    case DataType::kComplex128: return "Zd";
    default: return nullptr;
  }
}

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

inline void tensor_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  reinterpret_cast<PyTensor*>(self)->tensor.~Tensor();
  type->tp_free(self);
  Py_DECREF(type);
}

inline int tensor_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  PyTensor* t = reinterpret_cast<PyTensor*>(self);
  const char* format = buffer_format(t->tensor.dtype);
  if (t->tensor.place.backend != Backend::kCPU || format == nullptr) {
    PyErr_Format(PyExc_BufferError, "a %s tensor on the %s has no buffer (use DLPack)", name_of(t->tensor.dtype),
                 t->tensor.place.backend == Backend::kCPU ? "CPU" : "GPU");
    view->obj = nullptr;
    return -1;
  }
  const Py_ssize_t item = static_cast<Py_ssize_t>(size_of(t->tensor.dtype));
  Py_ssize_t stride = item;
  for (int32_t i = t->tensor.ndim - 1; i >= 0; --i) {
    t->shape[i] = static_cast<Py_ssize_t>(t->tensor.dims[i]);
    t->strides[i] = stride;
    stride *= t->shape[i];
  }
  view->buf = t->tensor.data;
  view->obj = self;
  Py_INCREF(self);
  view->len = static_cast<Py_ssize_t>(t->tensor.bytes());
  view->readonly = 0;
  view->itemsize = item;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(format) : nullptr;
  view->ndim = t->tensor.ndim;
  view->shape = (flags & PyBUF_ND) ? t->shape : nullptr;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? t->strides : nullptr;
  view->suboffsets = nullptr;
  view->internal = nullptr;
  return 0;
}

// The DLPack export: the capsule's manager keeps a copy of the tensor (sharing its bytes) and the shape.
struct DlpackExport {
  dlpack::ManagedTensor managed;
  Tensor keep;
  int64_t shape[kMaxRank];
};

inline void dlpack_export_deleter(dlpack::ManagedTensor* managed) {
  delete static_cast<DlpackExport*>(managed->manager_ctx);
}

inline void dlpack_capsule_destructor(PyObject* capsule) {
  // A consumer renames the capsule to "used_dltensor" and becomes the owner; otherwise it is ours to free.
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

inline bool dlpack_dtype(DataType dtype, dlpack::DataType* out) {
  const uint8_t bits = static_cast<uint8_t>(size_of(dtype) * 8);
  switch (dtype) {
    case DataType::kBool: *out = {dlpack::kBool, 8, 1}; return true;
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64: *out = {dlpack::kInt, bits, 1}; return true;
    case DataType::kUInt8: *out = {dlpack::kUInt, 8, 1}; return true;
    case DataType::kFloat16:
    case DataType::kFloat32:
    case DataType::kFloat64: *out = {dlpack::kFloat, bits, 1}; return true;
    case DataType::kBFloat16: *out = {dlpack::kBfloat, 16, 1}; return true;
    case DataType::kComplex64:
    case DataType::kComplex128: *out = {dlpack::kComplex, bits, 1}; return true;
    default: return false;
  }
}

// A "dltensor" capsule sharing `tensor`'s bytes.
inline PyObject* to_dlpack(const Tensor& tensor) {
  auto* exp = new (std::nothrow) DlpackExport();
  if (exp == nullptr) return PyErr_NoMemory();
  exp->keep = tensor;
  for (int32_t i = 0; i < tensor.ndim; ++i) exp->shape[i] = tensor.dims[i];
  dlpack::Tensor& dl = exp->managed.dl_tensor;
  dl.data = tensor.data;
  dl.device = tensor.place.backend == Backend::kGPU ? dlpack::Device{dlpack::kCUDA, tensor.place.device}
                                                    : dlpack::Device{dlpack::kCPU, 0};
  dl.ndim = tensor.ndim;
  if (!dlpack_dtype(tensor.dtype, &dl.dtype)) {
    delete exp;
    PyErr_Format(PyExc_BufferError, "a %s tensor cannot be exported through DLPack", name_of(tensor.dtype));
    return nullptr;
  }
  dl.shape = exp->shape;
  dl.strides = nullptr;  // compact row-major
  dl.byte_offset = 0;
  exp->managed.manager_ctx = exp;
  exp->managed.deleter = dlpack_export_deleter;
  PyObject* capsule = PyCapsule_New(&exp->managed, "dltensor", dlpack_capsule_destructor);
  if (capsule == nullptr) delete exp;
  return capsule;
}

inline PyObject* tensor_dlpack(PyObject* self, PyObject* const*, Py_ssize_t, PyObject*) {
  // stream / max_version / dl_device / copy are accepted and ignored: the memory is ready when run() returns.
  return to_dlpack(reinterpret_cast<PyTensor*>(self)->tensor);
}

inline PyObject* tensor_dlpack_device(PyObject* self, PyObject*) {
  const Tensor& t = reinterpret_cast<PyTensor*>(self)->tensor;
  if (t.place.backend == Backend::kGPU) return Py_BuildValue("(ii)", static_cast<int>(dlpack::kCUDA), t.place.device);
  return Py_BuildValue("(ii)", static_cast<int>(dlpack::kCPU), 0);
}

inline PyObject* tensor_numpy(PyObject* self, PyObject*) {
  PyObject* numpy = PyImport_ImportModule("numpy");
  if (numpy == nullptr) return nullptr;
  PyObject* array = PyObject_CallMethod(numpy, "asarray", "O", self);
  Py_DECREF(numpy);
  return array;
}

// A tensor's dims as a tuple of ints (the `shape` of Tensor and, in kforge_python_cuda.h, of DeviceTensor).
inline PyObject* shape_tuple(const Tensor& t) {
  PyObject* shape = PyTuple_New(t.ndim);
  if (shape == nullptr) return nullptr;
  for (int32_t i = 0; i < t.ndim; ++i) PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(t.dims[i]));
  return shape;
}

inline PyObject* tensor_shape(PyObject* self, void*) { return shape_tuple(reinterpret_cast<PyTensor*>(self)->tensor); }

inline PyObject* tensor_dtype(PyObject* self, void*) {
  return PyUnicode_FromString(name_of(reinterpret_cast<PyTensor*>(self)->tensor.dtype));
}

inline PyObject* tensor_ndim(PyObject* self, void*) {
  return PyLong_FromLong(reinterpret_cast<PyTensor*>(self)->tensor.ndim);
}

inline PyObject* tensor_repr(PyObject* self) {
  const Tensor& t = reinterpret_cast<PyTensor*>(self)->tensor;
  return PyUnicode_FromFormat("%s.Tensor(dtype=%s, shape=%s, place=%s)", KFORGE_PYTHON_STR(KFORGE_PYTHON_MODULE),
                              name_of(t.dtype), t.dims_string().c_str(),
                              t.place.backend == Backend::kGPU ? "gpu" : "cpu");
}

inline PyObject* tensor_new(PyTypeObject* type, PyObject* args, PyObject* kwargs);

// Creates the module's Tensor type and adds it to `module` as `Tensor`.
inline bool add_tensor_type(PyObject* module) {
  static PyMethodDef methods[] = {
      {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tensor_dlpack)),
       METH_FASTCALL | METH_KEYWORDS, "A DLPack capsule sharing the tensor's memory."},
      {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS, "(device type, device id) as DLPack numbers."},
      {"numpy", tensor_numpy, METH_NOARGS, "numpy.asarray(self): a numpy array sharing the memory (CPU)."},
      {nullptr, nullptr, 0, nullptr}};
  static PyGetSetDef getset[] = {{"shape", tensor_shape, nullptr, "The dims, a tuple.", nullptr},
                                 {"dtype", tensor_dtype, nullptr, "The dtype's name, e.g. 'float32'.", nullptr},
                                 {"ndim", tensor_ndim, nullptr, "The rank.", nullptr},
                                 {nullptr, nullptr, nullptr, nullptr, nullptr}};
  static PyType_Slot slots[] = {{Py_tp_new, reinterpret_cast<void*>(tensor_new)},
                                {Py_tp_dealloc, reinterpret_cast<void*>(tensor_dealloc)},
                                {Py_tp_repr, reinterpret_cast<void*>(tensor_repr)},
                                {Py_tp_methods, methods},
                                {Py_tp_getset, getset},
                                {Py_tp_doc, const_cast<char*>("Tensor(data): a kforge tensor holding a copy of data (a numpy "
                                                              "array, any buffer or __dlpack__ object, CPU). "
                                                              "numpy.asarray() and DLPack read it without copying.")},
                                {Py_bf_getbuffer, reinterpret_cast<void*>(tensor_getbuffer)},
                                {0, nullptr}};
  static PyType_Spec spec = {KFORGE_PYTHON_STR(KFORGE_PYTHON_MODULE) ".Tensor", sizeof(PyTensor), 0,
                             Py_TPFLAGS_DEFAULT, slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (type == nullptr) return false;
  tensor_type() = reinterpret_cast<PyTypeObject*>(type);
  Py_INCREF(type);  // the module's reference; tensor_type() keeps the other for the module's lifetime
  if (PyModule_AddObject(module, "Tensor", type) < 0) {
    Py_DECREF(type);
    return false;
  }
  return true;
}

// A new Python Tensor owning `tensor` (moved).
inline PyObject* wrap(Tensor&& tensor) {
  PyTypeObject* type = tensor_type();
  PyObject* obj = type->tp_alloc(type, 0);
  if (obj == nullptr) return nullptr;
  new (&reinterpret_cast<PyTensor*>(obj)->tensor) Tensor(std::move(tensor));
  return obj;
}

// An optional output: None when it was not computed.
inline PyObject* wrap_optional(Tensor&& tensor) {
  if (tensor.dtype == DataType::kUndefined) Py_RETURN_NONE;
  return wrap(std::move(tensor));
}

inline PyObject* wrap_list(std::vector<Tensor>&& tensors) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(tensors.size()));
  if (list == nullptr) return nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    PyObject* item = wrap(std::move(tensors[i]));
    if (item == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), item);
  }
  return list;
}

// ---- tensors in ------------------------------------------------------------------------------------------

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

  static bool dtype_of_dlpack(dlpack::DataType t, DataType* out) {
    switch (t.code) {
      case dlpack::kBool: *out = DataType::kBool; return t.bits == 8;
      case dlpack::kInt:
        if (t.bits == 8) *out = DataType::kInt8;
        else if (t.bits == 16) *out = DataType::kInt16;
        else if (t.bits == 32) *out = DataType::kInt32;
        else if (t.bits == 64) *out = DataType::kInt64;
        else return false;
        return true;
      case dlpack::kUInt: *out = DataType::kUInt8; return t.bits == 8;
      case dlpack::kFloat:
        if (t.bits == 16) *out = DataType::kFloat16;
        else if (t.bits == 32) *out = DataType::kFloat32;
        else if (t.bits == 64) *out = DataType::kFloat64;
        else return false;
        return true;
      case dlpack::kBfloat: *out = DataType::kBFloat16; return t.bits == 16;
      case dlpack::kComplex:
        if (t.bits == 64) *out = DataType::kComplex64;
        else if (t.bits == 128) *out = DataType::kComplex128;
        else return false;
        return true;
      default: return false;
    }
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

// A tensor argument that an in-place function updates: only the module's own Tensor, whose dims and dtype the
// function may change (a numpy array's could not follow).
inline bool inplace_tensor(PyObject* obj, const Arg& arg, Tensor** out) {
  if (!is_tensor(obj)) return type_error(arg, "a Tensor of this module (it is updated in place)", obj);
  *out = &reinterpret_cast<PyTensor*>(obj)->tensor;
  return true;
}

inline bool optional_inplace_tensor(PyObject* obj, const Arg& arg, Tensor** out) {
  if (obj == nullptr || obj == Py_None) {
    *out = nullptr;
    return true;
  }
  return inplace_tensor(obj, arg, out);
}

// An argument returned as the result (the input of an in-place function); None when it was not given.
inline PyObject* same(PyObject* obj) {
  if (obj == nullptr) obj = Py_None;
  Py_INCREF(obj);
  return obj;
}

// A tuple of new references (stolen); null, releasing the others, when one of them is null.
inline PyObject* tuple_of(std::initializer_list<PyObject*> items) {
  bool ok = true;
  for (PyObject* item : items) ok = ok && item != nullptr;
  PyObject* tuple = ok ? PyTuple_New(static_cast<Py_ssize_t>(items.size())) : nullptr;
  Py_ssize_t i = 0;
  for (PyObject* item : items) {
    if (tuple != nullptr) {
      PyTuple_SET_ITEM(tuple, i++, item);
    } else {
      Py_XDECREF(item);
    }
  }
  return tuple;
}

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

// ---- attributes in ---------------------------------------------------------------------------------------

inline bool is_number_text(PyObject* obj) { return PyUnicode_Check(obj) || PyBytes_Check(obj); }

inline bool convert_int64(PyObject* obj, const Arg& arg, int64_t* out) {
  if (PyFloat_Check(obj) || is_number_text(obj) || !PyIndex_Check(obj)) return type_error(arg, "an int", obj);
  const long long v = PyLong_AsLongLong(obj);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return value_error(arg, "the int does not fit in 64 bits");
  }
  *out = v;
  return true;
}

template <typename T>
bool convert_int(PyObject* obj, const Arg& arg, T* out) {
  int64_t v = 0;
  if (!convert_int64(obj, arg, &v)) return false;
  if (static_cast<int64_t>(static_cast<T>(v)) != v || (v < 0 && static_cast<T>(v) > 0)) {
    return value_error(arg, std::to_string(v) + " is out of range");
  }
  *out = static_cast<T>(v);
  return true;
}

// Every integer type an attribute has (int, int64_t, long, size_t), whichever of them are the same type here.
inline bool convert(PyObject* obj, const Arg& arg, int* out) { return convert_int(obj, arg, out); }
inline bool convert(PyObject* obj, const Arg& arg, long* out) { return convert_int(obj, arg, out); }
inline bool convert(PyObject* obj, const Arg& arg, long long* out) { return convert_int(obj, arg, out); }
inline bool convert(PyObject* obj, const Arg& arg, unsigned long* out) { return convert_int(obj, arg, out); }
inline bool convert(PyObject* obj, const Arg& arg, unsigned long long* out) { return convert_int(obj, arg, out); }

inline bool convert(PyObject* obj, const Arg& arg, double* out) {
  if (is_number_text(obj) || PyBool_Check(obj)) return type_error(arg, "a float", obj);
  const double v = PyFloat_AsDouble(obj);
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    return type_error(arg, "a float", obj);
  }
  *out = v;
  return true;
}

inline bool convert(PyObject* obj, const Arg& arg, float* out) {
  double v = 0;
  if (!convert(obj, arg, &v)) return false;
  *out = static_cast<float>(v);
  return true;
}

inline bool convert(PyObject* obj, const Arg& arg, bool* out) {
  if (PyBool_Check(obj)) {
    *out = obj == Py_True;
    return true;
  }
  // numpy.bool_ and 0/1 ints, as Paddle accepts them
  if (!is_number_text(obj) && !PyFloat_Check(obj) && PyIndex_Check(obj)) {
    const long long v = PyLong_AsLongLong(obj);
    if (!(v == -1 && PyErr_Occurred()) && (v == 0 || v == 1)) {
      *out = v == 1;
      return true;
    }
    PyErr_Clear();
  }
  if (std::strcmp(type_name(obj), "numpy.bool_") == 0 || std::strcmp(type_name(obj), "numpy.bool") == 0) {
    *out = PyObject_IsTrue(obj) == 1;
    return true;
  }
  return type_error(arg, "a bool", obj);
}

inline bool convert(PyObject* obj, const Arg& arg, std::string* out) {
  if (!PyUnicode_Check(obj)) return type_error(arg, "a str", obj);
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(obj, &size);
  if (text == nullptr) return false;
  out->assign(text, static_cast<size_t>(size));
  return true;
}

// A one-element tensor argument's value (Paddle lets Scalar and IntArray items arrive as tensors).
inline bool tensor_value(PyObject* obj, const Arg& arg, Scalar* out) {
  InputTensor t;
  if (!t.from(obj, arg)) return false;
  Status s = scalar_from_tensor(t.get(), out);
  return s.ok() || value_error(arg, s.message());
}

inline bool convert(PyObject* obj, const Arg& arg, Scalar* out) {
  if (PyBool_Check(obj)) {
    *out = Scalar(obj == Py_True);
  } else if (PyLong_Check(obj)) {
    int64_t v = 0;
    if (!convert_int64(obj, arg, &v)) return false;
    *out = Scalar(v);
  } else if (PyFloat_Check(obj)) {
    *out = Scalar(PyFloat_AS_DOUBLE(obj));
  } else if (is_number_text(obj) || PyList_Check(obj) || PyTuple_Check(obj) || obj == Py_None) {
    return type_error(arg, "a number or a one-element tensor", obj);
  } else {
    return tensor_value(obj, arg, out);  // a tensor, a numpy scalar
  }
  return true;
}

template <typename T>
bool convert_list(PyObject* obj, const Arg& arg, const char* expected, std::vector<T>* out) {
  if (!PyList_Check(obj) && !PyTuple_Check(obj)) return type_error(arg, expected, obj);
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
  out->clear();
  out->reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    T v{};
    if (!convert(PySequence_Fast_GET_ITEM(obj, i), arg, &v)) {
      if (PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' (position %zd) must be %s; item %zd is %s",
                     arg.sig->function, arg.sig->names[arg.index], arg.index + 1, expected, i,
                     type_name(PySequence_Fast_GET_ITEM(obj, i)));
      }
      return false;
    }
    out->push_back(v);
  }
  return true;
}

inline bool convert(PyObject* obj, const Arg& arg, std::vector<int>* out) {
  return convert_list(obj, arg, "a list of ints", out);
}
inline bool convert(PyObject* obj, const Arg& arg, std::vector<int64_t>* out) {
  return convert_list(obj, arg, "a list of ints", out);
}
inline bool convert(PyObject* obj, const Arg& arg, std::vector<float>* out) {
  return convert_list(obj, arg, "a list of floats", out);
}
inline bool convert(PyObject* obj, const Arg& arg, std::vector<double>* out) {
  return convert_list(obj, arg, "a list of floats", out);
}
inline bool convert(PyObject* obj, const Arg& arg, std::vector<std::string>* out) {
  return convert_list(obj, arg, "a list of str", out);
}
inline bool convert(PyObject* obj, const Arg& arg, std::vector<Scalar>* out) {
  return convert_list(obj, arg, "a list of numbers", out);
}
inline bool convert(PyObject* obj, const Arg& arg, std::vector<bool>* out) {
  std::vector<int> ints;  // std::vector<bool> has no bool* elements
  if (!PyList_Check(obj) && !PyTuple_Check(obj)) return type_error(arg, "a list of bools", obj);
  out->clear();
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(obj); ++i) {
    bool v = false;
    if (!convert(PySequence_Fast_GET_ITEM(obj, i), arg, &v)) return false;
    out->push_back(v);
  }
  return true;
}

// IntArray: an int, a list or tuple of ints (or of one-element int tensors), or an int32/int64 tensor.
inline bool convert(PyObject* obj, const Arg& arg, IntArray* out) {
  constexpr const char* kExpected = "an int, a list of ints or an int tensor";
  if (PyLong_Check(obj)) {
    int64_t v = 0;
    if (!convert_int64(obj, arg, &v)) return false;
    *out = IntArray({v});
    return true;
  }
  if (PyList_Check(obj) || PyTuple_Check(obj)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    std::vector<int64_t> values(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = PySequence_Fast_GET_ITEM(obj, i);
      if (PyLong_Check(item)) {
        if (!convert_int64(item, arg, &values[i])) return false;
        continue;
      }
      if (PyFloat_Check(item) || is_number_text(item) || item == Py_None) return type_error(arg, kExpected, item);
      InputTensor t;
      if (!t.from(item, arg)) return false;
      IntArray one;
      Status s = int_array_from_tensor(t.get(), &one);
      if (!s.ok()) return value_error(arg, s.message());
      if (one.size() != 1) return value_error(arg, "item " + std::to_string(i) + " must have one element");
      values[i] = one[0];
    }
    *out = IntArray(std::move(values));
    return true;
  }
  if (PyFloat_Check(obj) || is_number_text(obj) || obj == Py_None) return type_error(arg, kExpected, obj);
  InputTensor t;
  if (!t.from(obj, arg)) return false;
  Status s = int_array_from_tensor(t.get(), out);
  return s.ok() || value_error(arg, s.message());
}

// The text after the last '.': "paddle.float32", "torch.float32", numpy's dtype('float32'), numpy.float32.
inline bool last_name(PyObject* obj, std::string* out) {
  PyObject* text = PyType_Check(obj) ? PyObject_GetAttrString(obj, "__name__") : PyObject_Str(obj);
  if (text == nullptr) return false;
  const char* utf8 = PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : nullptr;
  if (utf8 != nullptr) {
    *out = utf8;
    const size_t dot = out->rfind('.');
    if (dot != std::string::npos) out->erase(0, dot + 1);
  }
  Py_DECREF(text);
  if (utf8 == nullptr) PyErr_Clear();
  return utf8 != nullptr;
}

// DataType: None (undefined: decided from the inputs, as Paddle's DataType::UNDEFINED), a name, or a framework's
// dtype object.
inline bool convert(PyObject* obj, const Arg& arg, DataType* out) {
  if (obj == Py_None) {
    *out = DataType::kUndefined;
    return true;
  }
  std::string name;
  if (!last_name(obj, &name) || !parse_data_type(name, out)) {
    return type_error(arg, "a dtype (None, 'float32', numpy.float32, paddle.float32, torch.float32, ...)", obj);
  }
  return true;
}

inline bool convert(PyObject* obj, const Arg& arg, DataLayout* out) {
  std::string name;
  if (!PyUnicode_Check(obj) || !last_name(obj, &name) || !parse_data_layout(name, out)) {
    return type_error(arg, "a layout ('NCHW', 'NHWC', 'AnyLayout')", obj);
  }
  return true;
}

// Place: None (decide from the inputs), 'cpu', 'gpu', 'gpu:N', 'cuda:N', or an object whose str() reads so
// (paddle.CPUPlace() is 'Place(cpu)', torch.device('cuda:0') is 'cuda:0').
inline bool convert(PyObject* obj, const Arg& arg, Place* out) {
  if (obj == Py_None) {
    *out = Place{};
    return true;
  }
  PyObject* str = PyObject_Str(obj);
  const char* utf8 = str != nullptr ? PyUnicode_AsUTF8(str) : nullptr;
  std::string text = utf8 != nullptr ? utf8 : "";
  Py_XDECREF(str);
  PyErr_Clear();
  for (char& c : text) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (text.rfind("place(", 0) == 0 && text.back() == ')') text = text.substr(6, text.size() - 7);
  if (text == "cpu") {
    *out = CPUPlace();
    return true;
  }
  for (const char* prefix : {"gpu", "cuda"}) {
    const size_t n = std::strlen(prefix);
    if (text.compare(0, n, prefix) != 0) continue;
    if (text.size() == n) {
      *out = GPUPlace(0);
      return true;
    }
    if (text[n] == ':' && text.size() > n + 1 && text.find_first_not_of("0123456789", n + 1) == std::string::npos) {
      *out = GPUPlace(static_cast<int8_t>(std::stoi(text.substr(n + 1))));
      return true;
    }
  }
  return type_error(arg, "a place (None, 'cpu', 'gpu', 'gpu:N')", obj);
}

// ---- the args-info registry as a dict --------------------------------------------------------------------

inline PyObject* new_string_or_none(const char* text) {
  if (text == nullptr) Py_RETURN_NONE;
  return PyUnicode_FromString(text);
}

// {op: {"inputs": [{name, type, optional}], "attributes": [{name, type, default, mutable}],
//       "outputs": [{name, type, size, optional, intermediate}], "inplace": {in: out}, "view": {in: out},
//       "has_api": bool}} from the library's OpArgsInfo table (P_api.h).
template <typename OpArgsInfo>
PyObject* args_info_dict(const OpArgsInfo* const* list, size_t count) {
  PyObject* all = PyDict_New();
  if (all == nullptr) return nullptr;
  auto args = [](const auto* items, size_t n, bool attributes) {
    PyObject* out = PyList_New(static_cast<Py_ssize_t>(n));
    for (size_t i = 0; out != nullptr && i < n; ++i) {
      PyObject* d = attributes ? Py_BuildValue("{s:s,s:s,s:N,s:O}", "name", items[i].name, "type", items[i].type,
                                               "default", new_string_or_none(items[i].default_value), "mutable",
                                               items[i].mutable_attribute ? Py_True : Py_False)
                               : Py_BuildValue("{s:s,s:s,s:O}", "name", items[i].name, "type", items[i].type,
                                               "optional", items[i].optional ? Py_True : Py_False);
      if (d == nullptr) {
        Py_CLEAR(out);
        break;
      }
      PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), d);
    }
    return out;
  };
  auto pairs = [](const auto* items, size_t n) {
    PyObject* out = PyDict_New();
    for (size_t i = 0; out != nullptr && i < n; ++i) {
      PyObject* value = PyUnicode_FromString(items[i].output);
      if (value == nullptr || PyDict_SetItemString(out, items[i].input, value) < 0) Py_CLEAR(out);
      Py_XDECREF(value);
    }
    return out;
  };
  for (size_t k = 0; k < count; ++k) {
    const OpArgsInfo& op = *list[k];
    PyObject* outputs = PyList_New(static_cast<Py_ssize_t>(op.num_outputs));
    for (size_t i = 0; outputs != nullptr && i < op.num_outputs; ++i) {
      const auto& o = op.outputs[i];
      PyObject* d = Py_BuildValue("{s:s,s:s,s:N,s:O,s:O}", "name", o.name, "type", o.type, "size",
                                  new_string_or_none(o.size), "optional", o.optional ? Py_True : Py_False,
                                  "intermediate", o.intermediate ? Py_True : Py_False);
      if (d == nullptr) {
        Py_CLEAR(outputs);
        break;
      }
      PyList_SET_ITEM(outputs, static_cast<Py_ssize_t>(i), d);
    }
    PyObject* entry = Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:O}", "inputs", args(op.inputs, op.num_inputs, false),
                                    "attributes", args(op.attributes, op.num_attributes, true), "outputs", outputs,
                                    "inplace", pairs(op.inplace, op.num_inplace), "view", pairs(op.view, op.num_view),
                                    "has_api", op.has_api ? Py_True : Py_False);
    if (entry == nullptr || PyDict_SetItemString(all, op.name, entry) < 0) {
      Py_XDECREF(entry);
      Py_DECREF(all);
      return nullptr;
    }
    Py_DECREF(entry);
  }
  return all;
}

// ---- compiled models (kforge compile --python) -----------------------------------------------------------

// A CPU output as a numpy array sharing the tensor's memory (numpy.asarray over the buffer protocol); a GPU output
// as a DLPack capsule.
inline PyObject* to_numpy_or_dlpack(Tensor&& tensor) {
  if (tensor.place.backend == Backend::kGPU) return to_dlpack(tensor);
  static PyObject* asarray = nullptr;
  if (asarray == nullptr) {
    PyObject* numpy = PyImport_ImportModule("numpy");
    if (numpy == nullptr) return nullptr;
    asarray = PyObject_GetAttrString(numpy, "asarray");
    Py_DECREF(numpy);
    if (asarray == nullptr) return nullptr;
  }
  PyObject* wrapped = wrap(std::move(tensor));
  if (wrapped == nullptr) return nullptr;
  PyObject* array = PyObject_CallOneArg(asarray, wrapped);
  Py_DECREF(wrapped);
  return array;
}

// A tuple of the names in `items` (a compiled model type's input_names / output_names).
template <size_t N>
inline PyObject* name_tuple(const std::array<const char*, N>& items) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(N));
  for (size_t i = 0; tuple != nullptr && i < N; ++i) {
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), PyUnicode_FromString(items[i]));
  }
  return tuple;
}

// Creates a compiled model's type from `spec` and adds it to `module` as `name`, with the class attributes
// input_names and output_names: the part the CPU and the CUDA model types (kforge_python_cuda.h) share.
template <size_t NI, size_t NO>
inline bool add_model_type(PyObject* module, const char* name, PyType_Spec* spec,
                           const std::array<const char*, NI>& input_names,
                           const std::array<const char*, NO>& output_names) {
  PyObject* type = PyType_FromSpec(spec);
  if (type == nullptr) return false;
  PyObject* inputs = name_tuple(input_names);
  PyObject* outputs = name_tuple(output_names);
  const bool ok = inputs != nullptr && outputs != nullptr &&
                  PyObject_SetAttrString(type, "input_names", inputs) == 0 &&
                  PyObject_SetAttrString(type, "output_names", outputs) == 0 &&
                  PyModule_AddObject(module, name, type) == 0;
  Py_XDECREF(inputs);
  Py_XDECREF(outputs);
  if (!ok) Py_DECREF(type);
  return ok;
}

// The Python class of a class that `kforge compile` generated: Model(params=None), load_parameters(path),
// set_num_threads(n), run(*inputs, **inputs_by_name) -> output or tuple of outputs, input_names, output_names. run() releases the GIL
// while the program runs; one call at a time per object (the C++ class's rule), others get a RuntimeError.
template <typename Model>
class ModelType {
 public:
  struct Object {
    PyObject_HEAD
    Model* model;
    bool busy;
    // The outputs of the last run. A run writes into them again (no allocation, as the C++ class does for the
    // same output tensors) when nothing returned earlier still refers to their memory; otherwise into new ones.
    Tensor* outputs;
  };

  // Creates the type `qualified_name` ("module.Name") and adds it to `module` as `name`.
  static bool add(PyObject* module, const char* qualified_name, const char* name, const char* doc) {
    static PyMethodDef methods[] = {
        {"load_parameters", load_parameters, METH_O,
         "load_parameters(path): reads every parameter from Paddle's .pdiparams file."},
        {"set_num_threads", set_num_threads, METH_O,
         "set_num_threads(n): the threads the kernels may use (the C++ class's set_num_threads)."},
        {"run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(run)), METH_FASTCALL | METH_KEYWORDS,
         "run(*inputs) -> outputs: the inputs in input_names order or by name; the outputs as numpy arrays (CPU) or "
         "DLPack capsules (GPU), one object for one output, a tuple for several. Releases the GIL."},
        {nullptr, nullptr, 0, nullptr}};
    static PyType_Slot slots[] = {{Py_tp_new, reinterpret_cast<void*>(create)},
                                  {Py_tp_init, reinterpret_cast<void*>(init)},
                                  {Py_tp_dealloc, reinterpret_cast<void*>(dealloc)},
                                  {Py_tp_methods, methods},
                                  {Py_tp_doc, const_cast<char*>(doc)},
                                  {0, nullptr}};
    static PyType_Spec spec = {qualified_name, sizeof(Object), 0, Py_TPFLAGS_DEFAULT, slots};
    return add_model_type(module, name, &spec, Model::kInputNames, Model::kOutputNames);
  }

 private:
  static PyObject* create(PyTypeObject* type, PyObject*, PyObject*) {
    PyObject* self = type->tp_alloc(type, 0);
    if (self == nullptr) return nullptr;
    Object* obj = reinterpret_cast<Object*>(self);
    obj->model = new (std::nothrow) Model();
    obj->busy = false;
    obj->outputs = new (std::nothrow) Tensor[Model::kNumOutputs + 1];
    if (obj->model == nullptr || obj->outputs == nullptr) {
      Py_DECREF(self);
      return PyErr_NoMemory();
    }
    return self;
  }

  static void dealloc(PyObject* self) {
    PyTypeObject* type = Py_TYPE(self);
    delete reinterpret_cast<Object*>(self)->model;
    delete[] reinterpret_cast<Object*>(self)->outputs;
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

  static PyObject* load_parameters(PyObject* self, PyObject* path) {
    PyObject* bytes = nullptr;
    if (!PyUnicode_FSConverter(path, &bytes)) return nullptr;
    Object* obj = reinterpret_cast<Object*>(self);
    if (obj->busy) {
      Py_DECREF(bytes);
      PyErr_SetString(PyExc_RuntimeError, "load_parameters(): the model is running in another thread");
      return nullptr;
    }
    const Status status = obj->model->load_parameters(PyBytes_AS_STRING(bytes));
    Py_DECREF(bytes);
    if (!status.ok()) return raise_status("load_parameters", status);
    Py_RETURN_NONE;
  }

  static PyObject* set_num_threads(PyObject* self, PyObject* value) {
    static const char* const kNames[] = {"threads", nullptr};
    static const bool kRequired[] = {true, false};
    static const Signature kSig{"set_num_threads", kNames, kRequired, 1};
    int threads = 0;
    if (!convert(value, Arg{&kSig, 0}, &threads)) return nullptr;
    Object* obj = reinterpret_cast<Object*>(self);
    if (obj->busy) {
      PyErr_SetString(PyExc_RuntimeError, "set_num_threads(): the model is running in another thread");
      return nullptr;
    }
    const Status status = obj->model->set_num_threads(threads);
    if (!status.ok()) return raise_status("set_num_threads", status);
    Py_RETURN_NONE;
  }

  static PyObject* run(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    constexpr size_t kIn = Model::kNumInputs;
    constexpr size_t kOut = Model::kNumOutputs;
    static bool required[kIn + 1] = {};
    static const Signature sig = [] {
      for (size_t i = 0; i < kIn; ++i) required[i] = true;
      return Signature{"run", Model::kInputNames.data(), required, static_cast<Py_ssize_t>(kIn)};
    }();
    PyObject* slots[kIn + 1];
    if (!parse_arguments(sig, args, nargs, kwnames, slots)) return nullptr;
    InputTensor inputs[kIn + 1];
    const Tensor* input_ptrs[kIn + 1] = {};
    for (size_t i = 0; i < kIn; ++i) {
      if (!inputs[i].from(slots[i], Arg{&sig, static_cast<Py_ssize_t>(i)})) return nullptr;
      input_ptrs[i] = inputs[i].get_if();
    }
    Object* obj = reinterpret_cast<Object*>(self);
    if (obj->busy) {
      PyErr_SetString(PyExc_RuntimeError, "run(): the model is already running in another thread");
      return nullptr;
    }
    Tensor* outputs = obj->outputs;
    Tensor* output_ptrs[kOut + 1] = {};
    for (size_t i = 0; i < kOut; ++i) {
      // Still shared with an array returned before (or aliasing an input): leave that memory alone.
      if (outputs[i].holder.use_count() != 1) outputs[i] = Tensor{};
      output_ptrs[i] = &outputs[i];
    }
    obj->busy = true;
    Status status;
    Py_BEGIN_ALLOW_THREADS
    status = obj->model->run(TensorList{input_ptrs, kIn}, MutableTensorList{output_ptrs, kOut});
    Py_END_ALLOW_THREADS
    obj->busy = false;
    if (!status.ok()) return raise_status("run", status);
    if (kOut == 1) return to_numpy_or_dlpack(Tensor(outputs[0]));
    PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(kOut));
    for (size_t i = 0; tuple != nullptr && i < kOut; ++i) {
      PyObject* item = to_numpy_or_dlpack(Tensor(outputs[i]));
      if (item == nullptr) {
        Py_CLEAR(tuple);
        break;
      }
      PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), item);
    }
    return tuple;
  }
};

}  // namespace kforge::python

#endif  // KFORGE_PYTHON_H_
