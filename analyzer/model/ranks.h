/*
 * ranks.h: the rank tracker: which rank each process belongs to, each rank's own model of
 * its training loop, and the collectives each rank entered and left.
 *
 * A process belongs to the rank its profopt:rank event names; a process forked by one
 * (its announcement or worker_begin names the parent) belongs to the same rank. Each rank
 * gets a model of its own (a struct po_model fed only its processes' events), so that its
 * training loop, loader workers and batches are rebuilt apart from the other ranks'. The
 * lowest rank is the primary one: the model that owns this tracker analyses it as a
 * single-process run, and the other ranks' events go to their own models only. Processes
 * of no rank go to the owning model alone, as before ranks existed.
 *
 * Memory: one model per rank, and one record per collective and rank (like the step
 * store's one record per step).
 */
#ifndef PO_RANKS_H
#define PO_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "event.h"
#include "map.h"

struct po_model;
struct po_model_config;
struct po_analysis;
struct po_strtab;
struct po_process_tracker;

#define PO_RANK_CAP 4096 /* ranks with a model of their own; more are counted only */

struct rank_lane {
	int32_t rank;
	int32_t local_rank;
	int32_t world_size;
	int32_t pid;		  /* the process that recorded the rank event */
	int32_t recording;	  /* its clock: the recording its pid says (event.h) */
	const char *host;	  /* weak: interned in the owning model's strings; NULL */
	struct po_model *model;	  /* owned: this rank's own model */
	int64_t open_collectives; /* begun and not yet ended */
};

/* A collective as one rank saw it. */
struct rank_collective {
	uint32_t lane;
	int32_t group;
	int64_t seq;
	int64_t step; /* the rank's open step number at the begin; -1 outside steps */
	int64_t begin_ns;
	int64_t end_ns; /* -1 until it ends */
};

struct po_rank_tracker {
	const struct po_model_config *config;	/* weak: the owning model's */
	struct po_process_tracker *owner_procs; /* weak: the owning model's processes */
	struct po_strtab *strings;		/* weak: the owning model's */
	struct po_map pids;			/* pid -> lane index + 1 */
	struct po_map open;			/* (lane, group, seq) -> record index + 1 */
	struct rank_lane *lanes;		/* owned */
	size_t lane_count;
	size_t lane_capacity;
	struct rank_collective *records; /* owned, in the order they began */
	size_t record_count;
	size_t record_capacity;
	int32_t primary_rank; /* -1 before the first rank event */
	int64_t ranks_not_kept;
	int64_t unpaired_ends; /* collective ends with no begin */
	/*
	 * The CPU time the processes of ranks other than the primary one used, as their models
	 * summed it (each model's process tracker's traced_cpu_ns): the recorded program's, so
	 * the owning model counts it as such where it measures what other programs used.
	 */
	int64_t other_ranks_cpu_ns;
};

void rank_tracker_init(struct po_rank_tracker *tracker, const struct po_model_config *config,
		       struct po_strtab *strings, struct po_process_tracker *owner_procs);
void rank_tracker_fini(struct po_rank_tracker *tracker);
size_t rank_tracker_bytes(const struct po_rank_tracker *tracker);

/* Whether any rank event was seen: without one, the tracker changes nothing. */
static inline bool rank_tracker_active(const struct po_rank_tracker *tracker)
{
	return tracker->lane_count > 0;
}

/*
 * Takes an event of an admitted process: gives it to its rank's model, notes the ranks and
 * the collectives, and says whether the owning model analyses it too (*to_owner: the
 * primary rank's processes and those of no rank), and whether this is the first event of
 * its process that the owning model does not get (*leaves_owner: what the process did
 * before, the owner keeps, but it is no longer one of its live processes).
 * owner_has_steps: the owning model has begun a step, after which the primary rank no
 * longer changes.
 */
enum po_status rank_tracker_consume(struct po_rank_tracker *tracker, const struct po_event *event,
				    bool owner_has_steps, bool *to_owner,
				    bool *leaves_owner) PO_NODISCARD;

/*
 * The model of the rank pid belongs to (weak: owned by the tracker), or NULL for a process
 * of no rank; *rank is its rank (-1 when none). *primary: whether that is the rank the
 * owning model analyses.
 */
struct po_model *rank_tracker_borrow_model(const struct po_rank_tracker *tracker, int32_t pid,
					   int32_t *rank, bool *primary);

/*
 * Finishes every rank's model and sets analysis->distributed (in the analysis arena): the
 * ranks' summaries and the steps matched across ranks. Leaves it NULL without ranks.
 */
enum po_status rank_tracker_build(struct po_rank_tracker *tracker,
				  struct po_analysis *analysis) PO_NODISCARD;

#endif /* PO_RANKS_H */
