#!/usr/bin/env bash
# probes.sh CHECK_INCLUDES ROOT: each forbidden include must be refused by the include check
# (check_includes.py --probe FILE HEADER), with the line naming it; the tree itself passes.
set -u
check=$1 root=$2
failed=0
probe() { # FILE HEADER WHY
	local out
	if out=$(/usr/bin/python3 "$check" "$root" --probe "$1" "$2"); then
		echo "FAIL $3: $1 may include $2"
		failed=$((failed + 1))
	elif ! grep -q "^$1: includes " <<<"$out"; then
		echo "FAIL $3: refused without naming $1: $out"
		failed=$((failed + 1))
	else
		echo "ok   $3: $out"
	fi
}
probe render/report/html.c model.h "a renderer calls the model's API (po_model_consume)"
probe render/report/html.c ../../analyzer/model/model.h "the same through a relative path"
probe render/json/summary_json.c model/model_internal.h "a renderer reads the model's internals"
probe tracepoints/record/main.c ../../analyzer/model/model_internal.h \
	"the recorder reads the model's internals"
probe analyzer/model/model.c ../detect/detect.h "the model calls the detectors"
probe render/json/summary_json.c detect_internal.h "a renderer reads the detectors' internals"
if /usr/bin/python3 "$check" "$root" >/dev/null; then
	echo "ok   the tree keeps the boundaries"
else
	echo "FAIL the tree crosses the boundaries"
	failed=$((failed + 1))
fi
exit $((failed > 0))
