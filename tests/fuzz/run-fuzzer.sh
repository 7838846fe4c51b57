#!/usr/bin/env bash
# run-fuzzer.sh [SECONDS]: builds the model's libFuzzer target with clang, AddressSanitizer
# and UndefinedBehaviorSanitizer in build-fuzz/, and fuzzes for SECONDS (default 60),
# starting from the committed corpus. New inputs go to build-fuzz/corpus-new; a crash
# leaves its input in build-fuzz/ and fails the script.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
build=${PROFOPT_FUZZ_BUILD_DIR:-$root/build-fuzz}

CC=clang CXX=clang++ CFLAGS="-fsanitize=fuzzer-no-link" cmake -S "$root" -B "$build" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROFOPT_FUZZ=ON \
	-DPROFOPT_SANITIZE=address,undefined >/dev/null
cmake --build "$build" --target fuzz-model -j"$(nproc)" >/dev/null
mkdir -p "$build/corpus-new"
cd "$build"
"$build/bin/fuzz-model" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 "$build/corpus-new" "$root/tests/fuzz/corpus"
