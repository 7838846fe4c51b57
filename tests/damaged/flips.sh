#!/usr/bin/env bash
# flips.sh BIN_DIR [FIRST_SEED COUNT [TRACE...]]: seeded single-byte flips (flips.py) of
# real recordings through profopt-analyze: a changed result must carry a warning. By
# default the committed golden traces with memory events, GPU work and restarted workers,
# so that a seed gives the same flip on every machine.
set -u
bin=$1 first=${2:-1} count=${3:-40}
shift $(($# < 3 ? $# : 3))
here=$(cd "$(dirname "$0")" && pwd)
traces=("$@")
[ ${#traces[@]} -gt 0 ] ||
	traces=("$here/../data/traces/leak-main" "$here/../data/traces/respawning-workers")
work=$(mktemp -d /tmp/profopt-flips.XXXXXX)
trap 'rm -rf "$work"' EXIT
status=0
for trace in "${traces[@]}"; do
	echo "$(basename "$trace"):"
	/usr/bin/python3 "$here/flips.py" "$bin/profopt-analyze" "$trace" "$work" "$first" \
		"$count" || status=1
done
exit $status
