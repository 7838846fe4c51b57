#!/usr/bin/env bash
# not_loaded.sh BIN_DIR: a PyTorch script whose profopt module cannot load libprofopt is
# recorded: profopt-record says that the module did not load (not only that no events were
# discarded), keeps the reason in the trace directory, and profopt-analyze names it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bin=$1
work=$(mktemp -d /tmp/profopt-e2e-notloaded.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() { # check TEXT COMMAND...
	local text=$1
	shift
	if "$@"; then passed=$((passed + 1)); echo "ok   $text"; else failed=$((failed + 1)); echo "FAIL $text"; fi
}

# A copy of the module outside the source tree finds no build tree to fall back on.
mkdir "$work/python" "$work/tmp" && cp -r "$root/tracepoints/python/profopt" "$work/python/"
PYTHONPATH=$work/python PROFOPT_LIBRARY=$work/nowhere/libprofopt.so \
	"$root/tests/lib/with-sessiond.sh" env TMPDIR="$work/tmp" \
	"$bin/profopt-record" -o "$work/trace" -- \
	/usr/bin/python3 "$root/samples/pytorch/train.py" --workers 2 --steps 10 \
	>"$work/out" 2>"$work/err"
status=$?
cat "$work/err"
check "the command's own status is kept (got $status)" [ "$status" -eq 0 ]
check "profopt-record says the module could not load libprofopt" \
	grep -q "profopt Python module could not load libprofopt" "$work/err"
check "and names the path it tried" grep -q "nowhere/libprofopt.so" "$work/err"
check "the reason is kept in the trace directory" \
	grep -q "^libprofopt-not-loaded" "$work/trace/profopt-record-notes.txt"
"$bin/profopt-analyze" "$work/trace" -o "$work/report" >"$work/analyze" 2>&1
status=$?
cat "$work/analyze"
check "profopt-analyze: not a usable profopt trace (exit 3, got $status)" [ "$status" -eq 3 ]
check "profopt-analyze says the module did not load" \
	grep -q "could not load libprofopt" "$work/analyze"
check "no temporary notes file is left behind" [ -z "$(ls -A "$work/tmp")" ]
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
