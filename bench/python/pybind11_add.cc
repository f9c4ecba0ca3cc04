// The same `add` as the generated module's, bound with pybind11 instead of the plain CPython API: the tensor
// conversion (InputTensor and the Tensor type: kforge_python_inputs.h and kforge_python_tensor.h, which
// kforge_python.h includes) and the C++ call are identical, so the difference bench_python.py measures is the
// binding layer's dispatch alone (argument matching, py::handle casts).
#define KFORGE_PYTHON_MODULE pybind11_add
#include "kforge_python.h"

#include <pybind11/pybind11.h>

#include "ref_api.h"

namespace py = pybind11;

PYBIND11_MODULE(pybind11_add, m) {
  if (!kforge::python::add_tensor_type(m.ptr())) throw py::error_already_set();
  m.def(
      "add",
      [](py::handle x, py::handle y) -> py::object {
        static const char* const kNames[] = {"x", "y", nullptr};
        static const bool kRequired[] = {true, true, false};
        static const kforge::python::Signature kSig{"add", kNames, kRequired, 2};
        kforge::python::InputTensor in_x, in_y;
        if (!in_x.from(x.ptr(), {&kSig, 0}) || !in_y.from(y.ptr(), {&kSig, 1})) throw py::error_already_set();
        kforge::Tensor out;
        const kforge::Status status = ref::add(in_x.get(), in_y.get(), &out);
        if (!status.ok()) throw py::value_error(status.message());
        return py::reinterpret_steal<py::object>(kforge::python::wrap(std::move(out)));
      },
      py::arg("x"), py::arg("y"));
}
