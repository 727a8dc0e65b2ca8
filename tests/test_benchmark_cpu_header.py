"""Every benchmark names the CPU it ran on and its vector extensions in its header: a
speed ratio measured with AVX-512 does not hold on an AVX2-only CPU."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import cpu_header  # noqa: E402

#: Scripts in benchmarks/ that measure nothing: the header helper itself, the suite's
#: log, the model builder whose stdout gpu_suite.sh reads as a path, the table of a
#: suite that ran on another machine (its runs' own logs name that machine), and the
#: captioning workload that benchmarks import.
NOT_BENCHMARKS = {
    "cpu_header.py",
    "suite_log.py",
    "minilm_shape.py",
    "gpu_suite_table.py",
    "caption_workload.py",
}

#: /proc/cpuinfo lines of two CPUs (abridged): an AVX2-only AMD EPYC (Zen 3) and an
#: Intel Xeon with AVX-512 and AMX (Sapphire Rapids).
ZEN3 = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7763 64-Core Processor
flags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2 sha_ni vaes
"""
SAPPHIRE_RAPIDS = (
    "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
    "flags\t\t: sse4_2 avx avx2 fma avx_vnni avx512f avx512dq avx512bw avx512vl avx512_vnni "
    "avx512_bf16 avx512_fp16 amx_tile amx_bf16 amx_int8\n"
)


def test_each_benchmark_prints_the_cpu_header_before_it_runs():
    scripts = sorted(path for path in BENCHMARKS.glob("*.py") if path.name not in NOT_BENCHMARKS)
    assert len(scripts) >= 20
    for script in scripts:
        [main_block] = [
            node
            for node in ast.parse(script.read_text("utf-8")).body
            if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
        ]
        calls = [ast.unparse(node) for node in main_block.body if isinstance(node, ast.Expr)]
        assert calls and calls[0] == "print_cpu_header()", script.name


def test_the_header_names_the_model_and_the_extensions_that_decide_the_kernels(monkeypatch):
    for name in cpu_header.ISA_CAPS:
        monkeypatch.delenv(name, raising=False)
    assert cpu_header.cpu_model(ZEN3) == "AMD EPYC 7763 64-Core Processor"
    assert cpu_header.vector_extensions(ZEN3) == ["AVX2", "FMA"]
    assert cpu_header.vector_extensions(SAPPHIRE_RAPIDS) == [
        "AVX2", "FMA", "AVX-VNNI", "AVX-512F", "AVX-512BW", "AVX-512VL", "AVX-512-VNNI",
        "AVX-512-BF16", "AVX-512-FP16", "AMX-BF16", "AMX-INT8",
    ]  # fmt: skip
    header = cpu_header.cpu_header(ZEN3)
    assert header.startswith("CPU: AMD EPYC 7763 64-Core Processor, ")
    assert header.endswith("vector extensions: AVX2, FMA")


def test_a_cap_on_the_instruction_sets_is_in_the_header(monkeypatch):
    # How an AVX-512 machine runs oneDNN's and MKL's AVX2 code paths.
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "AVX2")
    header = cpu_header.cpu_header(SAPPHIRE_RAPIDS)
    assert header.endswith("; capped: ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2")
