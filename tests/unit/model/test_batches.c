/*
 * test_batches.c: the batch tracker alone: a batch is found until it is consumed, counts
 * once as made, and past PO_BATCH_CAP batches in flight the oldest is forgotten, not a
 * newer one.
 */
#include "batches.h"
#include "check.h"

static void test_find_finish_drop(void)
{
	struct po_batch_tracker tracker;
	struct batch_record *record;

	CHECK(batch_tracker_init(&tracker) == PO_STATUS_OK);
	CHECK(batch_tracker_find(&tracker, 7) == NULL);
	record = batch_tracker_get(&tracker, 7, 200);
	CHECK(record != NULL && record->producer_pid == 200 && record->ready_ns == -1);
	CHECK(batch_tracker_get(&tracker, 7, 201) == record); /* the producer stays the first */
	CHECK(batch_record_made(record));
	CHECK(!batch_record_made(record));
	batch_tracker_drop(&tracker, record);
	CHECK(batch_tracker_find(&tracker, 7) == NULL);
	batch_tracker_fini(&tracker);
}

static void test_oldest_forgotten(void)
{
	struct po_batch_tracker tracker;
	bool all_newer_kept = true;

	CHECK(batch_tracker_init(&tracker) == PO_STATUS_OK);
	for (int64_t batch = 0; batch <= PO_BATCH_CAP; batch++)
		CHECK(batch_tracker_get(&tracker, batch, 200) != NULL);
	CHECK(batch_tracker_find(&tracker, 0) == NULL);
	for (int64_t batch = 1; batch <= PO_BATCH_CAP; batch++)
		all_newer_kept = all_newer_kept && batch_tracker_find(&tracker, batch) != NULL;
	CHECK(all_newer_kept);
	batch_tracker_fini(&tracker);
}

int main(void)
{
	RUN(test_find_finish_drop);
	RUN(test_oldest_forgotten);
	return CHECK_SUMMARY();
}
