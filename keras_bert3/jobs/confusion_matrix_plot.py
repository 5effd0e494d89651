"""The confusion matrix of an evaluation as a PNG (scikit-learn's display, no screen needed), up to the classes a
person can read in one."""

MAX_DRAWN_CLASSES = 50  # Past this, cells and labels are too small to read, and the figure grows by the square.


def why_not_drawn(matrix: dict) -> str | None:
    """Why `plot_confusion_matrix` leaves `matrix` out (None: it draws it)."""
    count = len(matrix["labels"])
    if count <= MAX_DRAWN_CLASSES:
        return None
    return (
        f"no confusion-matrix PNG: {count:,} classes, more than the {MAX_DRAWN_CLASSES} a figure shows readably "
        "(the matrix is in the report's confusion_matrix)"
    )


def plot_confusion_matrix(matrix: dict, png_path: str) -> str:
    """Draws `matrix` (as `ClassifierJob.report` gives it) with counts in the cells; returns `png_path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from sklearn.metrics import ConfusionMatrixDisplay

    labels = matrix["labels"]
    size = max(4.0, 0.5 * len(labels) + 2)
    figure, axes = plt.subplots(figsize=(size, size))
    display = ConfusionMatrixDisplay(np.asarray(matrix["rows_true_columns_predicted"]), display_labels=labels)
    display.plot(ax=axes, cmap="Blues", colorbar=False, xticks_rotation="vertical")
    figure.tight_layout()
    figure.savefig(png_path, dpi=100)
    plt.close(figure)
    return png_path
