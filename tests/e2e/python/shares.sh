#!/usr/bin/env bash
# shares.sh BIN 3.X: records shares.py (a pure-Python loop of designed CPU costs that
# measures them itself) on CPython 3.X under profopt-record --stacks and checks the analysis
# against that truth, as e2e.stacks.c_truth does for C: libprofopt's reader sampled every
# thread (stacks_threads "all"); the loading functions' total shares of the load stage
# within 5 points, each named with its file and first line; forward and the second
# thread's preprocess spans each in their own function. When the loop shared its core and
# the samples came from POSIX CPU timers, the shares are reported, not judged (as in
# e2e.stacks.c_truth; both through tests/lib/designed_shares.py). Exits 77 (skip) where
# CPython 3.X is not installed.
set -eu
bin=$1 version=$2
here=$(cd "$(dirname "$0")" && pwd)
status=0
python=$("$here/../../lib/python-version.sh" "$version" -c 'import sys; print(sys.executable)') ||
	status=$?
if [[ $status -ne 0 ]]; then
	echo "$python"
	exit "$status"
fi
work=$(mktemp -d /tmp/profopt-shares.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$bin/profopt-record" --stacks=1000 -o "$work/trace" -- "$python" "$here/shares.py" 100 \
	"$work/truth.json" >/dev/null
"$bin/profopt-analyze" "$work/trace" -o "$work/report" >"$work/stdout"

/usr/bin/python3 - "$work" "$here/shares.py" "$here/../../lib" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
from designed_shares import Designed
run = Designed(sys.argv[1], sys.argv[2], r"^def (\w+)\(seed\):")
config, python = run.config, run.truth["python"]
if config.get("stacks_threads") != "all":
    run.failures.append(f"CPython {python}: the samples are not libprofopt's reader's "
                        f"(stacks_threads {config.get('stacks_threads')!r}, stacks_timer "
                        f"{config.get('stacks_timer')!r})")
else:
    print(f"ok CPython {python}: libprofopt's reader sampled every thread "
          f"({config.get('stacks_timer')})")
# total shares: a sample in the CPU clock's system call has libc as its innermost frame
run.check("total")
if run.failures:
    print(open(f"{sys.argv[1]}/stdout").read())
    print("\n".join(run.failures))
    sys.exit(1)
PY
