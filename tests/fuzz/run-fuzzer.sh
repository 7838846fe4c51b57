#!/usr/bin/env bash
# run-fuzzer.sh [SECONDS]: builds the libFuzzer targets with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz/ and fuzzes each for a third of SECONDS (default
# 60 in all, at least 20 each), starting from its committed corpus: fuzz-model (the
# model's event handling, tests/fuzz/corpus), fuzz-baseline (the --baseline
# summary.json reader, digest and comparison, tests/fuzz/corpus-baseline) and fuzz-kineto
# (the torch.profiler trace reader and mapping, tests/fuzz/corpus-kineto). New inputs go
# to build-fuzz/corpus-new-TARGET; a crash leaves its input in build-fuzz/ and fails the
# script.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
build=${PROFOPT_FUZZ_BUILD_DIR:-$root/build-fuzz}
each=$((seconds / 3))
[ "$each" -ge 20 ] || each=20

CC=clang CXX=clang++ CFLAGS="-fsanitize=fuzzer-no-link" cmake -S "$root" -B "$build" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROFOPT_FUZZ=ON \
	-DPROFOPT_SANITIZE=address,undefined >/dev/null
cmake --build "$build" --target fuzz-model fuzz-baseline fuzz-kineto -j"$(nproc)" >/dev/null
cd "$build"
for target in model baseline kineto; do
	corpus=$root/tests/fuzz/corpus
	[ "$target" = baseline ] && corpus=$root/tests/fuzz/corpus-baseline
	[ "$target" = kineto ] && corpus=$root/tests/fuzz/corpus-kineto
	mkdir -p "$build/corpus-new-$target"
	echo "fuzz-$target: $each s from $corpus"
	"$build/bin/fuzz-$target" -max_total_time="$each" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 "$build/corpus-new-$target" "$corpus"
done
