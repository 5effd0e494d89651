"""BERT's schedule, and its sizing by a task's first fit (`sized_by_first_fit`)."""

import keras

from keras_bert3.optimizers.linear_warmup_decay import LinearWarmupLinearDecay
from keras_bert3.optimizers.linear_warmup_decay import size_schedule_to_fit


def test_a_schedule_made_for_the_first_fit_is_sized_once():
    schedule = LinearWarmupLinearDecay.sized_by_first_fit(5e-5, warmup_ratio=0.1)
    schedule.size_to(300)
    assert (schedule.warmup_steps, schedule.total_steps) == (30, 300)
    schedule.size_to(50)  # A later fit goes on with it.
    assert (schedule.warmup_steps, schedule.total_steps) == (30, 300)
    assert schedule.get_config() == LinearWarmupLinearDecay(5e-5, 30, 300).get_config()


def test_only_an_unsized_schedule_before_the_first_step_is_sized():
    given = LinearWarmupLinearDecay.for_fine_tuning(5e-5, 0.1, total_steps=100)
    size_schedule_to_fit(keras.optimizers.AdamW(learning_rate=given), epochs=3, steps_per_epoch=10)
    assert (given.warmup_steps, given.total_steps) == (10, 100)
    unsized = LinearWarmupLinearDecay.for_fine_tuning(5e-5, 0.1, total_steps=None)
    optimizer = keras.optimizers.AdamW(learning_rate=unsized)
    optimizer.iterations.assign(1)  # A step taken: the schedule runs on as it is.
    size_schedule_to_fit(optimizer, epochs=3, steps_per_epoch=10)
    assert unsized.total_steps == 1_000_000
    optimizer.iterations.assign(0)
    size_schedule_to_fit(optimizer, epochs=3, steps_per_epoch=10)
    assert (unsized.warmup_steps, unsized.total_steps) == (3, 30)


def test_each_schedule_is_hugging_faces_of_its_name():
    """`decay="linear"`, `"cosine"`, `"constant"` after warmup: transformers' `get_scheduler` of the same name, step by
    step to the last (past it, Hugging Face's cosine rises again; ours stays at the end); counted in optimizer updates
    where gradients are accumulated (`steps_per_update`)."""
    import numpy as np

    from tests.reference import import_reference

    torch, transformers = import_reference("torch"), import_reference("transformers")
    for decay in ("linear", "cosine", "constant"):
        parameter = torch.nn.Parameter(torch.zeros(1))
        optimizer = torch.optim.SGD([parameter], lr=3e-5)
        reference = transformers.get_scheduler(
            decay if decay != "constant" else "constant_with_warmup",
            optimizer,
            num_warmup_steps=7,
            num_training_steps=40,
        )
        expected = []
        for _ in range(41):
            expected.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            reference.step()
        schedule = LinearWarmupLinearDecay(3e-5, 7, 40, decay=decay)
        np.testing.assert_allclose([float(schedule(step)) for step in range(41)], expected, rtol=1e-5, atol=1e-12)
        accumulated = LinearWarmupLinearDecay(3e-5, 7, 40, decay=decay, steps_per_update=4)
        assert [float(accumulated(4 * step + 3)) for step in range(41)] == [float(schedule(step)) for step in range(41)]
