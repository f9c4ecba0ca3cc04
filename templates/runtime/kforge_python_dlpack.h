// kforge_python_dlpack.h: DLPack, the tensor exchange every framework speaks (kforge_python.h lists the other
// parts): its structs, the DLPack 1.2 C exchange API a tensor type may publish, dtypes both ways, and the
// "dltensor" capsule of a kforge tensor's memory (Tensor.__dlpack__ here, DeviceTensor's in kforge_python_device.h).
#ifndef KFORGE_PYTHON_DLPACK_H_
#define KFORGE_PYTHON_DLPACK_H_

#include <cstdint>
#include <iterator>
#include <memory>
#include <new>

#include "kforge_python_args.h"

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

// The dtypes kforge and DLPack share, one lane each: the one table both directions read.
struct DlpackDtype {
  DataType dtype;
  uint8_t code;
  uint8_t bits;
};
inline constexpr DlpackDtype kDlpackDtypes[] = {
    {DataType::kBool, dlpack::kBool, 8},         {DataType::kInt8, dlpack::kInt, 8},
    {DataType::kInt16, dlpack::kInt, 16},        {DataType::kInt32, dlpack::kInt, 32},
    {DataType::kInt64, dlpack::kInt, 64},        {DataType::kUInt8, dlpack::kUInt, 8},
    {DataType::kFloat16, dlpack::kFloat, 16},    {DataType::kFloat32, dlpack::kFloat, 32},
    {DataType::kFloat64, dlpack::kFloat, 64},    {DataType::kBFloat16, dlpack::kBfloat, 16},
    {DataType::kComplex64, dlpack::kComplex, 64}, {DataType::kComplex128, dlpack::kComplex, 128}};

// The DLPack dtype of a kforge dtype; false when DLPack has none.
inline bool dlpack_dtype(DataType dtype, dlpack::DataType* out) {
  for (const DlpackDtype& d : kDlpackDtypes) {
    if (d.dtype != dtype) continue;
    *out = {d.code, d.bits, 1};
    return true;
  }
  return false;
}

// The kforge dtype of a DLPack dtype of one lane; false when kforge has none.
inline bool dtype_of_dlpack(dlpack::DataType t, DataType* out) {
  for (const DlpackDtype& d : kDlpackDtypes) {
    if (d.code != t.code || d.bits != t.bits) continue;
    *out = d.dtype;
    return true;
  }
  return false;
}

// The DLPack export: the capsule's manager keeps a copy of the tensor (sharing its bytes) and the shape. A
// DeviceTensor's export (kforge_python_device.h) adds what orders its stream, hence the virtual destructor.
struct DlpackExport {
  dlpack::ManagedTensor managed;
  Tensor keep;
  int64_t shape[kMaxRank];
  virtual ~DlpackExport() = default;
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

// A "dltensor" capsule sharing `tensor`'s bytes through `exp` (taken over; null: out of memory), which
// `deleter` frees when the consumer is done.
inline PyObject* dlpack_capsule(DlpackExport* exp, const Tensor& tensor, void (*deleter)(dlpack::ManagedTensor*)) {
  if (exp == nullptr) return PyErr_NoMemory();
  dlpack::Tensor& dl = exp->managed.dl_tensor;
  if (!dlpack_dtype(tensor.dtype, &dl.dtype)) {
    delete exp;
    PyErr_Format(PyExc_BufferError, "a %s tensor cannot be exported through DLPack", name_of(tensor.dtype));
    return nullptr;
  }
  exp->keep = tensor;
  for (int32_t i = 0; i < tensor.ndim; ++i) exp->shape[i] = tensor.dims[i];
  dl.data = tensor.data;
  dl.device = tensor.place.backend == Backend::kGPU ? dlpack::Device{dlpack::kCUDA, tensor.place.device}
                                                    : dlpack::Device{dlpack::kCPU, 0};
  dl.ndim = tensor.ndim;
  dl.shape = exp->shape;
  dl.strides = nullptr;  // compact row-major
  dl.byte_offset = 0;
  exp->managed.manager_ctx = exp;
  exp->managed.deleter = deleter;
  PyObject* capsule = PyCapsule_New(&exp->managed, "dltensor", dlpack_capsule_destructor);
  if (capsule == nullptr) delete exp;
  return capsule;
}

inline PyObject* to_dlpack(const Tensor& tensor) {
  return dlpack_capsule(new (std::nothrow) DlpackExport(), tensor, dlpack_export_deleter);
}

}  // namespace kforge::python

#endif  // KFORGE_PYTHON_DLPACK_H_
