/* ingest_internal.h: what the files of analyzer/ingest share: finding the CTF traces. */
#ifndef PO_INGEST_INTERNAL_H
#define PO_INGEST_INTERNAL_H

#include <stddef.h>

#include "../common/status.h"

/* The CTF traces below a directory: every directory that holds a "metadata" file. */
struct po_trace_list {
	char **paths; /* owned, each owned; sorted */
	size_t count;
	size_t capacity;
};

/* Fills list (empty on entry) with the trace directories below root, sorted. */
enum po_status po_trace_list_find(const char *root, struct po_trace_list *list,
				  struct po_error *err) PO_NODISCARD;
void po_trace_list_fini(struct po_trace_list *list);

#endif /* PO_INGEST_INTERNAL_H */
