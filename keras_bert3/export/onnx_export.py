"""ONNX exports of the BERT tasks, served by onnxruntime on CPUs: a folder of `text_model.onnx`
(strings in, the tokenizer in the graph, onnxruntime's fused kernels; needs onnxruntime-extensions),
`model.onnx` (token ids in, standard ONNX ops only) and `tokenizer.json` (for `model.onnx`'s clients).
"""

import os

import numpy as np

from keras_bert3.files.weight_files import first_line
from keras_bert3.files.whole_folders import written_whole

MODEL_FILE = "model.onnx"
TEXT_MODEL_FILE = "text_model.onnx"  # Strings in.
TOKENIZER_FILE = "tokenizer.json"
QUANTIZATIONS = (None, "int8")


def export_onnx(model, filepath: str, *, quantize: str | None = None) -> None:
    """Writes `model` (a fine-tuned task) to the folder `filepath`, whole or not at all.

    `model.onnx` takes int32 `(batch, length)` `token_ids`, `segment_ids`, `padding_mask` and returns
    the `serve_token_ids` outputs (float32); `text_model.onnx` takes string `(batch,)` `text` (and
    `text_pair`; or `question` and `context`) and returns the `serving_default` outputs.
    `quantize="int8"`: int8 weights (onnxruntime's dynamic quantization), for CPUs with int8 instructions.

    Example:
    >>> export_onnx(classifier, "onnx/classifier", quantize="int8")
    """
    import onnx

    from keras_bert3.export.onnx_graph import task_graph

    if quantize not in QUANTIZATIONS:
        raise ValueError(f"Unknown quantization {quantize!r}: use one of {QUANTIZATIONS}.")
    graph = task_graph(model, name=model.name)
    with written_whole(filepath, "the ONNX export", marker=MODEL_FILE) as folder:
        onnx.save(graph, os.path.join(folder, MODEL_FILE))
        if quantize is not None:
            quantize_int8(os.path.join(folder, MODEL_FILE), os.path.join(folder, MODEL_FILE))
        hugging_face_tokenizer(model.preprocessor).save(os.path.join(folder, TOKENIZER_FILE))
        from keras_bert3.export.onnx_text_model import text_model

        path = os.path.join(folder, TEXT_MODEL_FILE)
        onnx.save(fused_for_onnxruntime(graph, model.backbone), path)
        if quantize is not None:
            quantize_int8(path, path)
        strings = text_model(
            onnx.load(path), model.preprocessor, front_end=model.spec.strings_front_end, settings=model.task_config()
        )
        onnx.save(strings, path)
        from keras_bert3.presets.task_preset import write_task_file

        write_task_file(folder, model)


def quantize_int8(source: str, target: str) -> None:
    """onnxruntime's dynamic int8 quantization of `source`'s MatMul and Attention weights, per output
    channel, to `target` (which may be `source`)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        source,
        target,
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul", "Attention"],
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},  # Where contrib ops hide a type.
    )


def fused_for_onnxruntime(graph, backbone):
    """`graph` with attention, residual LayerNorms and bias + GELU fused into onnxruntime's
    `com.microsoft` kernels by its transformer optimizer (the session's optimizer does not fuse attention)."""
    import logging

    import onnx
    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    logging.getLogger("optimizer").setLevel(logging.ERROR)  # It says it expected a PyTorch export.
    fused = optimize_model(
        graph, model_type="bert", num_heads=backbone.num_heads, hidden_size=backbone.hidden_dim, opt_level=0
    )
    if not any(opset.domain == "com.microsoft" for opset in fused.model.opset_import):
        fused.model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))  # As its own save adds it.
    return fused.model


def hugging_face_tokenizer(preprocessor):
    """The preprocessor's tokenizer and segment joiner as a Hugging Face `tokenizers.Tokenizer`
    giving the same ids: "longest_first" truncation, padding to the batch's longest."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    tokenizer = preprocessor.tokenizer
    vocabulary = {token: index for index, token in reversed(list(enumerate(tokenizer.vocabulary)))}
    wordpiece = models.WordPiece(
        vocabulary, unk_token=tokenizer.unk_token, max_input_chars_per_word=tokenizer.max_word_chars
    )
    result = Tokenizer(wordpiece)
    result.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=tokenizer.strip_accents, lowercase=tokenizer.lowercase
    )
    result.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    result.decoder = decoders.WordPiece()
    result.add_special_tokens(tokenizer.special_tokens_in_text)
    cls, sep = tokenizer.cls_token, tokenizer.sep_token
    result.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        pair=f"{cls} $A {sep} $B:1 {sep}:1",
        special_tokens=[(cls, vocabulary[cls]), (sep, vocabulary[sep])],
    )
    result.enable_truncation(preprocessor.sequence_length, strategy="longest_first")
    result.enable_padding(pad_id=vocabulary[tokenizer.pad_token], pad_token=tokenizer.pad_token)
    return result


def onnx_session(path: str, *, threads: int | None = None):
    """An onnxruntime CPU session on `path`, every graph optimization on, onnxruntime-extensions'
    ops registered; `threads` intra-op threads (default: the CPUs this process may use)."""
    import onnxruntime
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail
    from onnxruntime.capi.onnxruntime_pybind11_state import InvalidGraph
    from onnxruntime.capi.onnxruntime_pybind11_state import InvalidProtobuf

    from keras_bert3.export.onnx_string_ops import string_ops_library

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads or len(os.sched_getaffinity(0))
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.register_custom_ops_library(string_ops_library())
    try:
        return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except (InvalidProtobuf, InvalidGraph, Fail) as error:  # onnxruntime's own; they share no base class but Exception.
        raise ValueError(
            f"{path} is damaged or not an ONNX model ({first_line(error)}). Export the model again: keras-bert3 export "
            "--model PRESET --output FOLDER --format onnx."
        ) from error


class OnnxTextModel:
    """An ONNX export (`export_onnx`) served on strings from its `text_model.onnx`: called with one list of
    strings (or one string) per graph input, in order or by name (`text` and maybe `text_pair`, or
    `question` and `context`, or `context` and `choices`, a list of strings each), it returns the SavedModel
    `serving_default` outputs.

    Example:
    >>> OnnxTextModel("onnx/classifier")(["Some text."])["probabilities"]  # (1, num_classes)
    """

    def __init__(self, folder: str, *, threads: int | None = None):
        from tokenizers import Tokenizer

        text_model = os.path.join(folder, TEXT_MODEL_FILE)
        if not os.path.isfile(text_model):
            raise FileNotFoundError(
                f"{folder} has no {TEXT_MODEL_FILE}: it is not an ONNX export of this version of keras_bert3. "
                'Export the task again with `task.export(folder, format="onnx")`.'
            )
        try:
            self.tokenizer = Tokenizer.from_file(os.path.join(folder, TOKENIZER_FILE))
        except Exception as error:  # The tokenizers library raises plain Exceptions on a file it cannot parse.
            raise ValueError(
                f"{os.path.join(folder, TOKENIZER_FILE)} is damaged or missing ({error}). Export the model again."
            ) from error
        self.session = onnx_session(text_model, threads=threads)
        self.input_names = [value.name for value in self.session.get_inputs()]
        self.output_names = [value.name for value in self.session.get_outputs()]
        self.task = self.session.get_modelmeta().custom_metadata_map.get("task")

    def model_inputs(self, text, text_pair=None) -> dict:
        """int32 `(batch, length)` inputs of `model.onnx` for `text` (and `text_pair`), from `tokenizer.json`."""
        text = _strings(text, "text")
        if text_pair is None:
            encodings = self.tokenizer.encode_batch(text)
        else:
            encodings = self.tokenizer.encode_batch(list(zip(text, _strings(text_pair, "text_pair"))))
        return _model_inputs(encodings, len(text))

    def __call__(self, *texts, **named_texts) -> dict:
        outputs = self.session.run(self.output_names, self.string_inputs(*texts, **named_texts))
        return dict(zip(self.output_names, outputs))

    def string_inputs(self, *texts, **named_texts) -> dict:
        """`text_model.onnx`'s feeds: one string array per input (in order or by name), equally long."""
        names = self.input_names
        unknown = sorted(set(named_texts) - set(names[len(texts) :]))
        if unknown:
            raise ValueError(f"This {self.task} takes {' and '.join(f'`{name}`' for name in names)}, not {unknown}.")
        texts = texts + tuple(named_texts[name] for name in names[len(texts) :] if name in named_texts)
        if len(texts) != len(names):
            raise ValueError(
                f"This {self.task} takes {' and '.join(f'`{name}`' for name in names)}: got {len(texts)} "
                f"list{'s' if len(texts) != 1 else ''} of strings."
            )
        feeds = {name: np.array(_strings(value, name), dtype=object) for name, value in zip(names, texts)}
        if len({len(value) for value in feeds.values()}) > 1:
            counts = " and ".join(f"{len(value)} `{name}`" for name, value in feeds.items())
            raise ValueError(f"Got {counts} strings: pass as many of each.")
        return feeds


def _model_inputs(encodings, rows: int) -> dict:
    """int32 `(rows, length)` model inputs from `tokenizers` encodings (padded alike)."""
    length = len(encodings[0].ids) if encodings else 2
    return {
        "token_ids": np.array([e.ids for e in encodings], "int32").reshape(rows, length),
        "segment_ids": np.array([e.type_ids for e in encodings], "int32").reshape(rows, length),
        "padding_mask": np.array([e.attention_mask for e in encodings], "int32").reshape(rows, length),
    }


def _strings(texts, name: str) -> list:
    """`texts` (str or bytes, one or a list; or lists of them, all as long: a multiple choice's `choices`) as a list
    of str (of lists); ValueError names a non-UTF-8 one."""
    if isinstance(texts, (str, bytes)):
        texts = [texts]
    if len(texts) and all(isinstance(text, (list, tuple, np.ndarray)) for text in texts):
        rows = [_strings(row, f"{name}[{index}]") for index, row in enumerate(texts)]
        if len({len(row) for row in rows}) > 1:
            raise ValueError(f"The rows of `{name}` differ in length: give each as many strings.")
        return rows
    result = []
    for index, text in enumerate(texts):
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"{name}[{index}] is not valid UTF-8 ({error.reason} at byte {error.start})."
                ) from None
        if not isinstance(text, str):
            raise TypeError(f"{name}[{index}] is a {type(text).__name__}, not a string.")
        result.append(text)
    return result
