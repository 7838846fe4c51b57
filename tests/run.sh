#!/usr/bin/env bash
# tests/run.sh: installs what is missing, builds profopt and runs every test through ctest.
# Environment: PROFOPT_BUILD_DIR (default build/), PROFOPT_SANITIZE (e.g. address,undefined),
# CTEST_ARGS (extra ctest arguments, e.g. "-R model"), PROFOPT_VALGRIND=1 (the end-to-end
# analyzer tests run profopt-analyze under valgrind memcheck). A sanitizer build runs its
# tests with tests/lib/sanitizer-env.cmake.in's options and tests/lib/lsan.supp.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PROFOPT_BUILD_DIR:-$root/build}

"$root/tests/lib/install-deps.sh" --with-test-tools
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DPROFOPT_SANITIZE="${PROFOPT_SANITIZE:-}" >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
# shellcheck disable=SC2086
ctest --output-on-failure -j"$(nproc)" ${CTEST_ARGS:-}
