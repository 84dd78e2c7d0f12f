#!/usr/bin/env bash
# Where one kernel's nvcc build goes, by hand with the build's flags (benchmarks/results.md, "Compile times"):
# nvcc's own phase times (`nvcc -time`), then cicc alone on the kept preprocessed source, in full against
# stopped after its front end by an option libnvvm refuses (src/compile/stub_ahead.h), twice each, with
# the md5 of the stub each wrote: the time the host compile started from the early stub no longer waits.
#   benchmarks/nvcc_phases.sh KERNEL.cu        (from the repository root, after scripts/setup)
set -u
[[ $# -eq 1 && -f "$1" ]] || { echo "usage: benchmarks/nvcc_phases.sh KERNEL.cu" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$1" "$work/candidate.cu"
cd "$work"
flags=(-std=c++17 -gencode arch=compute_90a,code=sm_90a -Xcompiler -fPIC -O3 --expt-relaxed-constexpr
       -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL -lineinfo -shared -cudart shared --no-compress
       "-I$root/include" "-I$root/third_party/cutlass/include" "-I$root/third_party/cutlass/tools/util/include"
       candidate.cu -o kernel.so -lcuda)
mkdir keep plan
nvcc "${flags[@]}" --keep --keep-dir keep -time phases.csv >/dev/null 2>&1 || { echo "nvcc failed on $1" >&2; exit 1; }
awk -F, 'NR>1{printf "%s %.2f s |", $2, $(NF-1)/1000} END{print ""}' phases.csv
nvcc "${flags[@]}" --keep --keep-dir plan --dryrun 2>&1 | grep '^#\$ ' | sed 's/^#\$ //' > plan.sh
grep -E '^[A-Za-z_]+=' plan.sh | grep -v '^INCLUDES\|^LIBRARIES\|^SYSTEM_INCLUDES' | sed 's/^/export /' > env.sh
front=$(grep -n '^cudafe++' plan.sh | cut -d: -f1)
cicc=$(grep -n 'cicc"' plan.sh | cut -d: -f1)
(cat env.sh; sed -n "$((front - 1)),$((front + 1))p" plan.sh) > pre.sh   # both preprocessings, cudafe++
bash pre.sh >/dev/null 2>&1 || { echo "preprocessing failed" >&2; exit 1; }
(cat env.sh; sed -n "${cicc}p" plan.sh) > full.sh
sed 's|"$CICC_PATH/cicc"|"$CICC_PATH/cicc" --Xlibnvvm -cutegen-stop-after-front-end|' full.sh > early.sh
for round in 1 2; do
  for which in full early; do
    rm -f plan/*.stub.c plan/*.ptx
    start=$(date +%s.%N)
    TMPDIR="$work" bash "$which.sh" >/dev/null 2>&1
    end=$(date +%s.%N)
    printf 'cicc %s %.2f s, stub md5 %s; ' "$which" "$(echo "$end - $start" | bc)" \
      "$(md5sum < plan/candidate.cudafe1.stub.c 2>/dev/null | cut -c1-8)"
  done
  echo
done
