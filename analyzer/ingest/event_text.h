/*
 * event_text.h: the text members of a typed event (names, labels, paths, the host, the
 * procname context), and their cleaning as the decoder hands the event on (common/text.h).
 * Private to analyzer/ingest.
 */
#ifndef PO_INGEST_EVENT_TEXT_H
#define PO_INGEST_EVENT_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/text.h"
#include "model/event.h"

/* The most text members an event has: the procname context and two of the payload's. */
#define PO_EVENT_TEXT_MAX 3

/* Where the cleaned copies of one event's text live until the next event is cleaned. */
struct po_text_scratch {
	char *buffers[PO_EVENT_TEXT_MAX]; /* owned */
	size_t capacities[PO_EVENT_TEXT_MAX];
};

/* Pointers to the text members of event (its kind's), procname first; returns their count. */
size_t po_event_text_members(struct po_event *event, struct po_str *out[PO_EVENT_TEXT_MAX]);

/*
 * Makes every text member of event clean (common/text.h): one that is not is replaced by a
 * cleaned copy in scratch, valid until the next call. false when out of memory.
 */
bool po_event_clean_text(struct po_text_scratch *scratch, struct po_event *event);

void po_text_scratch_fini(struct po_text_scratch *scratch);

#endif /* PO_INGEST_EVENT_TEXT_H */
