/*
 * memory.h: the memory tracker, one of the model's trackers. It owns the allocations and
 * frees (profopt mem_alloc/mem_free and lttng_ust_libc events), their sites, the mapped
 * objects that place libc sites (binmap.h), and the run's memory peaks; the model feeds it
 * what it knows beyond the event (the allocating thread's process and open stage, the
 * current step, the processes' RSS and GPU counter sums).
 *
 * Life: init, consume events, read the live totals at any time, build its part of a result
 * (memory_tracker_build, which changes nothing in the tracker, so it can be asked again),
 * fini. No global state: several trackers live side by side.
 */
#ifndef PO_MODEL_MEMORY_H
#define PO_MODEL_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binmap.h"
#include "event.h"
#include "map.h"
#include "model.h"
#include "result.h"
#include "saturate.h"

struct alloc_totals {
	int64_t live_bytes;
	int64_t peak_bytes;
};

/* One allocation larger than this (1 PiB) is a damaged size, not a program's. */
#define PO_ALLOC_LIMIT_BYTES (UINT64_C(1) << 50)

struct po_memory_tracker {
	struct po_memory out;	   /* the result's memory section, peaks filled at build */
	struct po_map live;	   /* (address, process/device/source) -> struct live_alloc */
	struct po_map site_index;  /* site key -> index into sites */
	struct po_mem_site *sites; /* owned */
	size_t site_count;
	size_t site_capacity;
	size_t max_sites;	   /* distinct sites before new ones fold */
	const char *fold_label;	   /* weak: "(other sites)", interned by the model */
	struct po_binmap *binmap;  /* owned; NULL until an object event */
	struct po_strtab *strings; /* weak: the model's, for the binmap's paths */
	bool has_profopt_host;
	bool has_profopt_gpu;
	struct alloc_totals host_profopt;
	struct alloc_totals host_libc;
	struct alloc_totals gpu_events;
	int64_t gpu_counter_sum_bytes; /* the processes' latest GPU_MEM_USED, summed; -1 */
	int64_t gpu_counter_peak_bytes;
	int64_t unmatched_profopt_frees; /* profopt mem_free without its mem_alloc */
	/* allocations claimed larger than PO_ALLOC_LIMIT_BYTES: kept, with no size */
	int64_t implausible_sizes;
};

/* What the model knows of an allocation beyond its event. */
struct po_alloc_context {
	int32_t pid;
	int stage;	     /* innermost stage open on the allocating thread; -1 */
	int64_t step_number; /* the training thread's current step; -1 */
	const char *label;   /* profopt events: the label, interned by the model; else NULL */
};

void memory_tracker_init(struct po_memory_tracker *tracker, size_t max_sites,
			 const char *fold_label, struct po_strtab *strings);
void memory_tracker_fini(struct po_memory_tracker *tracker);
size_t memory_tracker_bytes(const struct po_memory_tracker *tracker);

/* MEM_*, LIBC_*, BIN_*, LIB_* and DL_* events. Fails only on allocation failure. */
enum po_status memory_tracker_consume(struct po_memory_tracker *tracker,
				      const struct po_event *event,
				      const struct po_alloc_context *context) PO_NODISCARD;

/* The processes' RSS sum changed to sum_bytes (a sample): the host RSS peak follows it. */
void memory_tracker_rss_sum(struct po_memory_tracker *tracker, int64_t sum_bytes);
/* A process's GPU_MEM_USED went from old_bytes (-1: none) to bytes. */
void memory_tracker_gpu_sample(struct po_memory_tracker *tracker, int64_t bytes, int64_t old_bytes);
/* A silent process's GPU memory leaves (negative) or rejoins the sum; not a sample. */
void memory_tracker_gpu_move(struct po_memory_tracker *tracker, int64_t bytes);

/* Live bytes now, by the best source there is; -1 when nothing measures them. */
int64_t memory_tracker_host_live(const struct po_memory_tracker *tracker);
int64_t memory_tracker_gpu_live(const struct po_memory_tracker *tracker);

/*
 * Fills analysis->memory and analysis->mem_sites (sorted, each with its role from
 * role_of, and the located ones named by namer.name_call when it is set) from what was
 * consumed so far; the tracker is not changed.
 */
enum po_status memory_tracker_build(const struct po_memory_tracker *tracker,
				    struct po_analysis *analysis,
				    enum po_role (*role_of)(const struct po_analysis *, int32_t),
				    struct po_native_namer namer) PO_NODISCARD;

#endif /* PO_MODEL_MEMORY_H */
