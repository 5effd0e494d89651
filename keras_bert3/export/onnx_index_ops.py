"""Index arithmetic in standard ONNX ops: ranges, repeats, slices and runs of a flat tensor
laid out as rows (the string graphs keep ragged values flat, with where each row starts)."""

from onnx import TensorProto
from onnx import helper

from keras_bert3.export.onnx_graph import GraphBuilder


def length_of(g: GraphBuilder, x: str) -> str:
    """The size of `x`'s first dimension, an int64 scalar."""
    return g.op("Squeeze", [slice_of(g, g.op("Shape", [x]), 0, 1)])


def width_of(g: GraphBuilder, x: str) -> str:
    """The size of `x`'s second dimension, an int64 scalar."""
    return g.op("Squeeze", [slice_of(g, g.op("Shape", [x]), 1, 2)])


def index_range(g: GraphBuilder, count: str) -> str:
    """`[0, 1, ..., count - 1]`: int64 `(count,)` for an int64 scalar `count`."""
    return g.op("Range", [g.const(0), count, g.const(1)])


def column_indices(g: GraphBuilder, count: str) -> str:
    """`[[0, 1, ..., count - 1]]`: int64 `(1, count)` for an int64 scalar `count`."""
    return g.op("Unsqueeze", [index_range(g, count), g.const([0])])


def zeros_of_shape(g: GraphBuilder, shape: str) -> str:
    """int64 zeros of the int64 `shape` (a 1-D tensor)."""
    return g.op("ConstantOfShape", [shape], value=helper.make_tensor("zero", TensorProto.INT64, [1], [0]))


def ones_like(g: GraphBuilder, x: str) -> str:
    """int64 ones of `x`'s (int64) shape."""
    return g.op("Add", [g.op("Mul", [x, g.const(0)]), g.const(1)])


def slice_of(g: GraphBuilder, x: str, start: int, end: int) -> str:
    """`x[start:end]` along the first dimension."""
    return g.op("Slice", [x, g.const([start]), g.const([end])])


def without_last_row(g: GraphBuilder, x: str) -> str:
    """`x[:-1]`: drops the row of the text added by `text_model`."""
    return slice_of(g, x, 0, -1)


def repeat_indices(g: GraphBuilder, counts: str) -> str:
    """`np.repeat(np.arange(len(counts)), counts)`: int64 `(sum(counts),)` for int64 `counts >= 0`."""
    ends = g.op("CumSum", [counts, g.const(0)])
    total = g.op("ReduceSum", [counts, g.const([0])], keepdims=1)  # (1,)
    starts = g.op("Sub", [ends, counts])
    marks = g.op(
        "ScatterElements",
        [zeros_of_shape(g, g.op("Add", [total, g.const([1])])), starts, ones_like(g, starts)],
        axis=0,
        reduction="add",  # Items repeated 0 times mark the same start as the next one.
    )
    return slice_of(g, g.op("Sub", [g.op("CumSum", [marks, g.const(0)]), g.const(1)]), 0, -1)


def runs_to_dense(g: GraphBuilder, values: str, starts: str, lengths: str, padding) -> str:
    """`values[starts[i] : starts[i] + lengths[i]]` as row `i` of a `(rows,
    longest)` tensor padded with `padding` (at least one column)."""
    longest = g.op("ReduceMax", [g.op("Concat", [lengths, g.const([1])], axis=0)], keepdims=0)
    position = column_indices(g, longest)
    index = g.op("Add", [g.op("Unsqueeze", [starts, g.const([1])]), position])
    inside = g.op("Less", [position, g.op("Unsqueeze", [lengths, g.const([1])])])
    padded = g.op("Concat", [values, g.const([padding])], axis=0)
    index = g.op("Where", [inside, index, g.op("Shape", [values])])
    return g.op("Gather", [padded, index], axis=0)
