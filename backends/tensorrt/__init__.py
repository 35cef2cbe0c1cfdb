"""The TensorRT backend: ``trt`` dialect -> TensorRT engines (or the CPU reference executor).

* ``reference_executor``: run a ``trt`` function on CPU with TensorRT's documented semantics
  (in the reference interpreter's ``trt`` table, ``ir/interpreter/trt_functions.py``).
* ``emitter`` / ``runtime``: build and run real engines (``tensorrt`` imported lazily).
* ``registry`` / ``converters``: aten schema -> converter, used by ``convert-torch-to-trt``.
"""
