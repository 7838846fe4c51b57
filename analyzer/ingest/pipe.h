/*
 * pipe.h: hands typed events from the thread that runs the babeltrace2 graph to the event
 * callback on a second thread, in order and in batches, so that decoding and the model use
 * two cores. Strings of an event are copied into its batch. Private to analyzer/ingest.
 */
#ifndef PO_INGEST_PIPE_H
#define PO_INGEST_PIPE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "ingest.h"

#define PO_PIPE_BATCHES 4	  /* batches in flight: bounds the memory */
#define PO_PIPE_BATCH_EVENTS 4096 /* events per batch */
#define PO_PIPE_TEXT_BYTES 65536  /* string bytes per batch (more for one huge event) */

struct po_pipe_batch {
	struct po_event *events; /* owned: PO_PIPE_BATCH_EVENTS */
	size_t count;
	char *text; /* owned: the events' strings point here */
	size_t text_used;
	size_t text_capacity;
};

struct po_pipe {
	po_event_fn callback;
	void *callback_ctx; /* weak */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct po_pipe_batch batches[PO_PIPE_BATCHES]; /* a ring */
	size_t head;				       /* the batch the consumer takes next */
	size_t queued;	       /* batches published and not yet consumed (under lock) */
	size_t filling;	       /* the batch the producer fills; not among the queued ones */
	bool quit;	       /* under lock */
	enum po_status status; /* the first callback status that is not OK (under lock) */
};

/* Allocates the batches and starts the consumer thread; false when it cannot. */
bool po_pipe_start(struct po_pipe *pipe, po_event_fn callback, void *ctx);

/*
 * Queues a copy of the event; false when out of memory (*nomem set) or when the callback
 * has failed (the events after the failing one are dropped).
 */
bool po_pipe_push(struct po_pipe *pipe, const struct po_event *event, bool *nomem);

/* Hands over the partial batch and waits until every queued event went to the callback. */
enum po_status po_pipe_drain(struct po_pipe *pipe);

/* Drains, stops the thread and frees the batches. */
void po_pipe_stop(struct po_pipe *pipe);

#endif /* PO_INGEST_PIPE_H */
