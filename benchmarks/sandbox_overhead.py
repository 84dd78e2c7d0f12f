#!/usr/bin/env python3
"""Wall time per exec of cutegen-sandbox around /bin/true, against /bin/true alone.

Usage: python3 benchmarks/sandbox_overhead.py build/cutegen-sandbox [N]
Prints one markdown table row per variant (median, mean, 90th percentile in ms over N runs);
benchmarks/results.md records the numbers.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time


def nvcc_like_reads():
    """The --read list NvccCompiler gives nvcc (system directories plus the CUDA toolkit)."""
    dirs = ["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc", "/sys",
            "/dev/zero", "/dev/urandom", "/dev/random"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        dirs.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    args = []
    for d in dirs:
        if os.path.exists(d):
            args += ["--read", d]
    return args


def main():
    sandbox = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    cases = {
        "/bin/true": ["/bin/true"],
        "cutegen-sandbox -- /bin/true": [sandbox, "--", "/bin/true"],
        "cutegen-sandbox --syscalls runner -- /bin/true": [sandbox, "--syscalls", "runner", "--", "/bin/true"],
        "cutegen-sandbox --syscalls profiler -- /bin/true": [sandbox, "--syscalls", "profiler", "--", "/bin/true"],
        "cutegen-sandbox --syscalls compiler, nvcc's --read list, --write, --rlimit-as -- /bin/true":
            [sandbox, "--syscalls", "compiler"] + nvcc_like_reads() + ["--write", "/tmp", "--rlimit-as", str(16 << 30),
                                                                       "--", "/bin/true"],
    }
    print("| command | median ms | mean ms | p90 ms |")
    print("| --- | --- | --- | --- |")
    for name, argv in cases.items():
        for _ in range(20):
            subprocess.run(argv, check=True)
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            subprocess.run(argv, check=True)
            times.append(time.perf_counter() - t0)
        times.sort()
        print(f"| `{name}` | {statistics.median(times) * 1e3:.2f} | {statistics.mean(times) * 1e3:.2f} | "
              f"{times[int(0.9 * n)] * 1e3:.2f} |")


if __name__ == "__main__":
    main()
