"""This machine's CPU flags, for tests whose work depends on the CPU kind."""

# What tests/avx2_only.sh holds the libraries below: AVX-512 (XLA's code), and
# the instructions for which TensorFlow's Linux builds turn oneDNN on.
NEWER_THAN_AVX2 = {"avx512f", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16"}


def cpu_flags() -> set[str]:
    """The flags of this machine's first CPU in /proc/cpuinfo (empty elsewhere)."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return next((set(line.split(":", 1)[1].split()) for line in cpuinfo if line.startswith("flags")), set())
    except OSError:
        return set()


def cpu_is_avx2_only() -> bool:
    """Whether this CPU has AVX2 and nothing newer that tests/avx2_only.sh
    turns off (an AMD EPYC Zen 3): on it, every test already computes as
    under that script."""
    flags = cpu_flags()
    return "avx2" in flags and not flags & NEWER_THAN_AVX2
