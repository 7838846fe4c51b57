/*
 * labels.h: the label tracker, one of the model's trackers. It owns the statistics of the
 * labels that stage spans carry (a file name, a transform), per (process, stage, label):
 * count, wall time and CPU time. A process keeps at most max_labels distinct labels per
 * stage; later ones fold into "(other labels)", so a loader that labels every sample with
 * its own name cannot grow the model.
 *
 * Life: init, resolve a span's label when it begins and add its times when it ends, build
 * the result's per-role statistics at any moment (label_tracker_build changes nothing in
 * the tracker; once per analysis), fini. No global state: several trackers live side by side.
 */
#ifndef PO_MODEL_LABELS_H
#define PO_MODEL_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "../common/arena.h"
#include "event.h"
#include "map.h"
#include "result.h"

struct label_entry {
	int32_t pid;
	enum po_stage stage;
	const char *label; /* weak: interned, or the fold label */
	int64_t count;
	int64_t total_ns;
	int64_t cpu_ns; /* -1 while unknown */
};

struct po_label_tracker {
	struct label_entry *entries; /* owned */
	size_t count;
	size_t capacity;
	struct po_map index;	   /* (pid, stage, folded, label hash) -> index into entries */
	struct po_map distinct;	   /* (pid, stage) -> labels kept, not folded */
	size_t max_labels;	   /* per (process, stage), and per (role, stage) in the result */
	const char *fold_label;	   /* weak: "(other labels)", interned by the model */
	struct po_strtab *strings; /* weak: the model's */
};

void label_tracker_init(struct po_label_tracker *tracker, size_t max_labels, const char *fold_label,
			struct po_strtab *strings);
void label_tracker_fini(struct po_label_tracker *tracker);
size_t label_tracker_bytes(const struct po_label_tracker *tracker);

/* The entry of (pid, stage, label), created (or folded) on first use, in *index. */
enum po_status label_tracker_resolve(struct po_label_tracker *tracker, int32_t pid,
				     enum po_stage stage, struct po_str label,
				     size_t *index) PO_NODISCARD;

/* The entry's label text: interned, or the fold label. */
const char *label_tracker_text(const struct po_label_tracker *tracker, size_t index);

/* A span of the entry ended after wall_ns, cpu_ns of it on CPU (-1: not measured). */
void label_tracker_consume(struct po_label_tracker *tracker, size_t index, int64_t wall_ns,
			   int64_t cpu_ns);

/*
 * Fills analysis->label_stats: the entries merged per (role, stage, label) with each
 * pid's role from role_of, past max_labels per (role, stage) folded, largest total first.
 */
enum po_status
label_tracker_build(const struct po_label_tracker *tracker, struct po_analysis *analysis,
		    enum po_role (*role_of)(const struct po_analysis *, int32_t)) PO_NODISCARD;

#endif /* PO_MODEL_LABELS_H */
