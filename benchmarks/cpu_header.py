"""The CPU a benchmark ran on, for the header every benchmark prints.

Speed figures on a CPU depend on its vector extensions: PyTorch's matrix products (oneDNN,
MKL) take AVX-512 and AMX kernels where the CPU has them and AVX2 ones elsewhere, and the
same code's ratio to bert_score differs between the two (``docs/performance/index.md``).
So every figure names the CPU model and its extensions, and any cap set on the libraries'
instruction sets (``ONEDNN_MAX_CPU_ISA``, ``DNNL_MAX_CPU_ISA``, ``MKL_ENABLE_INSTRUCTIONS``,
``ATEN_CPU_CAPABILITY``), with which an AVX-512 machine runs the AVX2 code paths.

    python benchmarks/cpu_header.py
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

#: x86 flags of /proc/cpuinfo that decide which kernels run, in the order printed, with
#: the names Intel's and AMD's manuals give them.
X86_EXTENSIONS = {
    "avx2": "AVX2",
    "fma": "FMA",
    "avx_vnni": "AVX-VNNI",
    "avx512f": "AVX-512F",
    "avx512bw": "AVX-512BW",
    "avx512vl": "AVX-512VL",
    "avx512_vnni": "AVX-512-VNNI",
    "avx512_bf16": "AVX-512-BF16",
    "avx512_fp16": "AVX-512-FP16",
    "amx_bf16": "AMX-BF16",
    "amx_int8": "AMX-INT8",
}

#: Variables that cap the instruction sets PyTorch's libraries use.
ISA_CAPS = (
    "ONEDNN_MAX_CPU_ISA",
    "DNNL_MAX_CPU_ISA",
    "MKL_ENABLE_INSTRUCTIONS",
    "ATEN_CPU_CAPABILITY",
)


def cpu_model(cpuinfo: str | None = None) -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    text = cpuinfo if cpuinfo is not None else _read_cpuinfo()
    for line in text.splitlines():
        if line.split(":")[0].strip() in ("model name", "Model", "Hardware"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def vector_extensions(cpuinfo: str | None = None) -> list[str]:
    """The CPU's vector extensions that matter for the matrix products, named; on
    Arm, ``asimd`` (NEON), ``sve`` and ``sve2`` where the kernel lists them."""
    text = cpuinfo if cpuinfo is not None else _read_cpuinfo()
    flags: set[str] = set()
    for line in text.splitlines():
        if line.split(":")[0].strip() in ("flags", "Features"):
            flags |= set(line.split(":", 1)[1].split())
    named = [name for flag, name in X86_EXTENSIONS.items() if flag in flags]
    named += [flag.upper() for flag in ("asimd", "sve", "sve2") if flag in flags]
    return named


def isa_caps() -> list[str]:
    """The instruction-set caps set in this process's environment, as ``NAME=value``."""
    return [f"{name}={os.environ[name]}" for name in ISA_CAPS if os.environ.get(name)]


def cpu_header(cpuinfo: str | None = None) -> str:
    """One line: the CPU model, its logical cores, its vector extensions and any caps."""
    extensions = vector_extensions(cpuinfo)
    line = (
        f"CPU: {cpu_model(cpuinfo)}, {os.cpu_count()} logical cores; vector extensions: "
        f"{', '.join(extensions) if extensions else 'none listed'}"
    )
    caps = isa_caps()
    if caps:
        line += f"; capped: {' '.join(caps)}"
    return line


def print_cpu_header() -> None:
    """Print :func:`cpu_header`: the first line of every benchmark's output."""
    print(cpu_header(), flush=True)


def _read_cpuinfo() -> str:
    path = Path("/proc/cpuinfo")
    if not path.is_file():
        return ""
    # The first processor's block: every core of one machine lists the same.
    return path.read_text(encoding="utf-8", errors="replace").split("\n\n", 1)[0]


if __name__ == "__main__":
    print_cpu_header()
