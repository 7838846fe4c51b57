#!/usr/bin/env bash
# many_processes.sh [BIN_DIR] [COUNTS...]: analysis time and peak memory of a trace with
# many process directories (per-process buffers: one directory per process, as a long run
# of non-persistent DataLoader workers recorded with --buffers pid gives). Records one
# small worker process with profopt-record next to a private session daemon, copies its
# directory COUNT times with a fresh trace UUID each (copies of one UUID would be left out
# as duplicates), and times profopt-analyze --json-only on each trace. The open-file limit
# is raised as far as allowed: the decoder keeps every stream open. COUNTS default to
# 100 300 1000 3000 10000. BIN_DIR defaults to build/bin.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/bin}
shift $(($# > 0 ? 1 : 0))
counts=${*:-100 300 1000 3000 10000}
[ -x "$bin/profopt-record" ] || { echo "many_processes: $bin/profopt-record not found" >&2; exit 1; }
work=$(mktemp -d /tmp/profopt-many.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$root/tests/lib/with-sessiond.sh" "$bin/profopt-record" --buffers pid -o "$work/one" -- \
	"$bin/profopt-sim" --workers 1 --steps 20 --load-ms 1 --forward-ms 1 >/dev/null 2>&1
worker=$(ls -S "$work"/one/ust/pid | tail -n 1)
# The decoder keeps every stream open: as many files as possible (root may raise the hard
# limit too).
ulimit -Hn 65536 2>/dev/null || true
ulimit -n "$(ulimit -Hn)"
echo "process directories, seconds, peak MiB (ulimit -n $(ulimit -n))"
for count in $counts; do
	/usr/bin/python3 - "$work/one/ust/pid/$worker" "$work/trace" "$count" <<'PY'
import os, re, shutil, sys, uuid
source, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.rmtree(out, ignore_errors=True)
os.makedirs(os.path.join(out, "ust", "pid"))
metadata = open(os.path.join(source, "metadata"), "rb").read()
old = uuid.UUID(re.search(rb'uuid = "([0-9a-f-]{36})"', metadata).group(1).decode())
streams = {name: open(os.path.join(source, name), "rb").read()
           for name in os.listdir(source) if os.path.isfile(os.path.join(source, name))
           and name != "metadata"}
for i in range(count):
    new = uuid.uuid4()
    target = os.path.join(out, "ust", "pid", "worker-%d-20261123-000000" % (100000 + i))
    shutil.copytree(os.path.join(source, "index"), os.path.join(target, "index"))
    with open(os.path.join(target, "metadata"), "wb") as f:
        f.write(metadata.replace(str(old).encode(), str(new).encode())
                .replace(old.bytes, new.bytes))
    for name, data in streams.items():
        with open(os.path.join(target, name), "wb") as f:
            f.write(data.replace(old.bytes, new.bytes))
PY
	rm -rf "$work/report"
	if /usr/bin/time -f "%e %M" -o "$work/time" "$bin/profopt-analyze" --json-only \
		-o "$work/report" "$work/trace" >/dev/null 2>"$work/err"; then
		read -r seconds kib <"$work/time"
		printf '%6d  %7.2f s  %6d MiB\n' "$count" "$seconds" $((kib / 1024))
	else
		printf '%6d  failed: %s\n' "$count" "$(grep -v '^Command' "$work/err" | head -n 1)"
	fi
done
