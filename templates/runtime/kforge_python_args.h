// kforge_python_args.h: the argument side of every kforge Python module (kforge_python.h lists the others):
// where an argument goes (Signature, Arg) for messages, the TypeError / ValueError that name it, a C++ Status as a
// ValueError, METH_FASTCALL argument parsing with Paddle's conventions, and ints from Python.
//
// Plain CPython API (no pybind11): the per-call overhead is the point of these modules, and a METH_FASTCALL
// function that reads its own Tensor type by pointer is cheaper than any binding layer's dispatch
// (BENCHMARKS.md, "Python bindings"). It needs Python.h (python3-dev) and kforge_runtime.h, and
// KFORGE_PYTHON_MODULE defined to the module's name.
#ifndef KFORGE_PYTHON_ARGS_H_
#define KFORGE_PYTHON_ARGS_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kforge_runtime.h"

#ifndef KFORGE_PYTHON_MODULE
#error "define KFORGE_PYTHON_MODULE (the extension module's name) before including kforge_python.h"
#endif
#define KFORGE_PYTHON_STR2(x) #x
#define KFORGE_PYTHON_STR(x) KFORGE_PYTHON_STR2(x)

namespace kforge::python {

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

// ---- ints ------------------------------------------------------------------------------------------------

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

}  // namespace kforge::python

#endif  // KFORGE_PYTHON_ARGS_H_
