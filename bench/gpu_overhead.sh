#!/usr/bin/env bash
# gpu_overhead.sh [BUILD_DIR]: what the CUPTI collector costs (a benchmark to run by hand
# on a machine with an NVIDIA GPU; not a test). Builds bench/gpu_overhead.cu with nvcc,
# then for kernels of 5 us, 50 us and 1 ms times ROUNDS (default 5) alternating runs
# without the collector and with it (CUDA_INJECTION64_PATH, no recording session: the
# collector's own cost, CUPTI included), and prints the median time per kernel of each and
# the overhead. Under profopt-record --gpu the tracepoints add their own cost on top
# (bench/tracepoint_cost.sh measures it: about a microsecond per event); RECORD=1 adds a
# column of runs under profopt-record --gpu (a session daemon must answer, or be startable).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
collector=$build/lib/libprofopt-cupti.so.0
rounds=${ROUNDS:-5}
work=$(mktemp -d /tmp/profopt-gpu-overhead.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -e "$collector" ] || { echo "gpu_overhead: $collector is not built (docs/gpu.md)" >&2; exit 1; }
nvcc -O2 -o "$work/gpu_overhead" "$root/bench/gpu_overhead.cu"
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
record=${RECORD:-0}
percent() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f%%", (a - b) / b * 100}'; }
printf '%-10s %10s %14s %14s %10s' kernel launches "plain us" "collector us" overhead
[ "$record" = 1 ] && printf ' %14s %10s' "recorded us" overhead
printf '\n'
for us in 5 50 1000; do
	launches=$((us >= 1000 ? 2000 : 20000))
	: >"$work/plain" && : >"$work/with" && : >"$work/recorded"
	for _ in $(seq "$rounds"); do
		"$work/gpu_overhead" "$us" "$launches" | sed -n 's/^us_per_kernel //p' >>"$work/plain"
		CUDA_INJECTION64_PATH=$collector "$work/gpu_overhead" "$us" "$launches" |
			sed -n 's/^us_per_kernel //p' >>"$work/with"
		[ "$record" = 1 ] || continue
		rm -rf "$work/trace"
		"$build/bin/profopt-record" --gpu -o "$work/trace" -- \
			"$work/gpu_overhead" "$us" "$launches" 2>/dev/null |
			sed -n 's/^us_per_kernel //p' >>"$work/recorded"
	done
	plain=$(median <"$work/plain") with=$(median <"$work/with")
	printf '%-10s %10d %14.3f %14.3f %10s' "${us} us" "$launches" "$plain" "$with" \
		"$(percent "$with" "$plain")"
	if [ "$record" = 1 ]; then
		recorded=$(median <"$work/recorded")
		printf ' %14.3f %10s' "$recorded" "$(percent "$recorded" "$plain")"
	fi
	printf '\n'
done
