"""Draws a training run's loss and score (accuracy, F1, ...) curves into a PNG."""

import csv


def plot_training_curves(history_csv: str, png_path: str, *, title: str = "BERT pretraining") -> str:
    """Reads a `keras.callbacks.CSVLogger` file and writes a two-panel PNG, losses (and errors)
    and the other figures (accuracies, F1, ...) against the step (else the epoch); returns `png_path`.

    Example:
    >>> plot_training_curves("run/history.csv", "run/training_curves.png")
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(history_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{history_csv} has no rows: nothing was trained yet.")
    x_name = "step" if "step" in rows[0] else "epoch"
    x = [_number(row[x_name]) for row in rows]
    figure, (losses, accuracies) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name in rows[0]:
        if name in (x_name, "epoch", "step", "learning_rate") or name.startswith("val_step"):
            continue
        points = [(x_value, _number(row[name])) for x_value, row in zip(x, rows)]
        points = [(a, b) for a, b in points if b is not None]  # CSVLogger writes "NA" for absent values.
        if not points:
            continue
        axis = losses if any(word in name for word in ("loss", "error", "mae", "mse")) else accuracies
        axis.plot(*zip(*points), marker="o", markersize=3, label=name)
    for axis, label in ((losses, "loss"), (accuracies, "accuracy, score")):
        axis.set_xlabel(x_name)
        axis.set_ylabel(label)
        axis.grid(alpha=0.3)
        if axis.lines:  # A run may log no figure of one kind (a regressor: no accuracy).
            axis.legend()
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(png_path, dpi=110)
    plt.close(figure)
    return png_path


def _number(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None
