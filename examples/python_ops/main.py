#!/usr/bin/env python3
"""Calls the op library that `kforge ops --python demo` generated from ../ops_api/ops.yaml and prints the results:
the same calls, and the same lines, as ../ops_api/main.cc makes through the C++ API."""
import numpy as np

import demo


def show(label, t):
    a = np.asarray(t)
    dims = "[" + ", ".join(str(d) for d in a.shape) + "]"
    values = ", ".join("%g" % v if a.dtype == np.float32 else "%d" % v for v in a.reshape(-1))
    print("%-28s %-8s %-9s [%s]" % (label, a.dtype, dims, values))


a = np.array([[1, -2, 3], [-4, 5, -6]], dtype=np.float32)
row = np.array([10, 20, 30], dtype=np.float32)
show("a", a)
show("row", row)
show("add(a, row)", demo.add(a, row))  # broadcasting
show("relu(a)", demo.relu(a))
show("scale(a, 2, 1)", demo.scale(a, 2.0, 1.0))  # bias_after_scale defaults to true
show("matmul(a, a^T)", demo.matmul(a, a, False, True))
show("softmax(row)", demo.softmax(row))  # axis = -1
show("sum(a)", demo.sum(a))  # every axis, dtype of the input

view = demo.reshape(a, [3, 2])
show("reshape(a, [3, 2])", view)
print("%-28s %s" % ("  shares a's buffer", "yes" if np.asarray(view).ctypes.data == a.ctypes.data else "no"))

show("concat([a, a])", demo.concat([a, a]))  # axis = 0
for i, part in enumerate(demo.split_with_num(a, 3, 1)):
    show("split_with_num(a, 3)[%d]" % i, part)

show("layer_norm(a)", demo.layer_norm(a))  # scale and bias None, mean and variance intermediate

show("full([2, 2], 7)", demo.full([2, 2], 7.0))  # float32 on the CPU by default
show("full_like(row, 0.5)", demo.full_like(row, 0.5))
show("ones([3], int64)", demo.ones([3], "int64"))  # invoke: full(shape, 1, dtype, place)

b = demo.Tensor(a)  # the module's own tensor (a copy): what in-place functions update
before = np.asarray(b).ctypes.data
demo.relu_(b)
show("relu_(b)", b)
print("%-28s %s" % ("  same buffer", "yes" if np.asarray(b).ctypes.data == before else "no"))

try:
    demo.add(a, np.ones(4, np.float32))
except ValueError as e:
    print("%-28s %s" % ("add(a, [4 elements])", e))
try:
    demo.relu("a")
except TypeError as e:
    print("%-28s %s" % ("relu('a')", e))

info = demo.args_info["scale"]
inputs = "".join(" %s %s," % (i["type"], i["name"]) for i in info["inputs"])
attrs = ", ".join("%s %s = %s%s" % (t["type"], t["name"], t["default"], " (mutable)" if t["mutable"] else "")
                  for t in info["attributes"])
print("args of scale:%s %s" % (inputs, attrs))
print("%d ops in the args-info table" % len(demo.args_info))
