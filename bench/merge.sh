#!/usr/bin/env bash
# merge.sh [RANKS...]: the time and peak memory of profopt-analyze --merge over partial
# summaries of 64, 256 and 1,024 ranks (default), one rank per host, each partial holding
# the most sampled steps a partial keeps (PO_PARTIAL_STEPS, 1,024), as
# tests/lib/synth_partials.py designs them (a straggler, clocks apart). Prints one line
# per size: partials, their size on disk, wall time, peak resident memory. The figures go
# in README ("Many hosts").
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${PROFOPT_BIN:-$root/build/bin}
work=$(mktemp -d /tmp/profopt-merge-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ $# -gt 0 ] || set -- 64 256 1024
for ranks in "$@"; do
	/usr/bin/python3 "$root/tests/lib/synth_partials.py" "$work/p$ranks" "$ranks" --steps 1024
	size=$(du -sm "$work/p$ranks" | cut -f1)
	/usr/bin/time -f "%e %M" -o "$work/time" "$bin/profopt-analyze" -q --merge \
		-o "$work/r$ranks" "$work/p$ranks"/*.json
	read -r seconds kib <"$work/time"
	straggler=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["distributed"]["straggler"]["rank"])' "$work/r$ranks/summary.json")
	printf '%5d ranks: %4d partials, %4d MB, merged in %6.2f s, peak %5d MiB (straggler rank %s)\n' \
		"$ranks" "$(ls "$work/p$ranks" | wc -l)" "$size" "$seconds" "$((kib / 1024))" "$straggler"
	rm -rf "$work/p$ranks" "$work/r$ranks"
done
