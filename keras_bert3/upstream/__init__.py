"""The only modules that touch private Keras, TensorFlow, JAX or keras-hub APIs.

Each module works around one upstream limitation, names the private API it
uses, checks at import that the installed version still has it (a clear
`ImportError` naming the version if not), and links the upstream issue. The
tests in tests/upstream/ check that each private API still behaves as relied
on, so an upgrade that changes one fails there, loudly, and nowhere else.

- `string_input_layer.StringInputLayer`: a Keras layer that takes strings
  (`Layer._convert_input_args`, `_allow_non_tensor_positional_args`).
- `multi_worker_fit.MultiWorkerFit`: `fit` under `MultiWorkerMirroredStrategy`
  (`Model._maybe_symbolic_build`, `Model._distribute_strategy`,
  `extended._in_multi_worker_mode`; keras-team/keras#20585).
- `replica_clipping.ClipAcrossReplicas`: `global_clipnorm` on the gradient
  summed over replicas (`Optimizer._clip_gradients`).
- `adam_moments.adam_moments`: Adam's moment slots of a variable
  (`_momentums`, `_velocities`, `_get_variable_index`).
- `keras_hub_encoder_parts.transformer_encoder_parts`: the sublayers of a
  keras-hub `TransformerEncoder` (`_self_attention_layer`, ...).
- `data_service_stop.stop_within`: a `tf.data` service server stopped in
  bounded time (`DispatchServer._stop`, `WorkerServer._stop`).
- `data_service_workers.registered_workers`: the workers a `tf.data` service
  dispatcher knows (its internal gRPC method `GetWorkers`).
- `layer_tree.all_layers`: every layer inside a model, nested ones included
  (`Layer._flatten_layers`), to set each one's dtype policy.
- `stablehlo_target.written_for_installed_tensorflow`: JAX exports written
  for the StableHLO version the installed TensorFlow reads
  (`jax._src.export._export._module_to_bytecode`; JAX writes for readers
  four weeks old, newer than TensorFlow releases read).
- `onednn_flag.tensorflow_uses_onednn`: whether TensorFlow's CPU ops run
  on oneDNN (`_pywrap_util_port.IsMklEnabled`).
- `weights_to_file_object.save_weights_to_file_object`: a Keras weights file
  written through a file object (`saving_lib.H5IOStore` on an `io.BytesIO`,
  `saving_lib._save_state`), so that a failed write cannot crash the process.
- `compiled_state.loss_tracker`, `compiled_state.learning_rate_schedule`: a
  compiled model's loss metric (`Model._loss_tracker`) and an optimizer's
  schedule object (`Optimizer._learning_rate`).
- `cudnn_attention_dropout.cudnn_attention_with_dropout`: cuDNN's flash
  attention with dropout on the probabilities
  (`jax._src.cudnn.fused_attention_stablehlo.dot_product_attention`'s
  `seed` and `dropout_rate`; `jax.nn.dot_product_attention` has none).
"""
