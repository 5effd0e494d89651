# Sourced (`. tests/avx2_only.sh`): the libraries the tests run compute as on
# an AVX2-only CPU (AMD EPYC Zen 3; Intel before Skylake-SP), no AVX-512, no
# bfloat16 or VNNI instructions, whatever this CPU has.
# `bash tests/run_all.sh --avx2-only` runs the whole suite so; in every run,
# tests/cpu_kind_test.py checks that it takes effect and runs the tests marked
# `cpu_numerics` under it.
# - TensorFlow: its Linux builds turn oneDNN on by default only on CPUs with
#   AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX; without it they run their own
#   kernels, built for every x86-64 CPU alike.
export TF_ENABLE_ONEDNN_OPTS=0
# - XLA (JAX; TensorFlow's XLA steps): the code it generates.
export XLA_FLAGS="--xla_cpu_max_isa=AVX2 ${XLA_FLAGS:-}"
# - PyTorch (the reference): the oneDNN inside it. Its own kernels pick by
#   the CPU: held to AVX2 (ATEN_CPU_CAPABILITY=avx2) on an AVX-512 CPU,
#   torch 2.13's bfloat16-autocast training ended in a segmentation fault
#   (bench/accelerator_huggingface.py's pretraining row), which an AVX2-only
#   CPU runs; the reference's last bits do not move the tests' tolerances.
export ONEDNN_MAX_CPU_ISA=AVX2
# - onnxruntime picks its kernels from the CPU's flags, with no switch: the
#   ONNX tests run its AVX-512 kernels here.
