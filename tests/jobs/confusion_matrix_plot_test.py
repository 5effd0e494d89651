"""`keras-bert3 evaluate`'s confusion-matrix PNG, read back by matplotlib:
the figure's size for the labels, dark cells on a white ground."""

import pytest

from keras_bert3.jobs.confusion_matrix_plot import plot_confusion_matrix

pytestmark = pytest.mark.backend_free  # matplotlib and a file: no Keras backend reaches it.


def test_the_png_shows_the_matrix(tmp_path):
    from matplotlib.image import imread

    matrix = {"labels": ["a", "b", "c"], "rows_true_columns_predicted": [[9, 0, 1], [0, 5, 0], [2, 0, 7]]}
    path = plot_confusion_matrix(matrix, str(tmp_path / "confusion.png"))
    pixels = imread(path)
    assert pixels.shape[:2] == (400, 400)  # 4 x 4 inches at 100 dpi: three labels fit the smallest figure.
    assert pixels[..., :3].min() < 0.5 and pixels[..., :3].max() > 0.9  # Dark cells and a white ground.


def test_messy_file_a_thousand_classes_are_reported_without_a_figure(tmp_path):
    """`evaluate --report` for a 1,000-class classifier drew a 50,200-pixel matrix and was killed at 8 GB, the
    PNG never written. Past 50 classes the report says why there is no figure; 50 are still drawn."""
    import json

    from keras_bert3.jobs.classifier_job import ClassifierJob
    from keras_bert3.jobs.text_rows_job import LabelledTexts
    from keras_bert3.jobs.confusion_matrix_plot import MAX_DRAWN_CLASSES

    job = ClassifierJob()
    for count in (1000, MAX_DRAWN_CLASSES):
        names = [f"class {i:04d}" for i in range(count)]
        truth = [names[i % count] for i in range(3 * count)]
        rows = [{"label": names[(i * 7) % count]} for i in range(3 * count)]
        report = job.report(LabelledTexts(texts=truth, seconds=None, labels=truth), rows, names)
        path = tmp_path / f"report{count}.json"
        path.write_text(json.dumps(report))
        figures = job.write_figures(report, str(path))
        lines = job.report_lines(report)
        if count > MAX_DRAWN_CLASSES:
            assert figures == [] and not list(tmp_path.glob("report1000.*.png"))
            assert report["figure_left_out"].startswith("no confusion-matrix PNG: 1,000 classes, more than the 50")
            assert lines[-1] == report["figure_left_out"] + "." and len(lines) < count + 10
        else:
            assert figures == [str(tmp_path / "report50.confusion_matrix.png")] and "figure_left_out" not in report
