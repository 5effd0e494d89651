"""`keras-bert3 finetune --search`: the paper's fine-tuning search (Devlin et al. 2019, appendix A.3: batch size
{16, 32}, learning rate {5e-5, 3e-5, 2e-5}, epochs {2, 3, 4}, the best on the dev set; restarts by seed), each trial a
whole fine-tuning run, on KerasTuner's `GridSearch`.

KerasTuner's oracle records the trials in `<output>.search/` (`oracle.json`, a `trial_<n>/` folder each, holding the
trial's run: `preset/` and, while it runs, `preset.checkpoints/`); the same command resumes a killed search: finished
trials are skipped and the one under way goes on from its last checkpoint. Its chief/worker mode (the environment
variables `KERASTUNER_TUNER_ID`, `KERASTUNER_ORACLE_IP`, `KERASTUNER_ORACLE_PORT`) runs trials on many hosts or devices
at once, the folder shared. The chosen trial's preset is written as `<output>`, with the table of trials
(`search_trials.csv`, `search_trials.json`) and the plot of their validation figure (`search_trials.png`)."""

import csv
import dataclasses
import json
import logging
import os
import shutil

from keras_bert3.jobs.finetuning_run import check_same_settings
from keras_bert3.jobs.finetuning_run import PRESET_HISTORY_FILE
from keras_bert3.jobs.finetuning_run import finetune
from keras_bert3.jobs.finetuning_run import logged_history
from keras_bert3.jobs.task_registry import job_named
from keras_bert3.jobs.validation_scores import higher_is_better

SEARCH_SUFFIX = ".search"
TRIAL_PRESET = "preset"
TABLE_FILE = "search_trials"  # .csv, .json and .png beside the chosen preset.
# The paper's grid (appendix A.3), where the search flags give none.
PAPER_GRID = {"learning_rate": (5e-5, 3e-5, 2e-5), "batch_size": (16, 32), "epochs": (2, 3, 4)}
GRID_FLAGS = {
    "learning_rate": "search_learning_rates",
    "batch_size": "search_batch_sizes",
    "epochs": "search_epochs",
    "seed": "search_seeds",
}

logger = logging.getLogger("keras_bert3.jobs")


def search_grid(config) -> dict:
    """The values each setting takes in the search: the search flags' (comma-separated), else the paper's grid (the
    seed: `--seed`'s)."""
    grid = {}
    for setting, flag in GRID_FLAGS.items():
        given = getattr(config, flag)
        kind = float if setting == "learning_rate" else int
        if given is None:
            values = PAPER_GRID.get(setting, (getattr(config, setting),))
        else:
            try:
                values = tuple(kind(value) for value in str(given).split(",") if value.strip())
            except ValueError:
                values = ()
            if not values:
                raise ValueError(f"--{flag.replace('_', '-')} {given!r}: give comma-separated numbers, e.g. 16,32.")
        grid[setting] = tuple(dict.fromkeys(values))
    return grid


def search(config) -> dict:
    """Runs (or resumes) the grid search of `config` (a `FinetuningConfig` with `search`); writes the chosen trial's
    preset as `config.output` with the table and plot of the trials (on a worker of a distributed search: nothing)
    and returns the table's rows, best first (none on a worker)."""
    import keras_tuner

    from keras_bert3.files.whole_folders import check_replaceable
    from keras_bert3.presets.task_preset import TASK_CONFIG_FILE

    job = job_named(config.task)
    if not config.validation:
        raise ValueError("--search chooses the best trial on the validation file: give --validation.")
    check_replaceable(config.output, "the fine-tuned preset", marker=TASK_CONFIG_FILE)
    figure = config.metric_for_best or job.best_figure
    if figure is None:
        raise ValueError(f"--search: the {job.name} task names no figure to choose by: give --metric-for-best.")
    folder = os.path.normpath(config.output) + SEARCH_SUFFIX
    check_same_settings(folder, config, file="search.json", what="a search", ignored=("verbose",))
    tuner = FinetuningSearch(
        config, figure, directory=os.path.dirname(folder) or ".", project_name=os.path.basename(folder)
    )
    tuner.search()
    if keras_tuner_worker():
        return []
    rows = trial_rows(tuner, figure)
    if not rows:
        raise ValueError(f"No trial of the search in {folder} finished: see the errors above.")
    _write_chosen(config, rows, folder, figure)
    return rows


def keras_tuner_worker() -> bool:
    """Whether this process is a worker of a KerasTuner search run by a chief elsewhere."""
    return "KERASTUNER_ORACLE_IP" in os.environ and "chief" not in os.environ.get("KERASTUNER_TUNER_ID", "")


def _tuner_class():
    import keras_tuner

    from keras_bert3.upstream.grid_search_resume import restore_grid_order

    class Search(keras_tuner.GridSearch):
        """KerasTuner's grid search whose trials are fine-tuning runs (`finetune`), each in its trial's folder."""

        def __init__(self, config, figure: str, **options):
            self.config, self.figure = config, figure
            hyperparameters = keras_tuner.HyperParameters()
            for setting, values in search_grid(config).items():
                hyperparameters.Choice(setting, values, ordered=True)
            direction = "max" if higher_is_better(figure) else "min"
            super().__init__(
                objective=keras_tuner.Objective(f"val_{figure}", direction=direction),
                hyperparameters=hyperparameters,
                tune_new_entries=False,
                max_consecutive_failed_trials=1,
                **options,
            )
            if isinstance(self.oracle, keras_tuner.oracles.GridSearchOracle):  # Not a worker's client of it.
                restore_grid_order(self.oracle)

        def run_trial(self, trial, *args, **kwargs):
            """Fine-tunes with the trial's settings (resuming its run), and returns its best epoch's figures."""
            output = os.path.join(self.get_trial_dir(trial.trial_id), TRIAL_PRESET)
            settings = trial.hyperparameters.values
            # The trial keeps its best epoch's weights, those its row of the table scores.
            options = dict(search=False, output=output, keep_checkpoints=None, metric_for_best=self.figure)
            config = dataclasses.replace(self.config, **options, **settings)
            logger.info(f"Trial {trial.trial_id}: {', '.join(f'{k} {v:g}' for k, v in settings.items())}")
            if not os.path.isfile(os.path.join(output, PRESET_HISTORY_FILE)):  # Finished, but not yet recorded.
                try:
                    finetune(config)
                except ValueError as error:  # The same in every trial: the search ends with it.
                    raise keras_tuner.errors.FatalValueError(str(error)) from error
            return best_row(logged_history(os.path.join(output, PRESET_HISTORY_FILE)), self.figure)

        def save_model(self, trial_id, model, step=0):
            """The trial's run wrote its preset."""

    return Search


def FinetuningSearch(config, figure: str, **options):  # noqa: N802  (builds the KerasTuner class on first use)
    """A KerasTuner `GridSearch` over the fine-tuning of `config`, choosing by the validation `figure`."""
    return _tuner_class()(config, figure, **options)


def best_row(history: dict, figure: str) -> dict:
    """The best `val_<figure>`'s epoch (the first of equals) of a run's `logged_history`, its figures named as
    logged."""
    values = history[f"val_{figure}"]
    pick = max if higher_is_better(figure) else min
    best = values.index(pick(v for v in values if v == v))
    figures = {name: logged[best] for name, logged in history.items() if name != "learning_rate"}
    return figures | {"best_epoch": best + 1}  # The rate logged there is the schedule's, not the trial's peak.


def trial_rows(tuner, figure: str) -> list[dict]:
    """A row per finished trial, best first (equals in the trials' order): its number, settings, best epoch and every
    figure there."""
    rows = []
    for trial_id in sorted(tuner.oracle.trials):
        trial = tuner.oracle.trials[trial_id]
        path = os.path.join(tuner.get_trial_dir(trial_id), TRIAL_PRESET, PRESET_HISTORY_FILE)
        if trial.status != "COMPLETED" or not os.path.isfile(path):
            continue
        rows.append({"trial": trial_id} | trial.hyperparameters.values | best_row(logged_history(path), figure))
    sign = -1.0 if higher_is_better(figure) else 1.0
    worst = float("inf")  # An undefined figure (NaN) ranks last.
    return sorted(
        rows, key=lambda row: sign * row[f"val_{figure}"] if row[f"val_{figure}"] == row[f"val_{figure}"] else worst
    )


def _write_chosen(config, rows: list[dict], folder: str, figure: str) -> None:
    """The best trial's preset as `config.output`, with the table and the plot of the trials."""
    from keras_bert3.files.whole_folders import written_whole
    from keras_bert3.presets.task_preset import TASK_CONFIG_FILE

    best = os.path.join(folder, f"trial_{rows[0]['trial']}", TRIAL_PRESET)
    with written_whole(config.output, "the fine-tuned preset", marker=TASK_CONFIG_FILE) as out:
        shutil.copytree(best, out, dirs_exist_ok=True)
        table = os.path.join(out, TABLE_FILE)
        names = list(dict.fromkeys(name for row in rows for name in row))
        with open(table + ".csv", "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=names)
            writer.writeheader()
            writer.writerows(rows)
        with open(table + ".json", "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)
        _plot_trials(folder, rows, figure, table + ".png")
    logger.info(f"Chosen: trial {rows[0]['trial']}, val_{figure} {rows[0][f'val_{figure}']:.4f}")


def _plot_trials(folder: str, rows: list[dict], figure: str, png_path: str) -> None:
    """The validation figure against the epoch, a line per trial, labelled by its settings."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plot, axis = plt.subplots(figsize=(8, 4.5))
    for row in rows:
        values = logged_history(os.path.join(folder, f"trial_{row['trial']}", TRIAL_PRESET, PRESET_HISTORY_FILE))
        label = ", ".join(f"{name} {row[name]:g}" for name in GRID_FLAGS)
        axis.plot(range(1, len(values[f"val_{figure}"]) + 1), values[f"val_{figure}"], marker="o", label=label)
    axis.set_xlabel("epoch (or --eval-steps round)")
    axis.set_ylabel(f"validation {figure}")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7)
    plot.tight_layout()
    plot.savefig(png_path, dpi=110)
    plt.close(plot)
