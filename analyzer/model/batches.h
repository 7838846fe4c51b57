/*
 * batches.h: the batch tracker, one of the model's trackers. It keeps the batches that
 * the data-loader processes made and the training thread has not consumed yet: who made
 * each, its time in each loader stage and when it was ready. A bounded ring
 * (PO_BATCH_CAP): when it is full, the oldest batch is forgotten.
 *
 * Life: init, then find / get / finish / drop as the model reads loader spans,
 * batch_ready events and data waits; fini. No global state.
 */
#ifndef PO_MODEL_BATCHES_H
#define PO_MODEL_BATCHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "map.h"

#define PO_BATCH_CAP 4096 /* batches produced but not yet consumed */

/* A batch produced off the training thread, waiting for the data wait that consumes it. */
struct batch_record {
	int64_t batch; /* -1: free slot */
	int32_t producer_pid;
	int64_t stage_ns[3];   /* load, preprocess, collate; -1 */
	int64_t ready_ns;      /* -1 */
	bool ready_from_event; /* ready_ns came from batch_ready */
	bool finished;	       /* counted in its producer's batches */
};

struct po_batch_tracker {
	struct batch_record *ring; /* owned, PO_BATCH_CAP */
	size_t next;		   /* the slot the next new batch takes */
	struct po_map index;	   /* batch number -> slot */
};

enum po_status batch_tracker_init(struct po_batch_tracker *tracker) PO_NODISCARD;
void batch_tracker_fini(struct po_batch_tracker *tracker);
size_t batch_tracker_bytes(const struct po_batch_tracker *tracker);

/* The batch's record, or NULL when it is not kept. */
struct batch_record *batch_tracker_find(struct po_batch_tracker *tracker, int64_t batch);
/* The batch's record, created in the oldest slot (forgetting it) when absent; NULL when out
 * of memory. */
struct batch_record *batch_tracker_get(struct po_batch_tracker *tracker, int64_t batch,
				       int32_t producer_pid);
/* Marks the batch made; true the first time, when its producer's count should grow. */
bool batch_record_made(struct batch_record *record);
/* Forgets the batch (it was consumed). */
void batch_tracker_drop(struct po_batch_tracker *tracker, struct batch_record *record);

#endif /* PO_MODEL_BATCHES_H */
