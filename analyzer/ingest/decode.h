/*
 * decode.h: turns babeltrace2 messages into typed events (decode.c); the graph around it
 * is built in ingest.c. Private to analyzer/ingest.
 */
#ifndef PO_INGEST_DECODE_H
#define PO_INGEST_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include <babeltrace2/babeltrace.h>

#include "event_text.h"
#include "ingest.h"
#include "pipe.h"

/* Payload members a kind reads, in the order of the kind's row in decode.c's table. */
#define PO_MEMBERS_MAX 14

enum po_member_type {
	PO_MEMBER_ABSENT,
	PO_MEMBER_UNSIGNED,
	PO_MEMBER_SIGNED,
	PO_MEMBER_STRING,
	PO_MEMBER_ARRAY, /* of unsigned integers: bytes (a build id), a stack's frames */
};

struct po_member {
	uint32_t index;
	enum po_member_type type;
};

/* What was resolved on the first sight of an event class. */
struct po_class_entry {
	const bt_event_class *event_class; /* weak: key; NULL for a free slot */
	int kind;			   /* enum po_event_kind, or PO_EV_COUNT: foreign */
	struct po_member payload[PO_MEMBERS_MAX];
	struct po_member vpid, vtid, procname, ip; /* common context members */
	uint64_t frequency;			   /* of the default clock; 0: none */
	int64_t offset_ns;			   /* of the default clock from its origin */
	uint32_t trace_id;
	int32_t env_pid;   /* "vpid" of the trace environment, -1 if none */
	bool profopt_like; /* foreign, but named like a profopt event: damaged metadata? */
};

/* The per-trace state that salvage keeps across restarts. */
struct po_trace_state {
	int64_t delivered; /* events handed to the callback (without lanes) */
	int64_t to_skip;   /* events of this trace to drop after a restart */
	int32_t pid_base;  /* added to its pids: its recording's pid space (pid_spaces.c) */
};

struct po_decoder {
	struct po_class_entry *classes; /* owned: open addressing table */
	size_t class_capacity;		/* a power of two */
	size_t class_count;
	struct po_class_entry *last;   /* weak: into classes */
	struct po_trace_state *traces; /* owned: trace_count entries */
	size_t trace_count;
	po_event_fn callback;
	void *callback_ctx;		/* weak */
	struct po_pipe *pipe;		/* weak; when set, events go to this lane's queue */
	struct po_ingest_stats *stats;	/* weak */
	enum po_status callback_status; /* the first non-OK status of the callback */
	bool probing;			/* decode nothing: a probe for a failing trace */
	/* the frames of the stack sample being decoded, packed (event.h) */
	struct po_stack_frame frames[PO_STACK_DEPTH_MAX];
	uint64_t pcs[PO_STACK_DEPTH_MAX]; /* a native stack's addresses, likewise */
	struct po_text_scratch text;	  /* the event's cleaned text (event_text.h) */
	bool nomem;
};

enum po_status po_decoder_init(struct po_decoder *decoder, size_t trace_count,
			       struct po_error *err) PO_NODISCARD;
void po_decoder_fini(struct po_decoder *decoder);
/* Forgets the classes (a new graph makes new ones); keeps the per-trace state. */
void po_decoder_reset_classes(struct po_decoder *decoder);

/* Handles one message; false stops the graph (callback status or out of memory). */
bool po_decoder_handle(struct po_decoder *decoder, const bt_message *message);

/*
 * The consuming function of a simple sink over a po_decoder (data): one batch of messages
 * per call, each handed to po_decoder_handle(); END and AGAIN pass through.
 */
bt_graph_simple_sink_component_consume_func_status po_decoder_consume(bt_message_iterator *iterator,
								      void *data);

#endif /* PO_INGEST_DECODE_H */
