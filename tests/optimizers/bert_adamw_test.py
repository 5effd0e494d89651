"""`BertAdamW` updates parameters as `torch.optim.AdamW` does (the optimizer
Hugging Face's BERT is trained with), step by step, on both backends (on
TensorFlow through the fused `ResourceApplyAdam` kernel)."""

import keras
import numpy as np

from keras_bert3.optimizers.bert_adamw import BertAdamW
from tests.reference import import_reference

SETTINGS = dict(learning_rate=1e-3, weight_decay=0.01, epsilon=1e-6)


def test_steps_equal_torch_adamw():
    torch = import_reference("torch")
    rng = np.random.default_rng(0)
    kernel, bias = rng.normal(size=(64, 32)).astype("float32"), rng.normal(size=(32,)).astype("float32")
    # Gradients of very different sizes: epsilon matters where they are small (the first steps most).
    gradients = [
        (rng.normal(size=kernel.shape) * 10.0 ** rng.uniform(-7, -1, kernel.shape), rng.normal(size=bias.shape) * 1e-3)
        for _ in range(6)
    ]

    ours = [keras.Variable(kernel, name="kernel"), keras.Variable(bias, name="bias")]
    optimizer = BertAdamW(**SETTINGS)
    optimizer.exclude_from_weight_decay(var_names=["bias"])
    theirs = [torch.nn.Parameter(torch.tensor(kernel)), torch.nn.Parameter(torch.tensor(bias))]
    reference = torch.optim.AdamW(
        [{"params": theirs[:1]}, {"params": theirs[1:], "weight_decay": 0.0}],
        lr=SETTINGS["learning_rate"],
        eps=SETTINGS["epsilon"],
        weight_decay=SETTINGS["weight_decay"],
    )
    for step_gradients in gradients:
        optimizer.apply([g.astype("float32") for g in step_gradients], ours)
        for parameter, gradient in zip(theirs, step_gradients):
            parameter.grad = torch.tensor(gradient, dtype=torch.float32)
        reference.step()
        for mine, their in zip(ours, theirs):
            moved = np.abs(their.detach().numpy() - kernel if mine.name == "kernel" else their.detach().numpy() - bias)
            # float32 rounding, in another order of operations: 1e-5 of the largest move.
            np.testing.assert_allclose(
                keras.ops.convert_to_numpy(mine), their.detach().numpy(), rtol=1e-6, atol=1e-5 * moved.max()
            )
