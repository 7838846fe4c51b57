#!/usr/bin/env bash
# stacks_c.sh BUILD_DIR [SECONDS] [REPS]: the cost of libprofopt's native stack sampler
# (profopt_stacks_start, docs/sampling.md) on a CPU-bound C program: profopt-bench-stacks-c
# (bench/stacks_c_load.c: one thread, a leaf of fixed work 24 calls deep) runs SECONDS of
# wall time (default 2) under profopt-record without --stacks, with --stacks=100 and with
# --stacks=1000, REPS times each (default 3), the configurations alternating so that the
# machine's load falls on each alike. Prints the median throughput of each, in work units
# per CPU second of the program (the handler's time and the kernel's delivery of its signal
# count as the program's: the figure the sampler changes) and per wall second, the cost
# against the run without --stacks, the samples a run recorded, and what one sample cost.
# Between processes the same work varies by about 1% (where code and stack fall in the
# caches, the machine's other load), more than the sampler costs; so the script then also
# runs profopt-bench-stacks-c --alternate HZ, which starts and stops the sampler itself in
# 0.25 s rounds in one recorded process, and prints the medians of its rounds with and
# without samples.
# Builds nothing: BUILD_DIR must hold bin/profopt-record and bin/profopt-bench-stacks-c
# (cmake --build BUILD_DIR --target profopt-record profopt-bench-stacks-c). Runs next to a
# private session daemon (tests/lib/with-sessiond.sh).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: stacks_c.sh BUILD_DIR [SECONDS] [REPS]}" && pwd)
seconds=${2:-2}
reps=${3:-3}
record=$build/bin/profopt-record
load=$build/bin/profopt-bench-stacks-c
for program in "$record" "$load"; do
	[ -x "$program" ] || { echo "stacks_c: $program not found; build it first" >&2; exit 1; }
done
command -v babeltrace2 >/dev/null || { echo "stacks_c: babeltrace2 not found" >&2; exit 1; }

if [ -z "${PROFOPT_BENCH_INSIDE:-}" ]; then
	PROFOPT_BENCH_INSIDE=1 exec "$root/tests/lib/with-sessiond.sh" "$0" "$build" "$seconds" \
		"$reps"
fi

work=$(mktemp -d /tmp/profopt-stacks-c.XXXXXX)
trap 'rm -rf "$work"' EXIT

# one_run HZ REP: appends "units_per_cpu_s units_per_s cpu_s samples" to $work/HZ
# (HZ 0: without --stacks).
one_run() {
	local hz=$1 trace=$work/trace-$1-$2 line samples
	local stacks=()
	[ "$hz" -gt 0 ] && stacks=(--stacks="$hz")
	if ! "$record" "${stacks[@]}" -o "$trace" -- "$load" "$seconds" >"$work/out" \
		2>"$work/err"; then
		echo "stacks_c: the run with --stacks=$hz failed:" >&2
		tail -n 20 "$work/out" "$work/err" >&2
		exit 1
	fi
	line=$(grep '^units_per_cpu_s ' "$work/out")
	samples=$(babeltrace2 "$trace" 2>/dev/null | grep -c 'profopt:native_stack' || true)
	echo "$line" | awk -v samples="$samples" '{ print $2, $4, $6, samples }' >>"$work/$hz"
	rm -rf "$trace"
}

# median FILE COLUMN
median() {
	awk -v column="$2" '{ print $column }' "$1" | sort -g |
		awk '{ value[NR] = $1 }
			END { print NR % 2 ? value[(NR + 1) / 2] : (value[NR / 2] + value[NR / 2 + 1]) / 2 }'
}

echo "profopt-bench-stacks-c, ${seconds} s a run, median of $reps runs each ($(nproc) CPUs)"
for rep in $(seq "$reps"); do
	for hz in 0 100 1000; do
		one_run "$hz" "$rep"
	done
done

plain_cpu=$(median "$work/0" 1)
plain_wall=$(median "$work/0" 2)
printf '%-15s %14s %9s %14s %9s %9s %12s\n' "" "units/CPU s" "cost" "units/s" "cost" \
	"samples" "per sample"
for hz in 0 100 1000; do
	cpu=$(median "$work/$hz" 1)
	wall=$(median "$work/$hz" 2)
	cpu_s=$(median "$work/$hz" 3)
	samples=$(median "$work/$hz" 4)
	label=$([ "$hz" -eq 0 ] && echo "no --stacks" || echo "--stacks=$hz")
	awk -v label="$label" -v cpu="$cpu" -v wall="$wall" -v plain_cpu="$plain_cpu" \
		-v plain_wall="$plain_wall" -v cpu_s="$cpu_s" -v samples="$samples" 'BEGIN {
		cost = 100 * (plain_cpu - cpu) / plain_cpu
		per_sample = samples > 0 ? sprintf("%.1f us", 1e6 * (cost / 100) * cpu_s / samples) : "-"
		printf "%-15s %14.0f %8.2f%% %14.0f %8.2f%% %9d %12s\n", label, cpu, cost, wall,
			100 * (plain_wall - wall) / plain_wall, samples, per_sample
	}'
done

# in one process: ROUNDS rounds of 0.25 s alternating without and with the sampler. On wall
# time at 10 kHz (a high-resolution timer, where the CPU clock's expirations merge at the
# scheduler tick) the cost is large enough to measure against the noise: what one sample
# costs, and from it what the CPU-time rates cost at the samples they took.
rounds=$((reps * 8))
echo
echo "in one process, $rounds rounds of 0.25 s, half of them sampled (median of each half):"
printf '%-19s %15s %14s %9s %9s %12s\n' "" "off units/CPU s" "on units/CPU s" "cost" \
	"samples" "per sample"
for config in "100 cpu" "1000 cpu" "10000 wall"; do
	read -r hz clock <<<"$config"
	set -- "$hz" "$clock"
	trace=$work/trace-alternate-$1-$2
	if ! "$record" -o "$trace" -- "$load" --alternate "$1" "$rounds" "$2" >"$work/out" \
		2>"$work/err"; then
		echo "stacks_c: the run with --alternate $1 $2 failed:" >&2
		tail -n 20 "$work/out" "$work/err" >&2
		exit 1
	fi
	samples=$(babeltrace2 "$trace" 2>/dev/null | grep -c 'profopt:native_stack' || true)
	grep '^alternate_hz ' "$work/out" | awk -v samples="$samples" -v rounds="$rounds" \
		-v clock="$2" '{
		cost = 100 * ($4 - $6) / $4
		per_sample = samples > 0 ? 1e6 * (cost / 100) * (rounds / 2) * 0.25 / samples : 0
		printf "%-19s %15.0f %14.0f %8.2f%% %9d %9.1f us\n", $2 " Hz, " clock " time", $4,
			$6, cost, samples, per_sample
		print per_sample, samples / ((rounds / 2) * 0.25) > "'"$work"'/alternate-" $2
	}'
	rm -rf "$trace"
done
read -r per_sample_us _ <"$work/alternate-10000"
for hz in 100 1000; do
	read -r _ rate <"$work/alternate-$hz"
	awk -v hz="$hz" -v us="$per_sample_us" -v rate="$rate" 'BEGIN {
		printf "at %s Hz of CPU time: %.0f samples per CPU second x %.1f us = %.2f%% of the CPU\n",
			hz, rate, us, rate * us / 1e4 }'
done
