"""The tasks the commands run, found by name: keras_bert3's own, those installed packages register (entry points of
group `keras_bert3.tasks`, each `name = "module:Class"`), and any task class named as "module:Class". A task declares
what the commands do with it (`TaskSpec.job`, its `TaskJob`); nothing here says what a task does.

In a package's pyproject.toml:

    [project.entry-points."keras_bert3.tasks"]
    sentiment-score = "my_package.tasks:BertSentimentScore"
"""

import importlib
import importlib.metadata

from keras_bert3.models.built_in_tasks import BUILT_IN_TASKS

ENTRY_POINT_GROUP = "keras_bert3.tasks"


def registered_tasks() -> dict[str, str]:
    """`--task` name -> "module:Class": keras_bert3's, then the installed packages' entry points."""
    tasks = dict(BUILT_IN_TASKS)
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        tasks.setdefault(entry.name, entry.value)
    return tasks


def task_class(name: str):
    """The task class of `--task name`: a registered name, or "module:Class" of a `BertTask` subclass that
    declares its job. Anything else is refused, naming what the commands run."""
    from keras_bert3.models.bert_task import BertTask

    registered = registered_tasks()
    path = registered.get(name, name)
    usage = f"the commands run {', '.join(registered)}, or a task of your own as module:Class"
    if ":" not in path:
        raise ValueError(f"--task {name} is no task: {usage}.")
    found = imported(path, f"--task {name}")
    if not (isinstance(found, type) and issubclass(found, BertTask)):
        raise ValueError(f"--task {name}: {path} is not a task (a subclass of keras_bert3's BertTask); {usage}.")
    if found.spec.job is None:
        raise ValueError(
            f'--task {name}: {found.__name__} declares no job (its TaskSpec\'s job="module:Class" of a TaskJob), '
            "so the commands cannot read its files."
        )
    return found


def job_named(name: str):
    """The job of `--task name` (`task_class`), knowing its task class."""
    task_cls = task_class(name)
    return job_of(task_cls, name if name in registered_tasks() else None)


def job_of(task_cls, name: str | None = None):
    """The `TaskJob` a task class declares (`spec.job`), named `name` (default: the task's own, `task_identity`)."""
    from keras_bert3.presets.task_preset import task_identity

    job = job_at(task_identity(task_cls)["job"])
    job.name, job.task_cls = name or task_identity(task_cls)["task"], task_cls
    return job


def job_at(path: str, name: str = ""):
    """A new `TaskJob` of the class at "module:Class" `path` (a served model's, without importing its task)."""
    job = imported(path, "the task's job")()
    job.name = name
    return job


def imported(path: str, what: str):
    """The object at "module:Qualified.name" `path`, importing its module; refused in one line where it is not."""
    module, _, qualified_name = path.partition(":")
    try:
        found = importlib.import_module(module)
        for part in qualified_name.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError, ValueError) as error:
        raise ValueError(
            f"{what}: cannot import {path} ({error}). Install or put on PYTHONPATH what defines it."
        ) from None
    return found
