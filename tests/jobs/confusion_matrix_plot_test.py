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
