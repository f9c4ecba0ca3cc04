// kforge_python_ops.h: what the functions of an op module (`kforge ops --python`, templates/python/
// ops_module.cc.j2) need beyond tensors in (kforge_python.h lists the other parts): attributes from Python
// numbers, lists, names and tensors; results out (optional outputs, Tensor[], in-place arguments, tuples); the
// args-info registry as a dict.
#ifndef KFORGE_PYTHON_OPS_H_
#define KFORGE_PYTHON_OPS_H_

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kforge_python_args.h"
#include "kforge_python_inputs.h"
#include "kforge_python_tensor.h"

namespace kforge::python {

// ---- attributes in ---------------------------------------------------------------------------------------

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

// ---- results out -----------------------------------------------------------------------------------------

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

}  // namespace kforge::python

#endif  // KFORGE_PYTHON_OPS_H_
