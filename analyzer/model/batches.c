/* batches.c: the batch tracker (batches.h), a ring of batch records indexed by number. */
#include <stdlib.h>

#include "batches.h"

enum po_status batch_tracker_init(struct po_batch_tracker *tracker)
{
	*tracker = (struct po_batch_tracker){0};
	tracker->ring = calloc(PO_BATCH_CAP, sizeof(*tracker->ring));
	if (!tracker->ring)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < PO_BATCH_CAP; i++)
		tracker->ring[i].batch = -1;
	return PO_STATUS_OK;
}

void batch_tracker_fini(struct po_batch_tracker *tracker)
{
	free(tracker->ring);
	po_map_free(&tracker->index);
	tracker->ring = NULL;
}

size_t batch_tracker_bytes(const struct po_batch_tracker *tracker)
{
	return PO_BATCH_CAP * sizeof(*tracker->ring) + po_map_bytes(&tracker->index);
}

struct batch_record *batch_tracker_find(struct po_batch_tracker *tracker, int64_t batch)
{
	struct po_map_entry *entry = po_map_find(&tracker->index, (uint64_t)batch, 0);

	return entry ? &tracker->ring[entry->value] : NULL;
}

void batch_tracker_drop(struct po_batch_tracker *tracker, struct batch_record *record)
{
	struct po_map_entry *entry = po_map_find(&tracker->index, (uint64_t)record->batch, 0);

	if (entry && &tracker->ring[entry->value] == record)
		po_map_remove(&tracker->index, entry);
	record->batch = -1;
}

struct batch_record *batch_tracker_get(struct po_batch_tracker *tracker, int64_t batch,
				       int32_t producer_pid)
{
	struct batch_record *record = batch_tracker_find(tracker, batch);
	struct po_map_entry *entry;
	size_t slot;

	if (record)
		return record;
	slot = tracker->next;
	tracker->next = (slot + 1) % PO_BATCH_CAP;
	record = &tracker->ring[slot];
	if (record->batch >= 0)
		batch_tracker_drop(tracker, record);
	entry = po_map_upsert(&tracker->index, (uint64_t)batch, 0, NULL);
	if (!entry)
		return NULL;
	entry->value = slot;
	*record = (struct batch_record){
	    .batch = batch, .producer_pid = producer_pid, .stage_ns = {-1, -1, -1}, .ready_ns = -1};
	return record;
}

bool batch_record_made(struct batch_record *record)
{
	if (record->finished)
		return false;
	record->finished = true;
	return true;
}
