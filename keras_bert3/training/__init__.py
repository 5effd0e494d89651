"""Pretraining runs: the recipe, checkpoints, logs and curves around `fit`."""

from keras_bert3.training.pretraining_config import PretrainingConfig
from keras_bert3.training.pretraining_run import pretrain
from keras_bert3.training.stop_on_nan import StopOnNaN
from keras_bert3.training.training_curves_plot import plot_training_curves

__all__ = ["PretrainingConfig", "StopOnNaN", "plot_training_curves", "pretrain"]
