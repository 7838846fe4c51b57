/*
 * test_pipe.c: a lane's queue hands every event over once, in order, with its strings and
 * merge key intact; a cancel stops a producer even while it waits for room.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ingest/pipe.h"

struct seen {
	int64_t calls;
	int64_t next_time_ns; /* the time the next event must carry */
	int64_t out_of_order;
	int64_t bad_text;
	int64_t bad_key;
};

/* The label an event numbered `number` carries: its length varies, its bytes name it. */
static size_t label_of(int64_t number, char *out, size_t size)
{
	size_t len = (size_t)(number * 37 % 300);

	if (len >= size)
		len = size - 1;
	for (size_t i = 0; i < len; i++)
		out[i] = (char)('a' + (number + (int64_t)i) % 26);
	return len;
}

static void check_event(struct seen *seen, const struct po_event *event, int64_t key)
{
	char expected[512];
	size_t len = label_of(event->time_ns, expected, sizeof(expected));

	seen->calls++;
	seen->out_of_order += event->time_ns != seen->next_time_ns;
	seen->next_time_ns = event->time_ns + 1;
	seen->bad_key += key != 1000 + event->time_ns;
	seen->bad_text += event->u.stage.label.len != len ||
			  (len && memcmp(event->u.stage.label.ptr, expected, len) != 0);
	seen->bad_text += event->procname.len != 4 || memcmp(event->procname.ptr, "sim0", 4);
}

/* A producer thread: pushes `count` events numbered from 0, then finishes the queue. */
struct producer {
	struct po_pipe *pipe; /* weak */
	int64_t count;
	int64_t pushed; /* pushes that succeeded */
	bool nomem;
	pthread_t thread;
};

static void *produce(void *data)
{
	struct producer *producer = data;
	char label[512], procname[8] = "sim0";

	for (int64_t i = 0; i < producer->count; i++) {
		struct po_event event = {
		    .kind = PO_EV_STAGE_BEGIN, .time_ns = i, .pid = 1, .tid = 1};

		event.procname = (struct po_str){procname, 4};
		event.u.stage.label.len = label_of(i, label, sizeof(label));
		event.u.stage.label.ptr = label;
		if (!po_pipe_push(producer->pipe, &event, 1000 + i, &producer->nomem))
			break;
		producer->pushed++;
		memset(label, '#', sizeof(label)); /* the queue must have copied it */
	}
	po_pipe_finish(producer->pipe);
	return NULL;
}

/* Consumes until the producer is done or `limit` events were seen; returns the count. */
static int64_t consume(struct po_pipe *pipe, struct seen *seen, int64_t limit)
{
	struct po_pipe_batch *batch;

	while (seen->calls < limit && (batch = po_pipe_take(pipe)) != NULL) {
		for (size_t i = 0; i < batch->count; i++)
			check_event(seen, &batch->events[i], batch->keys[i]);
		po_pipe_release(pipe);
	}
	return seen->calls;
}

static void test_order_and_strings(void)
{
	struct seen seen = {0};
	struct po_pipe pipe;
	struct producer producer = {.pipe = &pipe, .count = 50000};

	CHECK(po_pipe_init(&pipe));
	CHECK(pthread_create(&producer.thread, NULL, produce, &producer) == 0);
	CHECK_INT_EQ(consume(&pipe, &seen, INT64_MAX), 50000);
	pthread_join(producer.thread, NULL);
	CHECK_INT_EQ(producer.pushed, 50000);
	CHECK(!producer.nomem);
	CHECK_INT_EQ(seen.out_of_order, 0);
	CHECK_INT_EQ(seen.bad_text, 0);
	CHECK_INT_EQ(seen.bad_key, 0);
	po_pipe_fini(&pipe);
}

/* The consumer stops taking; the producer, blocked on a full queue, must return. */
static void test_cancel_wakes_a_waiting_producer(void)
{
	struct seen seen = {0};
	struct po_pipe pipe;
	struct producer producer = {.pipe = &pipe, .count = 1000000};

	CHECK(po_pipe_init(&pipe));
	CHECK(pthread_create(&producer.thread, NULL, produce, &producer) == 0);
	consume(&pipe, &seen, 9000);
	po_pipe_cancel(&pipe);
	pthread_join(producer.thread, NULL);
	CHECK(po_pipe_cancelled(&pipe));
	CHECK(producer.pushed < 1000000);
	CHECK(producer.pushed <= 9000 + PO_PIPE_BATCHES * PO_PIPE_BATCH_EVENTS);
	CHECK_INT_EQ(seen.out_of_order, 0);
	po_pipe_fini(&pipe);
}

static void test_string_larger_than_a_batch(void)
{
	size_t len = 3 * PO_PIPE_TEXT_BYTES, good = 0;
	char *name = malloc(len);
	struct po_event event = {.kind = PO_EV_GPU_ACTIVITY};
	struct po_pipe_batch *batch;
	struct po_pipe pipe;
	bool nomem = false;

	CHECK(name != NULL);
	if (!name)
		return;
	memset(name, 'x', len - 1);
	name[len - 1] = 'y';
	event.u.gpu_activity.name = (struct po_str){name, len};
	CHECK(po_pipe_init(&pipe));
	for (int i = 0; i < 2; i++) /* two batches: the queue holds them without a consumer */
		CHECK(po_pipe_push(&pipe, &event, i, &nomem));
	po_pipe_finish(&pipe);
	while ((batch = po_pipe_take(&pipe)) != NULL) {
		for (size_t i = 0; i < batch->count; i++) {
			const struct po_str *got = &batch->events[i].u.gpu_activity.name;

			good += got->len == len && got->ptr[0] == 'x' && got->ptr[len - 1] == 'y';
		}
		po_pipe_release(&pipe);
	}
	CHECK_INT_EQ(good, 2);
	po_pipe_fini(&pipe);
	free(name);
}

int main(void)
{
	RUN(test_order_and_strings);
	RUN(test_cancel_wakes_a_waiting_producer);
	RUN(test_string_larger_than_a_batch);
	return CHECK_SUMMARY();
}
