/*
 * detail.h: the timeline tracker, one of the model's trackers. It keeps the timelines of
 * representative steps. Completed spans and counter samples of every process go into
 * bounded rings; a step's detail is decided PO_FINALIZE_LAG steps after its end, when the
 * worker spans and GPU records that overlap it have arrived, and copied out of the rings
 * if the step is (so far) one of the slowest, next to one, a median candidate (a small
 * uniform reservoir), holds one of the longest GPU gaps, or lies in the requested range.
 * Details whose reason went away are freed at once.
 *
 * It reads the steps from the step tracker it is given (weak). Life: init, push spans and
 * counter samples, tell it when a step ended and where a GPU gap was, finish (once: the
 * kept details go to the analysis), fini. No global state.
 */
#ifndef PO_MODEL_DETAIL_H
#define PO_MODEL_DETAIL_H

#include <stddef.h>
#include <stdint.h>

#include "result.h"
#include "steps.h"

#define PO_SPAN_RING_CAP 65536	 /* recently completed spans, for the timelines */
#define PO_COUNTER_RING_CAP 8192 /* recent counter samples, for the timelines */
#define PO_REQUESTED_CAP 256	 /* --timeline-steps details kept */
#define PO_RESERVOIR_CAP 16	 /* median candidates */
#define PO_STALL_KEPT 3		 /* steps kept for the longest GPU gaps */
#define PO_FINALIZE_LAG 2	 /* steps after its end before a step's detail is decided */
#define PO_PRODUCERS_CAP 256	 /* producers whose first batch was seen */

struct detail_state {
	size_t step_index;
	uint32_t reasons;
	struct po_step_detail out; /* spans and counters owned */
};

/* Which details to keep (from struct po_model_config). */
struct po_detail_config {
	size_t detail_span_cap;	     /* spans kept per detailed step */
	size_t slowest_steps_kept;   /* slowest steps whose timelines are kept */
	int64_t timeline_first_step; /* --timeline-steps A:B, step numbers; -1: none */
	int64_t timeline_last_step;
};

struct po_detail_tracker {
	struct po_detail_config config;
	const struct po_step_tracker *loop; /* weak: the steps */
	struct po_span *span_ring;	    /* owned, PO_SPAN_RING_CAP */
	size_t span_ring_count;
	size_t span_ring_next;
	struct po_counter_sample *counter_ring; /* owned, PO_COUNTER_RING_CAP */
	size_t counter_ring_count;
	size_t counter_ring_next;
	size_t finalized_steps; /* steps whose detail was decided */
	size_t *slowest;	/* owned; step indexes, config.slowest_steps_kept */
	int64_t *slowest_ns;	/* owned; their durations, so that no old step is read back */
	size_t slowest_count;
	/* Producer pids whose first batch a step has consumed: later batches are steady. */
	int32_t producers_seen[PO_PRODUCERS_CAP];
	size_t producer_count;
	size_t reservoir[PO_RESERVOIR_CAP];
	size_t reservoir_count;
	uint64_t reservoir_seen;
	uint64_t random_state;
	size_t stall_steps[PO_STALL_KEPT]; /* steps of the longest gaps so far */
	int64_t stall_gap_ns[PO_STALL_KEPT];
	size_t stall_count;
	size_t requested_count;
	struct detail_state *details; /* owned */
	size_t detail_count;
	size_t detail_capacity;
};

enum po_status detail_tracker_init(struct po_detail_tracker *tracker,
				   const struct po_detail_config *config,
				   const struct po_step_tracker *loop) PO_NODISCARD;
void detail_tracker_fini(struct po_detail_tracker *tracker);
size_t detail_tracker_bytes(const struct po_detail_tracker *tracker);

void detail_tracker_push_span(struct po_detail_tracker *tracker, const struct po_span *span);
void detail_tracker_push_counter(struct po_detail_tracker *tracker,
				 const struct po_counter_sample *sample);
/* A step ended: steps PO_FINALIZE_LAG behind it are decided. */
enum po_status detail_tracker_step_ended(struct po_detail_tracker *tracker) PO_NODISCARD;
/* Step index holds a GPU gap of gap_ns. */
enum po_status detail_tracker_gap_found(struct po_detail_tracker *tracker, size_t index,
					int64_t gap_ns) PO_NODISCARD;
/*
 * Decides the remaining steps and gives the kept details to analysis->details (its step
 * statistics and gaps must be built). Once.
 */
enum po_status detail_tracker_build(struct po_detail_tracker *tracker,
				    struct po_analysis *analysis) PO_NODISCARD;

#endif /* PO_MODEL_DETAIL_H */
