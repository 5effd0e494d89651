"""Run as a script (JAX): fits a tiny classifier on 300 real texts of 1 to 400
words, then evaluates and predicts, and prints one JSON line counting the XLA
compilations of each step function (JAX's `jax_log_compiles` lines) and how
many of them JAX's persistent compilation cache answered. With `precompile`,
the fit also runs `PrecompileTrainSteps` (which `fit` adds on accelerators when there are several buckets);
with `mixed_bfloat16`, the step computes in bfloat16 (as `precision="auto"`
chooses on GPUs).

    KERAS_BACKEND=jax python -m tests.models.fit_compilations MINILM_DIR [precompile] [mixed_bfloat16]
"""

import json
import logging
import re
import sys

import jax

COMPILED, CACHE_HITS = {}, {}


class CompilationLog(logging.Handler):
    def emit(self, record):
        message = record.getMessage()
        compiled = re.match(r"Compiling jit\((\w+)\)", message)
        if compiled:
            COMPILED[compiled[1]] = COMPILED.get(compiled[1], 0) + 1
        hit = re.match(r"Persistent compilation cache hit for 'jit_(\w+)'", message)
        if hit:
            CACHE_HITS[hit[1]] = CACHE_HITS.get(hit[1], 0) + 1


def main() -> None:
    jax.config.update("jax_log_compiles", True)
    logging.getLogger("jax").addHandler(CompilationLog())
    import numpy as np
    import pydoc_data.topics

    import keras_bert3
    from tests.test_case import tiny_backbone

    words = " ".join(pydoc_data.topics.topics.values()).split()
    rng = np.random.default_rng(0)
    lengths = np.exp(rng.uniform(0, np.log(400), 300)).astype(int)  # 1 to 400 words, log-uniform.
    texts = [" ".join(words[start : start + n]) for start, n in zip(rng.integers(0, len(words) - 400, 300), lengths)]
    labels = rng.integers(0, 3, 300)
    tokenizer = keras_bert3.BertTokenizer.from_preset(sys.argv[1])
    backbone = tiny_backbone(tokenizer.vocabulary_size(), max_sequence_length=128)
    classifier = keras_bert3.BertClassifier(backbone, 3, tokenizer=tokenizer, sequence_length=128)
    if "mixed_bfloat16" in sys.argv[2:]:  # The step GPUs run: bfloat16 compute, float32 weights.
        classifier.compile(precision="mixed_bfloat16")
    callbacks = []
    if "precompile" in sys.argv[2:]:
        from keras_bert3.preprocessing.fixed_shapes import fixed_shape_specs
        from keras_bert3.models.train_step_precompile import PrecompileTrainSteps

        element_spec = classifier.batches(texts, labels, batch_size=32).element_spec
        callbacks.append(
            PrecompileTrainSteps(fixed_shape_specs(element_spec, batch_size=32, buckets=classifier.length_buckets))
        )
    history = classifier.fit(texts, labels, batch_size=32, epochs=2, verbose=0, callbacks=callbacks)
    scores = classifier.evaluate(texts, labels, batch_size=32, return_dict=True, verbose=0)
    classifier.predict(texts, batch_size=32)
    print(
        json.dumps(
            {
                "compiled": COMPILED,
                "cache_hits": CACHE_HITS,
                "loss": history.history["loss"],
                "scores": scores,
                "buckets": classifier.length_buckets,
                "cache": jax.config.jax_compilation_cache_dir,
                "precompiled": callbacks[0].compiled if callbacks else 0,
            }
        )
    )


if __name__ == "__main__":
    main()
