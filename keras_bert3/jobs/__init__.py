"""What the commands do with files, for each task (a `TaskJob`, named by `--task`):
fine-tune, predict and evaluate, on a preset, its SavedModel or its ONNX folder alike."""
