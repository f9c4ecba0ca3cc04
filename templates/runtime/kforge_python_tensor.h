// kforge_python_tensor.h: the module's Tensor type (kforge_python.h lists the other parts): a kforge::Tensor
// owned by Python, read by numpy through the buffer protocol and by every framework through DLPack (the type is
// made by add_tensor_type in kforge_python_inputs.h, beside its constructor Tensor(data)); the helpers every
// Python type of a kforge module uses (creating it, freeing its objects).
#ifndef KFORGE_PYTHON_TENSOR_H_
#define KFORGE_PYTHON_TENSOR_H_

#include <cstdint>
#include <new>
#include <utility>

#include "kforge_python_args.h"
#include "kforge_python_dlpack.h"

namespace kforge::python {

// ---- what every type of a module shares --------------------------------------------------------------------

// Creates the type of `spec` and adds it to `module` as `name`. With `keep`, *keep holds a second reference
// for the module's lifetime (the type's own functions read it). The type (borrowed), or null on error.
inline PyObject* add_type(PyObject* module, const char* name, PyType_Spec* spec, PyTypeObject** keep = nullptr) {
  PyObject* type = PyType_FromSpec(spec);
  if (type == nullptr) return nullptr;
  if (keep != nullptr) {
    *keep = reinterpret_cast<PyTypeObject*>(type);
    Py_INCREF(type);  // the module's reference; *keep holds the other
  }
  if (PyModule_AddObject(module, name, type) < 0) {
    Py_DECREF(type);
    return nullptr;
  }
  return type;
}

// tp_dealloc of a type whose objects are an `Object`: PyObject_HEAD, then C++ members that the object's
// creation constructed in place. Destroys them, frees the object and lets go of its (heap) type.
template <typename Object>
void dealloc_object(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  reinterpret_cast<Object*>(self)->~Object();
  type->tp_free(self);
  Py_DECREF(type);
}

// ---- the Tensor type -------------------------------------------------------------------------------------

// A kforge::Tensor owned by Python. Exports the buffer protocol (CPU; numpy.asarray(t) is zero-copy) and
// __dlpack__ / __dlpack_device__ (torch.from_dlpack, paddle.from_dlpack, numpy.from_dlpack).
// A DeviceTensor (kforge_python_device.h) begins with one, so that the getters below read both.
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

inline PyObject* tensor_dlpack(PyObject* self, PyObject* const*, Py_ssize_t, PyObject*) {
  // stream / max_version / dl_device / copy are accepted and ignored: the memory is ready when run() returns.
  return to_dlpack(reinterpret_cast<PyTensor*>(self)->tensor);
}

inline PyObject* tensor_dlpack_device(PyObject* self, PyObject*) {
  const Tensor& t = reinterpret_cast<PyTensor*>(self)->tensor;
  if (t.place.backend == Backend::kGPU) return Py_BuildValue("(ii)", static_cast<int>(dlpack::kCUDA), t.place.device);
  return Py_BuildValue("(ii)", static_cast<int>(dlpack::kCPU), 0);
}

// numpy.asarray(obj), the function looked up once.
inline PyObject* numpy_asarray(PyObject* obj) {
  static PyObject* asarray = nullptr;
  if (asarray == nullptr) {
    PyObject* numpy = PyImport_ImportModule("numpy");
    if (numpy == nullptr) return nullptr;
    asarray = PyObject_GetAttrString(numpy, "asarray");
    Py_DECREF(numpy);
    if (asarray == nullptr) return nullptr;
  }
  return PyObject_CallOneArg(asarray, obj);
}

inline PyObject* tensor_numpy(PyObject* self, PyObject*) { return numpy_asarray(self); }

inline PyObject* tensor_shape(PyObject* self, void*) {
  const Tensor& t = reinterpret_cast<PyTensor*>(self)->tensor;
  PyObject* shape = PyTuple_New(t.ndim);
  if (shape == nullptr) return nullptr;
  for (int32_t i = 0; i < t.ndim; ++i) PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(t.dims[i]));
  return shape;
}

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

// The getters of a Tensor; a DeviceTensor has them too.
inline PyGetSetDef tensor_getset[] = {{"shape", tensor_shape, nullptr, "The dims, a tuple.", nullptr},
                                      {"dtype", tensor_dtype, nullptr, "The dtype's name, e.g. 'float32'.", nullptr},
                                      {"ndim", tensor_ndim, nullptr, "The rank.", nullptr},
                                      {nullptr, nullptr, nullptr, nullptr, nullptr}};

// A new Python object of `type` (the Tensor type, or a type whose objects begin with a PyTensor) owning
// `tensor` (moved).
inline PyObject* wrap(Tensor&& tensor, PyTypeObject* type = tensor_type()) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (obj == nullptr) return nullptr;
  new (&reinterpret_cast<PyTensor*>(obj)->tensor) Tensor(std::move(tensor));
  return obj;
}

// A numpy array sharing the memory of the CPU tensor `tensor` (moved into a Tensor that the array keeps).
inline PyObject* numpy_array(Tensor&& tensor) {
  PyObject* wrapped = wrap(std::move(tensor));
  if (wrapped == nullptr) return nullptr;
  PyObject* array = numpy_asarray(wrapped);
  Py_DECREF(wrapped);
  return array;
}

}  // namespace kforge::python

#endif  // KFORGE_PYTHON_TENSOR_H_
