"""Makes paddle2onnx's Range inputs scalars, in place: paddle2onnx 2.1 feeds `Range` the one-element tensors [1] of
a paddle.arange over tensors (the GPT decoder's positions), which ONNX Runtime refuses ("Input to 'Range' op should
be scalars (Tensor with only one element and shape empty)"). Each Range input goes through a Reshape to shape []
(the same value). Run by export.py with the Python that converts (it has the onnx package):

    onnx_scalars.py MODEL.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main():
    path = sys.argv[1]
    model = onnx.load(path)
    graph = model.graph
    shape = "kforge_scalar_shape"
    nodes, count = [], 0
    for node in graph.node:
        if node.op_type == "Range":
            for i, name in enumerate(node.input):
                if "_kforge_scalar_" in name:  # made scalar by an earlier run
                    continue
                scalar = f"{name}_kforge_scalar_{count}"
                nodes.append(helper.make_node("Reshape", [name, shape], [scalar]))
                node.input[i] = scalar
                count += 1
        nodes.append(node)
    if count:
        graph.initializer.append(numpy_helper.from_array(np.zeros([0], np.int64), shape))
        del graph.node[:]
        graph.node.extend(nodes)
        onnx.save(model, path)
    print(f"onnx_scalars.py: {count} Range inputs made scalars")


if __name__ == "__main__":
    main()
