/* test_pipe.c: the pipe delivers every event once, in order, with its strings intact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ingest/pipe.h"

struct seen {
	int64_t calls;
	int64_t next_time_ns;   /* the time the next event must carry */
	int64_t fail_at;        /* the call that fails; -1: none */
	int64_t out_of_order;
	int64_t bad_text;
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

static enum po_status check_event(void *ctx, const struct po_event *event)
{
	struct seen *seen = ctx;
	char expected[512];
	size_t len = label_of(event->time_ns, expected, sizeof(expected));

	if (seen->calls++ == seen->fail_at)
		return PO_STATUS_INTERNAL;
	seen->out_of_order += event->time_ns != seen->next_time_ns;
	seen->next_time_ns = event->time_ns + 1;
	seen->bad_text += event->u.stage.label.len != len ||
			  (len && memcmp(event->u.stage.label.ptr, expected, len) != 0);
	seen->bad_text += event->procname.len != 4 || memcmp(event->procname.ptr, "sim0", 4);
	return PO_STATUS_OK;
}

/* Pushes events numbered from 0, each from a buffer overwritten right after the push. */
static int64_t push_events(struct po_pipe *pipe, int64_t count)
{
	char label[512], procname[8] = "sim0";
	bool nomem = false;
	int64_t pushed = 0;

	for (int64_t i = 0; i < count; i++) {
		struct po_event event = {.kind = PO_EV_STAGE_BEGIN, .time_ns = i, .pid = 1, .tid = 1};

		event.procname = (struct po_str){procname, 4};
		event.u.stage.label.len = label_of(i, label, sizeof(label));
		event.u.stage.label.ptr = label;
		pushed++;
		if (!po_pipe_push(pipe, &event, &nomem))
			break;
		memset(label, '#', sizeof(label));
	}
	CHECK(!nomem);
	return pushed;
}

static void test_order_and_strings(void)
{
	struct seen seen = {.fail_at = -1};
	struct po_pipe pipe;

	CHECK(po_pipe_start(&pipe, check_event, &seen));
	CHECK_INT_EQ(push_events(&pipe, 50000), 50000);
	CHECK_INT_EQ(po_pipe_drain(&pipe), PO_STATUS_OK);
	CHECK_INT_EQ(seen.calls, 50000);
	CHECK_INT_EQ(seen.out_of_order, 0);
	CHECK_INT_EQ(seen.bad_text, 0);
	po_pipe_stop(&pipe);
}

static void test_failure_stops(void)
{
	struct seen seen = {.fail_at = 9000};
	struct po_pipe pipe;

	CHECK(po_pipe_start(&pipe, check_event, &seen));
	CHECK(push_events(&pipe, 1000000) < 1000000);
	CHECK_INT_EQ(po_pipe_drain(&pipe), PO_STATUS_INTERNAL);
	CHECK_INT_EQ(seen.calls, 9001); /* nothing after the failing call */
	po_pipe_stop(&pipe);
}

static enum po_status check_huge(void *ctx, const struct po_event *event)
{
	size_t *good = ctx;
	size_t len = event->u.gpu_activity.name.len;

	*good += len == 3 * PO_PIPE_TEXT_BYTES && event->u.gpu_activity.name.ptr[0] == 'x' &&
		 event->u.gpu_activity.name.ptr[len - 1] == 'y';
	return PO_STATUS_OK;
}

static void test_string_larger_than_a_batch(void)
{
	size_t len = 3 * PO_PIPE_TEXT_BYTES, good = 0;
	char *name = malloc(len);
	struct po_event event = {.kind = PO_EV_GPU_ACTIVITY};
	struct po_pipe pipe;
	bool nomem = false;

	CHECK(name != NULL);
	if (!name)
		return;
	memset(name, 'x', len - 1);
	name[len - 1] = 'y';
	event.u.gpu_activity.name = (struct po_str){name, len};
	CHECK(po_pipe_start(&pipe, check_huge, &good));
	for (int i = 0; i < 5; i++)
		CHECK(po_pipe_push(&pipe, &event, &nomem));
	CHECK_INT_EQ(po_pipe_drain(&pipe), PO_STATUS_OK);
	CHECK_INT_EQ(good, 5);
	po_pipe_stop(&pipe);
	free(name);
}

int main(void)
{
	RUN(test_order_and_strings);
	RUN(test_failure_stops);
	RUN(test_string_larger_than_a_batch);
	return CHECK_SUMMARY();
}
