"""`plot_training_curves` draws a `CSVLogger` history, "NA" cells and all, into
a PNG; a history without rows is refused."""

import matplotlib.image
import pytest

from keras_bert3.training.training_curves_plot import plot_training_curves

pytestmark = pytest.mark.backend_free  # matplotlib only.


def test_a_history_with_absent_values_is_drawn(tmp_path):
    history = tmp_path / "history.csv"
    history.write_text(
        "epoch,learning_rate,loss,mlm_accuracy,step,val_loss\n"
        "0,0.001,7.5,0.01,10,NA\n"  # CSVLogger writes NA where an epoch has no value.
        "1,0.0005,6.25,0.05,20,6.0\n"
    )
    png = plot_training_curves(str(history), str(tmp_path / "curves.png"), title="BERT-tiny")
    image = matplotlib.image.imread(png)
    height, width, _ = image.shape
    assert width > 2 * height  # Two panels side by side.
    assert image[..., :3].std() > 0.05  # Curves, labels and grids: not a blank image.


def test_a_history_without_rows_is_refused(tmp_path):
    history = tmp_path / "history.csv"
    history.write_text("epoch,loss\n")
    with pytest.raises(ValueError, match="has no rows: nothing was trained yet"):
        plot_training_curves(str(history), str(tmp_path / "curves.png"))
