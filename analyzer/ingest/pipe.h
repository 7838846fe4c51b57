/*
 * pipe.h: a queue of typed-event batches from one decoding thread (a lane: one babeltrace2
 * graph over some of the trace's streams) to the thread that merges the lanes in time
 * order and runs the event callback. Strings of an event are copied into its batch; each
 * event carries the key the lanes are merged by. Private to analyzer/ingest.
 */
#ifndef PO_INGEST_PIPE_H
#define PO_INGEST_PIPE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest.h"

#define PO_PIPE_BATCHES 4	  /* batches in flight per lane: bounds the memory */
#define PO_PIPE_BATCH_EVENTS 4096 /* events per batch */
#define PO_PIPE_TEXT_BYTES 65536  /* string bytes per batch (more for one huge event) */

struct po_pipe_batch {
	struct po_event *events; /* owned: PO_PIPE_BATCH_EVENTS */
	int64_t *keys;		 /* owned: the merge key of each event */
	size_t count;
	char *text; /* owned: the events' strings point here */
	size_t text_used;
	size_t text_capacity;
};

struct po_pipe {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct po_pipe_batch batches[PO_PIPE_BATCHES]; /* a ring */
	size_t head;				       /* the batch the consumer takes next */
	size_t queued;	/* batches published and not yet released (under lock) */
	size_t filling; /* the batch the producer fills; not among the queued ones */
	bool done;	/* the producer has published its last batch (under lock) */
	bool cancelled; /* the consumer wants no more events (under lock) */
};

/* Allocates the batches; false when out of memory. */
bool po_pipe_init(struct po_pipe *pipe);
void po_pipe_fini(struct po_pipe *pipe);

/* Producer: queues a copy of the event; false when out of memory (*nomem) or cancelled. */
bool po_pipe_push(struct po_pipe *pipe, const struct po_event *event, int64_t key, bool *nomem);

/* Producer: publishes the partial batch and marks the end of the lane's events. */
void po_pipe_finish(struct po_pipe *pipe);

/* Producer: whether the consumer cancelled. */
bool po_pipe_cancelled(struct po_pipe *pipe);

/*
 * Consumer: the oldest published batch, waiting for one; NULL once the producer is done
 * and every batch was taken. The batch stays the consumer's until po_pipe_release().
 */
struct po_pipe_batch *po_pipe_take(struct po_pipe *pipe);

/* Consumer: hands the batch from po_pipe_take() back to the producer. */
void po_pipe_release(struct po_pipe *pipe);

/* Consumer: the producer's next push fails and a producer waiting for room wakes up. */
void po_pipe_cancel(struct po_pipe *pipe);

#endif /* PO_INGEST_PIPE_H */
