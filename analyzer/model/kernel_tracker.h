/*
 * kernel_tracker.h: the kernels of a run, one of the model's trackers. It classifies each
 * distinct record name once (kernels.h) and keeps, per kernel name, how often it ran, for
 * how long, and its latest launch shape, for the records that began in a step; its build
 * gives the result's list of the longest kernels. The steps' own GPU work by class is the
 * model's (model_gpu.c), which asks this tracker for each record's class.
 *
 * Life: init, kind / add per record, build (changes nothing), fini. No global state.
 */
#ifndef PO_MODEL_KERNEL_TRACKER_H
#define PO_MODEL_KERNEL_TRACKER_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "kernels.h"
#include "map.h"
#include "result.h"

struct kernel_stat {
	const char *name; /* weak: interned by the model */
	struct po_kernel_kind kind;
	int64_t count;
	int64_t total_ns;
	int64_t grid_blocks;
	int64_t block_threads;
};

#define PO_KERNEL_KINDS_CACHED 8192 /* distinct names whose class is kept */

struct po_kernel_tracker {
	struct po_map kinds;	   /* (name hash, length) -> class | precision << 8, + 1 */
	struct po_map by_name;	   /* interned name -> index into stats */
	struct kernel_stat *stats; /* owned */
	size_t stat_count;
	size_t stat_capacity;
};

void kernel_tracker_init(struct po_kernel_tracker *tracker);
void kernel_tracker_fini(struct po_kernel_tracker *tracker);
size_t kernel_tracker_bytes(const struct po_kernel_tracker *tracker);

/* The class and precision of a PO_EV_GPU_ACTIVITY record, classified once per name. */
enum po_status kernel_tracker_kind(struct po_kernel_tracker *tracker, const struct po_event *event,
				   struct po_kernel_kind *kind) PO_NODISCARD;

/* A kernel record that began in a step, under its interned name (names past the model's
 * cap share one folded name). */
enum po_status kernel_tracker_consume(struct po_kernel_tracker *tracker, const char *name,
				      struct po_kernel_kind kind,
				      const struct po_event *event) PO_NODISCARD;

/* The PO_TOP_KERNELS longest kernels into analysis->kernels, with their short names. */
enum po_status kernel_tracker_build(const struct po_kernel_tracker *tracker,
				    struct po_analysis *analysis) PO_NODISCARD;

#endif /* PO_MODEL_KERNEL_TRACKER_H */
