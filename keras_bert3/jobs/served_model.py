"""A fine-tuned model as a preset, a SavedModel or an ONNX folder, called alike on strings."""

import os
import warnings

from keras_bert3.files.weight_files import first_line

LABEL_NAMES_FILE = "class_names.json"  # Beside a fine-tuned preset and its exports.


class ServedModel:
    """The model at `path`, with its task's job, label names (`class_names.json`, checked against the classes its head
    gives) and `class_count` (None where the model does not say). Called with a dict of string lists (`input_names`),
    each cut at `text_limit.MAX_TEXT_CHARACTERS`, it gives one dict a row (`TaskJob.rows`)."""

    def __init__(self, path: str | None, *, task: str | None = None, model=None, classes=None):
        """`task`: the `--task` of a preset that is no fine-tuned one (fill-mask on a pretrained preset); a fine-tuned
        preset and an export name their own. `model`: a task model in memory (as `fit` leaves it, `path` None) served
        as its preset would be, `classes` its label names."""
        from keras_bert3.export.onnx_export import MODEL_FILE

        self.task_name = task
        if model is not None:
            self.path, self.format, self.label_names = None, "preset", classes
            self._run = self._task(model)
            return
        check_exists(path, "a fine-tuned preset (keras-bert3 finetune) or its export (keras-bert3 export)")
        self.path = path
        if os.path.isfile(os.path.join(path, "saved_model.pb")):
            self.format, self._run = "SavedModel", self._saved_model(path)
        elif os.path.isfile(os.path.join(path, MODEL_FILE)):
            self.format, self._run = "ONNX", self._onnx(path)
        else:
            self.format, self._run = "preset", self._preset(path)
        self.label_names = label_names(path)
        if self.label_names is not None and self.class_count not in (None, len(self.label_names)):
            raise ValueError(self._other_names(f"its head gives {self.class_count} classes"))

    def __call__(self, inputs: dict) -> list[dict]:
        from keras_bert3.preprocessing.text_limit import cut_text

        cut = lambda text: [cut(t) for t in text] if isinstance(text, list) else cut_text(text)  # noqa: E731
        inputs = {name: [cut(text) for text in texts] for name, texts in inputs.items()}  # A list each: choices.
        try:
            return self.job.answered(self.job.rows(self._run(inputs), self.label_names), inputs)
        except IndexError:  # A class past the names (a SavedModel's tagger does not say how many it gives).
            if self.label_names is None:
                raise
            raise ValueError(self._other_names("it gives a class past them")) from None

    def _other_names(self, found: str) -> str:
        return (
            f"{os.path.join(self.path, LABEL_NAMES_FILE)} names {len(self.label_names)} classes but {found}: it "
            "belongs to another model. Copy the class_names.json of the preset this model was fine-tuned as."
        )

    def _saved_model(self, path: str):
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)

        try:
            serve = tf.saved_model.load(path).signatures["serving_default"]
        except Exception as error:  # A damaged file fails in the protobuf parser, the reader or TensorFlow.
            damaged = damaged_saved_model_file(path)
            if damaged is None:
                raise
            raise ValueError(f"{damaged} is damaged ({first_line(error)}). Export the model again.") from error
        self.input_names = sorted(serve.structured_input_signature[1])
        self.job = served_job(path, self.input_names, serve.structured_outputs)
        probabilities = serve.structured_outputs.get("probabilities")
        self.class_count = None if probabilities is None else probabilities.shape[-1]
        return lambda inputs: {
            k: v.numpy() for k, v in serve(**{k: tf.constant(v, tf.string) for k, v in inputs.items()}).items()
        }

    def _onnx(self, path: str):
        from keras_bert3.export.onnx_export import OnnxTextModel

        model = OnnxTextModel(path)
        self.input_names = model.input_names
        self.job = served_job(path, model.input_names, model.output_names)
        shapes = {value.name: value.shape for value in model.session.get_outputs()}
        count = shapes.get("probabilities", [None])[-1]
        self.class_count = count if isinstance(count, int) else None
        return lambda inputs: model(**inputs)

    def _preset(self, path: str):
        from keras_bert3.jobs.task_registry import job_named
        from keras_bert3.presets.task_preset import TASK_CONFIG_FILE

        fine_tuned = os.path.isfile(os.path.join(path, TASK_CONFIG_FILE))
        task = (
            load_task(path)
            if fine_tuned or self.task_name is None
            else job_named(self.task_name).task_cls.from_preset(path)
        )
        return self._task(task)

    def _task(self, task):
        from keras_bert3.jobs.task_registry import job_of

        self.job = job_of(type(task))
        self.input_names = self.job.preset_input_names(task)
        self.class_count = getattr(task, "num_classes", getattr(task, "num_labels", None))
        return lambda inputs: self.job.preset_outputs(task, inputs)


def served_job(path: str, input_names, output_names):
    """The job of the export at `path`, as its `TASK_FILE` names it (without importing the task's model). An export
    written before keras_bert3 wrote that file: by its inputs and outputs, with a DeprecationWarning."""
    from keras_bert3.jobs.task_registry import job_at
    from keras_bert3.presets.preset_format import read_json
    from keras_bert3.presets.task_preset import TASK_FILE

    task_file = os.path.join(path, TASK_FILE)
    if os.path.isfile(task_file):
        identity = read_json(task_file)
        if identity.get("job") is None:
            raise ValueError(f"{task_file}: its task ({identity.get('class')}) declares no job for the commands.")
        return job_at(identity["job"], identity["task"])
    warnings.warn(
        f"{path} has no {TASK_FILE} (older exports have none): its task is told by its inputs and "
        "outputs, which only keras_bert3's own tasks allow, and will not be in the next release. Export it again.",
        DeprecationWarning,
        stacklevel=3,
    )
    return job_by_outputs(input_names, output_names)


def job_by_outputs(input_names, output_names):
    """The job of an export of one of keras_bert3's own tasks, by its input and output names."""
    from keras_bert3.jobs.task_registry import job_named

    if set(input_names) == {"question", "context"}:
        return job_named("question-answerer")
    if "word_labels" in output_names:
        return job_named("token-classifier")
    if "probabilities" in output_names:
        return job_named("classifier")
    raise ValueError(f"A served model with inputs {sorted(input_names)} and outputs {sorted(output_names)} is no task.")


def damaged_saved_model_file(path: str) -> str | None:
    """The first file of the SavedModel at `path` that cannot be read whole, or None."""
    import glob

    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2

    graph = os.path.join(path, "saved_model.pb")
    try:
        with open(graph, "rb") as f:
            saved_model_pb2.SavedModel().ParseFromString(f.read())
    except Exception:  # noqa: BLE001 (protobuf's DecodeError, or an unreadable file)
        return graph
    prefix = os.path.join(path, "variables", "variables")
    try:
        reader = tf.train.load_checkpoint(prefix)
    except Exception:  # noqa: BLE001
        return prefix + ".index"
    try:
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
    except Exception:  # noqa: BLE001
        data = sorted(glob.glob(prefix + ".data-*"))
        return data[0] if len(data) == 1 else os.path.dirname(prefix)
    return None


def label_names(path: str) -> list[str] | None:
    """The label names written beside a fine-tuned preset or its export (None where there are none)."""
    from keras_bert3.presets.preset_format import read_json

    names = os.path.join(path, LABEL_NAMES_FILE)
    return read_json(names)["class_names"] if os.path.isfile(names) else None


def load_task(preset_dir: str, **kwargs):
    """The fine-tuned task a preset holds, by registered Keras name (its module imported first where the preset names
    it: a task of one's own); `kwargs` go to its `from_preset`."""
    from keras_bert3.jobs.task_registry import imported
    from keras_bert3.models.bert_task import BertTask
    from keras_bert3.models.built_in_tasks import BUILT_IN_TASKS
    from keras_bert3.presets.preset_format import read_json
    from keras_bert3.presets.task_preset import TASK_CONFIG_FILE
    from keras_bert3.presets.task_preset import stored_task_class

    check_exists(preset_dir, "the fine-tuned preset")
    path = os.path.join(preset_dir, TASK_CONFIG_FILE)
    if not os.path.isfile(path):
        raise ValueError(
            f"{preset_dir} is not a fine-tuned preset (no {TASK_CONFIG_FILE}): fine-tune it first "
            f"(keras-bert3 finetune --preset {preset_dir} --train FILE --output DIR)."
        )
    for task_path in [*BUILT_IN_TASKS.values(), read_json(path).get("class")]:  # Each registers its task with Keras.
        if task_path is not None:
            imported(task_path, f"{path}'s task")
    task_cls = stored_task_class(preset_dir)
    if not (isinstance(task_cls, type) and issubclass(task_cls, BertTask)):
        raise ValueError(
            f"{path} names a task that no imported module registered: keras_bert3's tasks are "
            f"{', '.join(BUILT_IN_TASKS)}; import the module that defines (and registers, "
            "keras.saving.register_keras_serializable) any other first."
        )
    return task_cls.from_preset(preset_dir, **kwargs)


def check_exists(path: str, what: str) -> None:
    """Refuses a path that does not exist, saying so."""
    if not os.path.exists(path):
        parent = os.path.dirname(os.path.abspath(path))
        where = "" if os.path.isdir(parent) else f" (nor does the folder {parent})"
        raise FileNotFoundError(f"{path} does not exist{where}: give the path of {what}.")
