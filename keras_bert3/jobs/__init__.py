"""What the commands do with files, for each task: read labelled files,
fine-tune with checkpoints (`finetuning_run`), predict files of any size
(`prediction_files`) and evaluate with a report (`evaluation`), on a
fine-tuned preset, its SavedModel or its ONNX folder alike (`served_model`).
Each task's part is one `TaskJob` (`task_job`), named by `--task`."""
