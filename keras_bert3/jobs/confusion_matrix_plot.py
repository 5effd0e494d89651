"""The confusion matrix of an evaluation as a PNG (matplotlib, no display needed)."""


def plot_confusion_matrix(matrix: dict, png_path: str) -> str:
    """Draws `matrix` (as `ClassifierJob.report` gives it) with counts in the cells; returns `png_path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, counts = matrix["labels"], matrix["rows_true_columns_predicted"]
    size = max(4.0, 0.5 * len(labels) + 2)
    figure, axes = plt.subplots(figsize=(size, size))
    axes.imshow(counts, cmap="Blues")
    axes.set_xticks(range(len(labels)), labels, rotation=90)
    axes.set_yticks(range(len(labels)), labels)
    axes.set_xlabel("predicted")
    axes.set_ylabel("true")
    for i, row in enumerate(counts):
        for j, count in enumerate(row):
            axes.text(j, i, str(count), ha="center", va="center", fontsize=8)
    figure.tight_layout()
    figure.savefig(png_path, dpi=100)
    plt.close(figure)
    return png_path
