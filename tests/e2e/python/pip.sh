#!/usr/bin/env bash
# pip.sh BIN_DIR SOURCE_DIR LIBPROFOPT: the Python module as a package. pip installs
# tracepoints/python into a fresh virtual environment (offline: the venv's own setuptools),
# the installed copy is the one imported, it finds libprofopt through PROFOPT_LIBRARY,
# importing it without a library works and says why once, and a program of the venv's
# python records with profopt-record (run next to a session daemon of the test's own).
set -u
bin=$1 src=$2 lib=$3
work=$(mktemp -d /tmp/profopt-pip.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() {
	echo "FAIL $*"
	exit 1
}

# --system-site-packages: Debian's setuptools and wheel build it offline (and its torch)
/usr/bin/python3 -m venv --system-site-packages "$work/venv" || fail "python3 -m venv (python3-venv)"
cp -r "$src/tracepoints/python" "$work/package" # pip builds in place: not in the checkout
"$work/venv/bin/pip" install -q --no-build-isolation --no-index --no-deps "$work/package" \
	>"$work/pip.log" 2>&1 || fail "pip install: $(tail -n 5 "$work/pip.log")"
py=$work/venv/bin/python
cd "$work" || exit 1 # not the checkout: its tracepoints/python must not be on sys.path

where=$(env -u PYTHONPATH "$py" -c 'import profopt; print(profopt.__file__)') ||
	fail "the installed module does not import"
case $where in
"$work/venv/"*) echo "ok   imported from the venv: $where" ;;
*) fail "imported from $where, not the venv" ;;
esac

found=$(env -u PYTHONPATH PROFOPT_LIBRARY="$lib" "$py" -c \
	'import profopt; print(profopt.library_path())') || fail "library_path()"
[ "$found" = "$lib" ] || fail "PROFOPT_LIBRARY=$lib, the module loaded $found"
echo "ok   PROFOPT_LIBRARY is the library it loads"

env -u PYTHONPATH PROFOPT_LIBRARY=/nonexistent/libprofopt.so.0 "$py" -c '
import profopt
with profopt.run():
    for i in range(3):
        with profopt.step(i):
            pass
print("ran")' >"$work/nolib.out" 2>"$work/nolib.err" || fail "a program without the library failed"
grep -qx ran "$work/nolib.out" || fail "the program did not run to its end"
[ "$(grep -c 'profopt' "$work/nolib.err")" -eq 1 ] ||
	fail "want one line saying why it cannot trace, got: $(cat "$work/nolib.err")"
echo "ok   without a library: the program runs, one line says why"

cat >"$work/train.py" <<'PY'
import time
import profopt

with profopt.run(config={"num_workers": "0"}):
    for i in range(60):
        with profopt.step(i):
            with profopt.span("forward"):
                time.sleep(0.002)
PY
env -u PYTHONPATH PROFOPT_LIBRARY="$lib" "$bin/profopt-record" -o "$work/trace" -- \
	"$py" "$work/train.py" >"$work/record.log" 2>&1 || fail "recording: $(tail -n 5 "$work/record.log")"
"$bin/profopt-analyze" --json-only -o "$work/report" "$work/trace" >/dev/null 2>&1 ||
	fail "the venv program's trace does not analyse"
steps=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"]["count"])' \
	"$work/report/summary.json")
[ "$steps" = 60 ] || fail "$steps steps recorded, want 60"
echo "ok   the venv's python recorded 60 steps"
