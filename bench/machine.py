"""The machine a figure came from, for every benchmark's header: a speed ratio
measured on one CPU kind has reversed on another (AMD EPYC without AMX against
Intel Xeon with AMX), so each figure goes with the CPU that produced it."""

import os
import platform

# The flags that decide which precision serves and trains fastest on a CPU.
FLAGS = ("avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8")


def describe_cpu() -> str:
    """The CPU's model name, cores and its bfloat16 / AMX flags (Linux's
    /proc/cpuinfo; the platform's processor name elsewhere).

    Example:
    >>> describe_cpu()  # doctest: +SKIP
    'AMD EPYC (2 cores): avx512f avx512_bf16; no avx512_fp16 amx_tile amx_bf16 amx_int8'
    """
    name, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and name in ("", platform.processor(), platform.machine()):
                    name = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    present = [flag for flag in FLAGS if flag in flags]
    absent = [flag for flag in FLAGS if flag not in flags]
    return f"{name} ({os.cpu_count()} cores): {' '.join(present) or 'none of ' + ' '.join(FLAGS)}" + (
        f"; no {' '.join(absent)}" if present and absent else ""
    )
