// kforge_python.h: what the CPython extension modules of `kforge ops --python` and `kforge compile --python`
// include. Include it first in exactly one translation unit per module, after defining KFORGE_PYTHON_MODULE to
// the module's name; it needs Python.h (python3-dev) and nothing else. kforge writes its parts beside it, one
// concern each, every part including the ones it reads:
//
//   kforge_python_args.h     Signature and Arg (where an argument goes, for messages), the errors that name it,
//                            METH_FASTCALL argument parsing with Paddle's conventions, ints from Python
//   kforge_python_dlpack.h   DLPack: its structs, the C exchange API, dtypes both ways, the export capsule
//   kforge_python_tensor.h   the module's Tensor type (buffer protocol, DLPack), add_type, wrap
//   kforge_python_inputs.h   tensors in: InputTensor (buffer protocol, DLPack, zero-copy when compact),
//                            InputTensorList, Tensor(data) and add_tensor_type
//   kforge_python_ops.h      an op module's attributes in (numbers, lists, dtypes, places), results out and the
//                            args-info dict
//   kforge_python_model.h    a compiled class's Python type: ModelTypeBase, shared with the CUDA class of
//                            kforge_python_cuda.h, and ModelType, the CPU class's
//
// `kforge compile --target cuda --python` also writes kforge_python_cuda.h (the CUDA class on ModelTypeBase) and
// kforge_python_device.h (its streams and DeviceTensor outputs); docs/python.md describes the modules.
#ifndef KFORGE_PYTHON_H_
#define KFORGE_PYTHON_H_

#include "kforge_python_args.h"
#include "kforge_python_dlpack.h"
#include "kforge_python_tensor.h"
#include "kforge_python_inputs.h"
#include "kforge_python_ops.h"
#include "kforge_python_model.h"

#endif  // KFORGE_PYTHON_H_
