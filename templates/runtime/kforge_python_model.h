// kforge_python_model.h: the Python class of a class that `kforge compile --python` generated (kforge_python.h
// lists the other parts). `ModelTypeBase` is all that the CPU and the CUDA class share: the object and its state,
// Model(params=None), load_parameters(path), run(*inputs, **inputs_by_name) with its argument parsing, the
// one-call-at-a-time rule and the outputs as one object or a tuple, input_names and output_names. A target's type
// derives from it and supplies its state and a few hooks (the list below): `ModelType` here for the CPU class,
// `cuda::CudaModelType` in kforge_python_cuda.h for the CUDA class, which differ in where tensors live and who
// orders the work.
#ifndef KFORGE_PYTHON_MODEL_H_
#define KFORGE_PYTHON_MODEL_H_

#include <array>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

#include "kforge_python_args.h"
#include "kforge_python_dlpack.h"
#include "kforge_python_inputs.h"
#include "kforge_python_tensor.h"

namespace kforge::python {

// A tuple of the names in `items` (a compiled model type's input_names / output_names).
template <size_t N>
inline PyObject* name_tuple(const std::array<const char*, N>& items) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(N));
  for (size_t i = 0; tuple != nullptr && i < N; ++i) {
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), PyUnicode_FromString(items[i]));
  }
  return tuple;
}

// The Python type of a generated class `Model`, for the target type `Target` that derives from it (CRTP) with
// `State`, its objects' C++ state, which holds at least `Model model` and `bool busy`. run() releases the GIL
// while the program runs; one call at a time per object (the C++ class's rule), others get a RuntimeError.
//
// Target supplies, as static members (where a default is named, the base's own serves when Target has none):
//   Input                                          what holds one input while the model runs
//   input(State&, i, PyObject*, const Arg&, Input&, const Tensor**)  takes input i and points at its tensor
//   output(State&, i) -> Tensor*                   where the run writes output i
//   result(State&, i) -> PyObject*                 output i as run() returns it
//   load(State&, const char* path) -> PyObject*    load_parameters(path), the model not running: None or null
//   created(State&) -> bool                        a new object's setup (default: none)
//   RunScope(State&), ok()                         held around taking the inputs and running (default: nothing)
//   before_launch(State&) -> bool                  after the inputs and outputs are placed (default: nothing)
//   launch(State&, TensorList, MutableTensorList) -> Status   the run, without the GIL (default: model.run)
//   finish(PyObject* self, State&) -> bool         after a run that succeeded (default: nothing)
// A bool hook that returns false has set a Python exception.
template <typename Target, typename Model, typename State>
class ModelTypeBase {
 public:
  static constexpr size_t kIn = Model::kNumInputs;
  static constexpr size_t kOut = Model::kNumOutputs;

 protected:
  struct Object {
    PyObject_HEAD
    std::unique_ptr<State> state;
  };

  static State& state_of(PyObject* self) { return *reinterpret_cast<Object*>(self)->state; }

  // Creates the type `qualified_name` ("module.Name") with the target's `methods` (load_parameters and run
  // among them) and `getset`, and adds it to `module` as `name`, with the class attributes input_names and
  // output_names.
  static bool add_model_type(PyObject* module, const char* qualified_name, const char* name, const char* doc,
                             PyMethodDef* methods, PyGetSetDef* getset) {
    static PyType_Slot slots[] = {{Py_tp_new, reinterpret_cast<void*>(create)},
                                  {Py_tp_init, reinterpret_cast<void*>(init)},
                                  {Py_tp_dealloc, reinterpret_cast<void*>(dealloc_object<Object>)},
                                  {Py_tp_methods, methods},
                                  {Py_tp_getset, getset},
                                  {Py_tp_doc, const_cast<char*>(doc)},
                                  {0, nullptr}};
    static PyType_Spec spec = {qualified_name, sizeof(Object), 0, Py_TPFLAGS_DEFAULT, slots};
    PyObject* type = add_type(module, name, &spec);
    if (type == nullptr) return false;
    PyObject* inputs = name_tuple(Model::kInputNames);
    PyObject* outputs = name_tuple(Model::kOutputNames);
    const bool ok = inputs != nullptr && outputs != nullptr &&
                    PyObject_SetAttrString(type, "input_names", inputs) == 0 &&
                    PyObject_SetAttrString(type, "output_names", outputs) == 0;
    Py_XDECREF(inputs);
    Py_XDECREF(outputs);
    return ok;
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

  // load_parameters(path): the target's load, one call at a time.
  static PyObject* load_parameters(PyObject* self, PyObject* path) {
    PyObject* bytes = nullptr;
    if (!PyUnicode_FSConverter(path, &bytes)) return nullptr;
    State& state = state_of(self);
    Busy busy(state, "load_parameters");
    PyObject* result = busy.ok() ? Target::load(state, PyBytes_AS_STRING(bytes)) : nullptr;
    Py_DECREF(bytes);
    return result;
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
    typename Target::RunScope scope(state);
    if (!scope.ok()) return nullptr;
    typename Target::Input inputs[kIn + 1];
    const Tensor* input_ptrs[kIn + 1] = {};
    for (size_t i = 0; i < kIn; ++i) {
      const Arg arg{&sig, static_cast<Py_ssize_t>(i)};
      if (!Target::input(state, i, slots[i], arg, inputs[i], &input_ptrs[i])) return nullptr;
    }
    Tensor* output_ptrs[kOut + 1] = {};
    for (size_t i = 0; i < kOut; ++i) output_ptrs[i] = Target::output(state, i);
    if (!Target::before_launch(state)) return nullptr;
    Status status;
    Py_BEGIN_ALLOW_THREADS
    status = Target::launch(state, TensorList{input_ptrs, kIn}, MutableTensorList{output_ptrs, kOut});
    Py_END_ALLOW_THREADS
    if (!status.ok()) return raise_status("run", status);
    if (!Target::finish(self, state)) return nullptr;
    if (kOut == 1) return Target::result(state, 0);
    PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(kOut));
    for (size_t i = 0; tuple != nullptr && i < kOut; ++i) {
      PyObject* item = Target::result(state, i);
      if (item == nullptr) {
        Py_CLEAR(tuple);
        break;
      }
      PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), item);
    }
    return tuple;
  }

  // The default hooks.
  static bool created(State&) { return true; }
  struct RunScope {
    explicit RunScope(State&) {}
    bool ok() const { return true; }
  };
  static bool before_launch(State&) { return true; }
  static Status launch(State& state, TensorList inputs, MutableTensorList outputs) {
    return state.model.run(inputs, outputs);
  }
  static bool finish(PyObject*, State&) { return true; }

 private:
  static PyObject* create(PyTypeObject* type, PyObject*, PyObject*) {
    PyObject* self = type->tp_alloc(type, 0);
    if (self == nullptr) return nullptr;
    std::unique_ptr<State>& state = reinterpret_cast<Object*>(self)->state;
    new (&state) std::unique_ptr<State>(new (std::nothrow) State());
    if (state == nullptr) {
      Py_DECREF(self);
      return PyErr_NoMemory();
    }
    if (!Target::created(*state)) {
      Py_DECREF(self);
      return nullptr;
    }
    return self;
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
};

// ---- the CPU class ---------------------------------------------------------------------------------------

// A CPU output as a numpy array sharing the tensor's memory (numpy.asarray over the buffer protocol); a GPU output
// as a DLPack capsule.
inline PyObject* to_numpy_or_dlpack(Tensor&& tensor) {
  if (tensor.place.backend == Backend::kGPU) return to_dlpack(tensor);
  return numpy_array(std::move(tensor));
}

template <typename Model>
struct CpuModelState {
  Model model;
  bool busy = false;
  // The outputs of the last run. A run writes into them again (no allocation, as the C++ class does for the
  // same output tensors) when nothing returned earlier still refers to their memory; otherwise into new ones.
  std::array<Tensor, Model::kNumOutputs + 1> outputs;
};

// The Python class of a CPU class: Model(params=None), load_parameters(path), set_num_threads(n),
// run(*inputs, **inputs_by_name) -> output or tuple of outputs (numpy arrays), input_names, output_names.
template <typename Model>
class ModelType : public ModelTypeBase<ModelType<Model>, Model, CpuModelState<Model>> {
  using Base = ModelTypeBase<ModelType<Model>, Model, CpuModelState<Model>>;
  using State = CpuModelState<Model>;
  friend Base;

 public:
  // Creates the type `qualified_name` ("module.Name") and adds it to `module` as `name`.
  static bool add(PyObject* module, const char* qualified_name, const char* name, const char* doc) {
    static PyMethodDef methods[] = {
        {"load_parameters", Base::load_parameters, METH_O,
         "load_parameters(path): reads every parameter from Paddle's .pdiparams file."},
        {"set_num_threads", set_num_threads, METH_O,
         "set_num_threads(n): the threads the kernels may use (the C++ class's set_num_threads)."},
        {"run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Base::run)), METH_FASTCALL | METH_KEYWORDS,
         "run(*inputs) -> outputs: the inputs in input_names order or by name; the outputs as numpy arrays (CPU) or "
         "DLPack capsules (GPU), one object for one output, a tuple for several. Releases the GIL."},
        {nullptr, nullptr, 0, nullptr}};
    static PyGetSetDef getset[] = {{nullptr, nullptr, nullptr, nullptr, nullptr}};
    return Base::add_model_type(module, qualified_name, name, doc, methods, getset);
  }

 private:
  using Input = InputTensor;

  static PyObject* load(State& state, const char* path) {
    const Status status = state.model.load_parameters(path);
    if (!status.ok()) return raise_status("load_parameters", status);
    Py_RETURN_NONE;
  }

  static PyObject* set_num_threads(PyObject* self, PyObject* value) {
    static const char* const kNames[] = {"threads", nullptr};
    static const bool kRequired[] = {true, false};
    static const Signature kSig{"set_num_threads", kNames, kRequired, 1};
    int threads = 0;
    if (!convert_int(value, Arg{&kSig, 0}, &threads)) return nullptr;
    State& state = Base::state_of(self);
    if (!Base::not_busy(state, "set_num_threads")) return nullptr;
    const Status status = state.model.set_num_threads(threads);
    if (!status.ok()) return raise_status("set_num_threads", status);
    Py_RETURN_NONE;
  }

  // Any tensor argument: a kforge Tensor as it is, a buffer or a DLPack tensor as a view (kforge_python_inputs.h).
  static bool input(State&, size_t, PyObject* obj, const Arg& arg, Input& in, const Tensor** tensor) {
    if (!in.from(obj, arg)) return false;
    *tensor = in.get_if();
    return true;
  }

  static Tensor* output(State& state, size_t i) {
    // Still shared with an array returned before (or aliasing an input): leave that memory alone.
    Tensor& out = state.outputs[i];
    if (out.holder.use_count() != 1) out = Tensor{};
    return &out;
  }

  static PyObject* result(State& state, size_t i) { return to_numpy_or_dlpack(Tensor(state.outputs[i])); }
};

}  // namespace kforge::python

#endif  // KFORGE_PYTHON_MODEL_H_
