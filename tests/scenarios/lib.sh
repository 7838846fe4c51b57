# lib.sh: recording and analysing profopt-sim for the scenario tests; sourced with $bin set.

# record_sim TRACE_DIR [RECORD_OPTIONS...] -- SIM_OPTIONS...: records the simulator. A
# recording that does not end within its time limit is tried once more, and said so.
# When the array "launcher" is set (e.g. taskset -c 0,1), the recording runs under it.
record_sim() {
	local trace=$1 attempt rc
	shift
	local record_options=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		record_options+=("$1")
		shift
	done
	shift
	for attempt in 1 2; do
		rm -rf "$trace"
		timeout -s KILL 240 ${launcher[@]+"${launcher[@]}"} "$bin/profopt-record" "${record_options[@]+"${record_options[@]}"}" \
			-o "$trace" -- "$bin/profopt-sim" "$@" >"$trace.log" 2>&1
		rc=$?
		[ $rc -eq 0 ] && return 0
		echo "profopt-record failed (attempt $attempt, status $rc):" >&2
		tail -n 20 "$trace.log" >&2
		[ $rc -eq 137 ] || return 1
	done
	return 1
}

# analyze TRACE_DIR OUT_DIR
analyze() {
	if ! timeout 300 "$bin/profopt-analyze" -q "$1" -o "$2" >"$2.log" 2>&1; then
		echo "profopt-analyze failed:" >&2
		cat "$2.log" >&2
		return 1
	fi
}
