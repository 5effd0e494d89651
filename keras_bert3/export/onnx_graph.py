"""A BERT task as an ONNX graph on token ids: the textbook encoder (Devlin et al., 2019) in standard
ONNX ops, built from `model.weights` as numpy arrays so that one path serves TensorFlow and JAX.
Attention is written as PyTorch's BERT export writes it, the pattern onnxruntime fuses."""

import keras
import numpy as np
from onnx import TensorProto
from onnx import helper
from onnx import numpy_helper

OPSET = 17
INPUT_NAMES = ("token_ids", "segment_ids", "padding_mask")
MASKED_SCORE_DROP = 1e9  # As keras_bert3.ops.masked_softmax: masked keys' scores lowered by this.


class GraphBuilder:
    """Collects nodes and constants; `op(...)` returns its output's name (a list with `outputs` > 1).
    Names start with `prefix`, so that two builders' graphs can be joined."""

    def __init__(self, prefix: str = ""):
        self.nodes, self.initializers, self._count, self.prefix = [], [], 0, prefix

    def name(self, hint: str) -> str:
        self._count += 1
        return f"{self.prefix}{hint}_{self._count}"

    def const(self, value, hint: str = "const") -> str:
        name = self.name(hint)
        value = np.asarray(value)
        value = value.astype(object) if value.dtype.kind == "U" else value  # ONNX strings.
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, inputs: list, hint: str | None = None, *, outputs: int = 1, **attributes):
        names = [self.name(hint or op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=names[0], **attributes))
        return names[0] if outputs == 1 else names


def task_graph(model, *, name: str = "bert") -> "onnx.ModelProto":  # noqa: F821
    """`model` (a task) as an ONNX model: int32 `(batch, length)` `token_ids`, `segment_ids`,
    `padding_mask` in; the task's `serve_token_ids` outputs (float32; bool `chosen`) out."""
    weights = {w.path: _array(w) for w in model.weights}
    backbone = model.backbone
    g = GraphBuilder()
    choices = model.spec.inputs_per_choice  # Inputs (batch, choices, length): each choice a row of the encoder's.
    token_ids, segment_ids, padding_mask = choice_rows(g, INPUT_NAMES) if choices else INPUT_NAMES
    sequence = _encoder(g, backbone, backbone_weights(weights, backbone), token_ids, segment_ids, padding_mask)
    outputs = _task_head(model)(g, model, weights, sequence)
    for key, value in outputs.items():  # Graph outputs named as the task's outputs.
        g.nodes.append(helper.make_node("Identity", [value[0]], [key], name=f"output_{key}"))
    input_axes = ["batch", "choices", "length"] if choices else ["batch", "length"]
    graph = helper.make_graph(
        g.nodes,
        name,
        [helper.make_tensor_value_info(key, TensorProto.INT32, input_axes) for key in INPUT_NAMES],
        [helper.make_tensor_value_info(key, _element_type(key), value[1]) for key, value in outputs.items()],
        g.initializers,
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="keras_bert3")
    helper.set_model_props(result, {"task": type(model).__name__})  # For the serving side (`OnnxTextModel`).
    return result


def choice_rows(g: GraphBuilder, names) -> list[str]:
    """Inputs `(batch, choices, length)` as `(batch * choices, length)` rows."""
    length = g.op("Slice", [g.op("Shape", [names[0]]), g.const(np.array([2])), g.const(np.array([3]))])
    shape = g.op("Concat", [g.const(np.array([-1])), length], axis=0)
    return [g.op("Reshape", [name, shape]) for name in names]


def _element_type(output_name: str) -> int:
    """An output's ONNX type: bool for `chosen` (a multi-label classifier's labels), float32 for the others."""
    return TensorProto.BOOL if output_name == "chosen" else TensorProto.FLOAT


def backbone_weights(weights: dict, backbone) -> dict:
    """The backbone's weights by their path inside the backbone."""
    prefix = backbone.name + "/"
    inner = {path[len(prefix) :]: value for path, value in weights.items() if path.startswith(prefix)}
    return inner or weights  # Keras 3 paths may or may not carry the backbone's name.


def _encoder(g: GraphBuilder, backbone, w: dict, token_ids: str, segment_ids: str, padding_mask: str) -> str:
    """Embeddings and the encoder blocks: `(batch, length, hidden)`."""
    tokens = g.op("Gather", [g.const(w["embeddings/token_embedding/embeddings"]), token_ids])
    segments = g.op("Gather", [g.const(w["embeddings/segment_embedding/embeddings"]), segment_ids])
    x = g.op("Add", [tokens, segments])
    length = g.op("Slice", [g.op("Shape", [token_ids]), g.const(np.array([1])), g.const(np.array([2]))])
    positions = g.op("Slice", [g.const(w["embeddings/position_embedding/embeddings"]), g.const(np.array([0])), length])
    x = _layer_norm(g, g.op("Add", [x, positions]), w, "embeddings/layer_norm", backbone.layer_norm_epsilon)
    # (batch, 1, 1, length): 0 for a real key, -1e9 for padding, as `(1 - mask) * -1e9` (PyTorch's form).
    allowed = g.op("Unsqueeze", [g.op("Unsqueeze", [padding_mask, g.const(np.array([1]))]), g.const(np.array([2]))])
    allowed = g.op("Cast", [allowed], to=TensorProto.FLOAT)
    drop = g.op("Sub", [g.const(np.float32(1.0)), allowed])
    drop = g.op("Mul", [drop, g.const(np.float32(-MASKED_SCORE_DROP))], hint="attention_drop")
    for i in range(backbone.num_layers):
        x = _encoder_block(g, backbone, w, f"encoder_block_{i}", x, drop)
    return x


def _encoder_block(g: GraphBuilder, backbone, w: dict, block: str, x: str, drop: str) -> str:
    """One post-LayerNorm transformer block."""
    hidden, heads = backbone.hidden_dim, backbone.num_heads
    head_dim = hidden // heads
    qkv_kernel, qkv_bias = w[f"{block}/qkv/kernel"], w[f"{block}/qkv/bias"]  # Columns: query, key, value.

    def project(part: int, perm: list) -> str:
        columns = slice(part * hidden, (part + 1) * hidden)
        y = dense_nodes(g, x, qkv_kernel[:, columns], qkv_bias[columns])
        y = g.op("Reshape", [y, g.const(np.array([0, 0, heads, head_dim]))])  # (batch, length, heads, head_dim)
        return g.op("Transpose", [y], perm=perm)

    query = project(0, [0, 2, 1, 3])  # (batch, heads, length, head_dim)
    key = project(1, [0, 2, 3, 1])  # (batch, heads, head_dim, length)
    value = project(2, [0, 2, 1, 3])
    scores = g.op("Div", [g.op("MatMul", [query, key]), g.const(np.float32(head_dim**0.5))])
    scores = g.op("Add", [scores, drop])  # (batch, heads, length, length)
    probs = g.op("Softmax", [scores], axis=-1)
    context = g.op("Transpose", [g.op("MatMul", [probs, value])], perm=[0, 2, 1, 3])
    context = g.op("Reshape", [context, g.const(np.array([0, 0, hidden]))])
    attended = dense_nodes(g, context, w[f"{block}/attention_output/kernel"], w[f"{block}/attention_output/bias"])
    x = _layer_norm(g, g.op("Add", [x, attended]), w, f"{block}/attention_layer_norm", backbone.layer_norm_epsilon)
    inner = dense_nodes(g, x, w[f"{block}/intermediate/kernel"], w[f"{block}/intermediate/bias"])
    inner = _activation(g, backbone.activation, inner)
    out = dense_nodes(g, inner, w[f"{block}/output/kernel"], w[f"{block}/output/bias"])
    return _layer_norm(g, g.op("Add", [x, out]), w, f"{block}/output_layer_norm", backbone.layer_norm_epsilon)


def _task_head(model):
    """The function that writes `model`'s nodes after the encoder: its `spec.onnx_head`."""
    head = model.spec.onnx_head
    if head is None:
        raise ValueError(
            f"No ONNX export for {type(model).__name__}: its TaskSpec names no onnx_head (a function "
            "(graph, task, weights, sequence) -> {output name: (node, shape)}, as onnx_graph.classifier_head)."
        )
    return head if callable(head) else globals()[head]


def classifier_head(g: GraphBuilder, model, weights: dict, sequence: str) -> dict:
    """A `BertClassifier`'s outputs: the pooler on [CLS], its dense layer and softmax."""
    logits = dense_nodes(g, pooled_nodes(g, model, weights, sequence), *layer_weights(model.output_dense))
    shape = ["batch", model.num_classes]
    return {"logits": (logits, shape), "probabilities": (g.op("Softmax", [logits], axis=-1), shape)}


def multi_label_head(g: GraphBuilder, model, weights: dict, sequence: str) -> dict:
    """A `BertMultiLabelClassifier`'s outputs: the pooler on [CLS], its dense layer, sigmoids and the labels chosen
    (the probabilities at or over its threshold)."""
    logits = dense_nodes(g, pooled_nodes(g, model, weights, sequence), *layer_weights(model.output_dense))
    probabilities = g.op("Sigmoid", [logits])
    chosen = g.op("GreaterOrEqual", [probabilities, g.const(np.array(model.threshold, "float32"))])
    shape = ["batch", model.num_labels]
    return {"logits": (logits, shape), "probabilities": (probabilities, shape), "chosen": (chosen, shape)}


def multiple_choice_head(g: GraphBuilder, model, weights: dict, sequence: str) -> dict:
    """A `BertMultipleChoice`'s outputs: a score a (context, choice) row, from the pooler on [CLS] and its one-unit
    dense layer, as `(batch, choices)` logits and their softmax."""
    scores = dense_nodes(g, pooled_nodes(g, model, weights, sequence), *layer_weights(model.output_dense))
    choices = g.op("Slice", [g.op("Shape", [INPUT_NAMES[0]]), g.const(np.array([0])), g.const(np.array([2]))])
    logits = g.op("Reshape", [scores, choices])  # (batch, choices)
    shape = ["batch", "choices"]
    return {"logits": (logits, shape), "probabilities": (g.op("Softmax", [logits], axis=-1), shape)}


def regressor_head(g: GraphBuilder, model, weights: dict, sequence: str) -> dict:
    """A `BertRegressor`'s output: the pooler on [CLS] and its one-unit dense layer, a score a text."""
    score = dense_nodes(g, pooled_nodes(g, model, weights, sequence), *layer_weights(model.output_dense))
    return {"score": (g.op("Gather", [score, g.const(np.array(0))], axis=1), ["batch"])}


def token_classifier_head(g: GraphBuilder, model, weights: dict, sequence: str) -> dict:
    """A `BertTokenClassifier`'s outputs: its dense layer on every token and softmax."""
    logits = dense_nodes(g, sequence, *layer_weights(model.output_dense))
    shape = ["batch", "length", model.num_labels]
    return {"logits": (logits, shape), "probabilities": (g.op("Softmax", [logits], axis=-1), shape)}


def span_head(g: GraphBuilder, model, weights: dict, sequence: str) -> dict:
    """A `BertQuestionAnswerer`'s outputs: start and end logits from its span layer."""
    logits = dense_nodes(g, sequence, *layer_weights(model.span_dense))  # (batch, length, 2)
    start = g.op("Gather", [logits, g.const(np.array(0))], axis=2)
    end = g.op("Gather", [logits, g.const(np.array(1))], axis=2)
    return {"start_logits": (start, ["batch", "length"]), "end_logits": (end, ["batch", "length"])}


def pooled_nodes(g: GraphBuilder, model, weights: dict, sequence: str) -> str:
    """The backbone's pooled output, `(batch, hidden)`: tanh of its pooler on [CLS]."""
    backbone = backbone_weights(weights, model.backbone)
    first = g.op("Gather", [sequence, g.const(np.array(0))], axis=1)  # (batch, hidden): [CLS]
    return g.op("Tanh", [dense_nodes(g, first, backbone["pooler/kernel"], backbone["pooler/bias"])])


def _array(variable) -> np.ndarray:
    return np.asarray(keras.ops.convert_to_numpy(variable), dtype="float32")


def layer_weights(layer) -> tuple[np.ndarray, np.ndarray]:
    """A Dense layer's kernel and bias."""
    return _array(layer.kernel), _array(layer.bias)


def dense_nodes(g: GraphBuilder, x: str, kernel: np.ndarray, bias: np.ndarray) -> str:
    return g.op("Add", [g.op("MatMul", [x, g.const(kernel, "kernel")]), g.const(bias, "bias")])


def _layer_norm(g: GraphBuilder, x: str, w: dict, layer: str, epsilon: float) -> str:
    gamma, beta = g.const(w[f"{layer}/gamma"], "gamma"), g.const(w[f"{layer}/beta"], "beta")
    return g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=float(epsilon))


def _activation(g: GraphBuilder, name: str, x: str) -> str:
    """`keras_bert3.layers.activations` by name, in ONNX ops."""
    half = g.const(np.float32(0.5))
    if name == "gelu":  # 0.5 x (1 + erf(x / sqrt 2)), the form onnxruntime fuses into Gelu.
        erf = g.op("Erf", [g.op("Div", [x, g.const(np.float32(np.sqrt(2.0)))])])
        return g.op("Mul", [g.op("Mul", [x, half]), g.op("Add", [erf, g.const(np.float32(1.0))])])
    if name == "gelu_approximate":  # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        cube = g.op("Mul", [g.op("Mul", [x, x]), x])
        inner = g.op("Add", [x, g.op("Mul", [cube, g.const(np.float32(0.044715))])])
        tanh = g.op("Tanh", [g.op("Mul", [inner, g.const(np.float32(np.sqrt(2.0 / np.pi)))])])
        return g.op("Mul", [g.op("Mul", [x, half]), g.op("Add", [tanh, g.const(np.float32(1.0))])])
    if name == "relu":
        return g.op("Relu", [x])
    if name == "silu":
        return g.op("Mul", [x, g.op("Sigmoid", [x])])
    if name == "tanh":
        return g.op("Tanh", [x])
    raise ValueError(f"No ONNX form for activation {name!r}.")
