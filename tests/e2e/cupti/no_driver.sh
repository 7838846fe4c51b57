#!/usr/bin/env bash
# no_driver.sh NO_DRIVER LIBRARY: on a machine without a CUDA driver, the collector loaded
# as the driver would load it says once, on stderr, that it records no GPU activity and
# why, and the program runs to its end with its own output and status. Skipped (77) where
# a driver is installed: the premise does not hold there.
set -u
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	echo "skipped: this machine has a CUDA driver (libcuda.so.1)"
	exit 77
fi
work=$(mktemp -d /tmp/profopt-cupti-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$1" "$2" >"$work/out" 2>"$work/err"
status=$?
fail=0
if [ "$status" -ne 0 ]; then
	echo "FAIL the program exited with status $status"
	fail=1
fi
if ! grep -q '^program done ' "$work/out"; then
	echo "FAIL the program did not finish its work"
	fail=1
fi
lines=$(wc -l <"$work/err")
if [ "$lines" -ne 1 ] || ! grep -q '^profopt-cupti: no GPU activity recorded: no CUDA driver' \
	"$work/err"; then
	echo "FAIL stderr should be one line saying why nothing is recorded; it was:"
	cat "$work/err"
	fail=1
fi
[ "$fail" = 0 ] && echo "ok   the collector said why it records nothing: $(cat "$work/err")"
exit "$fail"
