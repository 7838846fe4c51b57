#!/usr/bin/env bash
# tests/run.sh: installs what is missing, builds profopt and runs every test through ctest.
# Environment: PROFOPT_BUILD_DIR (default build/), PROFOPT_SANITIZE (e.g. address,undefined),
# PROFOPT_WERROR=0 (warnings do not fail the build; by default they do),
# CTEST_ARGS (extra ctest arguments, e.g. "-R model"), PROFOPT_VALGRIND=1 (the end-to-end
# analyzer tests run profopt-analyze under valgrind memcheck). A sanitizer build runs its
# tests with tests/lib/sanitizer-env.cmake.in's options and tests/lib/lsan.supp.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PROFOPT_BUILD_DIR:-$root/build}

"$root/tests/lib/install-deps.sh" --with-test-tools
# Tests build with warnings as errors and with assert() kept (PROFOPT_WERROR=0 to relax).
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DPROFOPT_SANITIZE="${PROFOPT_SANITIZE:-}" -DPROFOPT_ASSERTIONS=ON \
	-DPROFOPT_WERROR="$([ "${PROFOPT_WERROR:-1}" = 0 ] && echo OFF || echo ON)" >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
# shellcheck disable=SC2086
ctest --output-on-failure -j"$(nproc)" ${CTEST_ARGS:-}
