/*
 * steps.h: the step tracker, one of the model's trackers. It owns the training loop: which
 * thread is the training thread, its steps (in the step store), each step's time per
 * category, the loading the training thread did itself, the batches the loader processes
 * made (batches.h) and which step consumed each, with the hand-off that followed a batch
 * being ready, and a ring of the training thread's recent category segments, from which
 * the cause of a GPU gap is read.
 *
 * The model matches spans on every thread; it tells the tracker when the training
 * thread's open category may change (step_tracker_advance, before the change, with the
 * category that held until then), when steps begin and end, and what the loader spans and
 * batch_ready events say. It keeps the counts of unmatched spans itself.
 *
 * Life: init, feed, read the steps at any time through the store, give the store to the
 * analysis at the end, fini. No global state: several trackers live side by side.
 */
#ifndef PO_MODEL_STEPS_H
#define PO_MODEL_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batches.h"
#include "event.h"
#include "result.h"
#include "step_store.h"

#define PO_SEGMENT_RING_CAP 65536 /* training thread's recent category segments */

struct segment {
	int64_t begin_ns;
	int64_t end_ns;
	enum po_category category;
};

struct po_step_tracker {
	/* owned until step_tracker_give; the open step is the last, end_ns INT64_MAX */
	struct po_step_store *steps;
	size_t step_count; /* the store's count */
	bool steps_given;
	bool has_training; /* the first thread to begin a step is the training thread */
	int32_t training_pid;
	int32_t training_tid;
	bool step_open;
	bool step_unmatched; /* a span of the open step's thread did not match */
	int64_t last_change_ns;
	int64_t own_stage_ns[3]; /* training thread's own loading in the open step; -1 */
	int64_t own_batch;
	int64_t own_ready_ns;
	int64_t current_step_number; /* -1 before the first step */
	int64_t latest_queue_depth;  /* -1 until sampled */
	struct segment *segments;    /* owned ring, PO_SEGMENT_RING_CAP */
	size_t segment_count;
	size_t segment_next;
	struct po_batch_tracker batches;
	int64_t steps_other_threads; /* step_begin on threads other than the training thread */
	/* Steps before the first one whose epoch differs from its predecessor's; SIZE_MAX */
	size_t first_epoch_steps;
};

/* What the model measures at a step's end, beyond the training loop. */
struct po_step_sample {
	int64_t host_live_bytes; /* -1: not measured */
	int64_t gpu_live_bytes;
	int64_t rss_bytes;
	int64_t main_rss_bytes;
};

enum po_status step_tracker_init(struct po_step_tracker *tracker) PO_NODISCARD;
void step_tracker_fini(struct po_step_tracker *tracker);
size_t step_tracker_bytes(const struct po_step_tracker *tracker);

bool step_tracker_is_training(const struct po_step_tracker *tracker, int32_t pid, int32_t tid);

/* The open step, to change in place until the next call on the step store; NULL. */
struct po_step *step_tracker_open_step(struct po_step_tracker *tracker);

/* The training thread's time from the last change to time_ns went to category. */
void step_tracker_advance(struct po_step_tracker *tracker, int64_t time_ns,
			  enum po_category category);

/*
 * A step_begin on (pid, tid): the first such thread becomes the training thread. Returns
 * whether the event is the training thread's (else it is only counted).
 */
bool step_tracker_claim(struct po_step_tracker *tracker, int32_t pid, int32_t tid);

/* Opens a step (a STEP_BEGIN event of the training thread; no step may be open). */
enum po_status step_tracker_open(struct po_step_tracker *tracker,
				 const struct po_event *event) PO_NODISCARD;

/*
 * Ends the open step at time_ns (category: the training thread's open category until
 * then): its breakdown, own loading, the sample, the unmatched flag. Returns the step.
 */
const struct po_step *step_tracker_close(struct po_step_tracker *tracker, int64_t time_ns,
					 enum po_category category, int64_t batch_size,
					 const struct po_step_sample *sample);

/* The training thread's loader span (load, preprocess or collate) ended. */
void step_tracker_own_loading(struct po_step_tracker *tracker, enum po_stage stage, bool same_below,
			      int64_t batch, int64_t wall_ns, int64_t end_ns);

/*
 * A loader span of another thread ended: its time goes to the batch's record. *made_by is
 * the pid of a producer whose batch this made (counted once), else -1.
 */
enum po_status step_tracker_loader_span(struct po_step_tracker *tracker, int32_t pid,
					enum po_stage stage, bool same_below, int64_t batch,
					int64_t wall_ns, int64_t end_ns,
					int32_t *made_by) PO_NODISCARD;

/* A batch_ready event; *made_by as for step_tracker_loader_span. */
enum po_status step_tracker_batch_ready(struct po_step_tracker *tracker,
					const struct po_event *event,
					int32_t *made_by) PO_NODISCARD;

/* The training thread's data wait [begin_ns, end_ns) ended with batch (or -1). */
void step_tracker_consume(struct po_step_tracker *tracker, int64_t batch, int64_t begin_ns,
			  int64_t end_ns);

/* The category the training thread spent most of [begin, end) in, from the segment ring. */
enum po_category step_tracker_cause(const struct po_step_tracker *tracker, int64_t begin_ns,
				    int64_t end_ns, int64_t *cause_ns);

/*
 * Drops the open step: one open when the stream ended (cut off by the process's end), or
 * one that ended with batch size 0 (it consumed no batch: the fetch at the end of the data,
 * or the batch fetched before the loop was left).
 */
void step_tracker_drop_open(struct po_step_tracker *tracker);

#endif /* PO_MODEL_STEPS_H */
