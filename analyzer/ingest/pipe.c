/* pipe.c: typed events from a decoding lane to the merging thread, in batches. */
#include <stdlib.h>
#include <string.h>

#include "event_text.h"
#include "pipe.h"

/* The string members of an event of this kind: its text, then its packed arrays. */
static size_t event_strings(struct po_event *event, struct po_str **out)
{
	size_t count = po_event_text_members(event, out);

	if (event->kind == PO_EV_STACK_SAMPLE)
		out[count++] = &event->u.stack_sample.frames;
	else if (event->kind == PO_EV_NATIVE_STACK)
		out[count++] = &event->u.native_stack.pcs;
	return count;
}

/*
 * Publishes the filling batch and waits for a free one; false when cancelled (the filling
 * batch is then left as it is).
 */
static bool publish(struct po_pipe *pipe)
{
	bool cancelled;

	pthread_mutex_lock(&pipe->lock);
	if (!pipe->cancelled) {
		pipe->queued++;
		pthread_cond_broadcast(&pipe->changed);
		while (pipe->queued == PO_PIPE_BATCHES && !pipe->cancelled)
			pthread_cond_wait(&pipe->changed, &pipe->lock);
		pipe->filling = (pipe->head + pipe->queued) % PO_PIPE_BATCHES;
	}
	cancelled = pipe->cancelled;
	pthread_mutex_unlock(&pipe->lock);
	return !cancelled;
}

/* Room for `bytes` of text in the filling batch; publishes it first when it is short. */
static bool reserve_text(struct po_pipe *pipe, size_t bytes, bool *nomem)
{
	struct po_pipe_batch *batch = &pipe->batches[pipe->filling];
	char *bigger;

	if (batch->text_capacity - batch->text_used >= bytes)
		return true;
	if (batch->count) {
		if (!publish(pipe))
			return false;
		batch = &pipe->batches[pipe->filling];
		if (batch->text_capacity - batch->text_used >= bytes)
			return true;
	}
	/* An empty batch: nothing points into its text yet. */
	bigger = realloc(batch->text, bytes);
	if (!bigger) {
		*nomem = true;
		return false;
	}
	batch->text = bigger;
	batch->text_capacity = bytes;
	return true;
}

bool po_pipe_push(struct po_pipe *pipe, const struct po_event *event, int64_t key, bool *nomem)
{
	struct po_str *strings[PO_EVENT_TEXT_MAX];
	size_t count, bytes = 0;
	struct po_pipe_batch *batch;
	struct po_event *copy;

	if (pipe->batches[pipe->filling].count == PO_PIPE_BATCH_EVENTS && !publish(pipe))
		return false;
	count = event_strings((struct po_event *)event, strings);
	for (size_t i = 0; i < count; i++)
		bytes += strings[i]->len;
	if (!reserve_text(pipe, bytes, nomem))
		return false;
	batch = &pipe->batches[pipe->filling];
	batch->keys[batch->count] = key;
	copy = &batch->events[batch->count++];
	*copy = *event;
	count = event_strings(copy, strings);
	for (size_t i = 0; i < count; i++) {
		if (!strings[i]->len)
			continue;
		memcpy(batch->text + batch->text_used, strings[i]->ptr, strings[i]->len);
		strings[i]->ptr = batch->text + batch->text_used;
		batch->text_used += strings[i]->len;
	}
	return true;
}

void po_pipe_finish(struct po_pipe *pipe)
{
	if (pipe->batches[pipe->filling].count)
		(void)publish(pipe);
	pthread_mutex_lock(&pipe->lock);
	pipe->done = true;
	pthread_cond_broadcast(&pipe->changed);
	pthread_mutex_unlock(&pipe->lock);
}

bool po_pipe_cancelled(struct po_pipe *pipe)
{
	bool cancelled;

	pthread_mutex_lock(&pipe->lock);
	cancelled = pipe->cancelled;
	pthread_mutex_unlock(&pipe->lock);
	return cancelled;
}

struct po_pipe_batch *po_pipe_take(struct po_pipe *pipe)
{
	struct po_pipe_batch *batch = NULL;

	pthread_mutex_lock(&pipe->lock);
	while (!pipe->queued && !pipe->done)
		pthread_cond_wait(&pipe->changed, &pipe->lock);
	if (pipe->queued)
		batch = &pipe->batches[pipe->head];
	pthread_mutex_unlock(&pipe->lock);
	return batch;
}

void po_pipe_release(struct po_pipe *pipe)
{
	struct po_pipe_batch *batch = &pipe->batches[pipe->head];

	batch->count = 0;
	batch->text_used = 0;
	pthread_mutex_lock(&pipe->lock);
	pipe->head = (pipe->head + 1) % PO_PIPE_BATCHES;
	pipe->queued--;
	pthread_cond_broadcast(&pipe->changed);
	pthread_mutex_unlock(&pipe->lock);
}

void po_pipe_cancel(struct po_pipe *pipe)
{
	pthread_mutex_lock(&pipe->lock);
	pipe->cancelled = true;
	pthread_cond_broadcast(&pipe->changed);
	pthread_mutex_unlock(&pipe->lock);
}

static void free_batches(struct po_pipe *pipe)
{
	for (size_t i = 0; i < PO_PIPE_BATCHES; i++) {
		free(pipe->batches[i].events);
		free(pipe->batches[i].keys);
		free(pipe->batches[i].text);
	}
}

bool po_pipe_init(struct po_pipe *pipe)
{
	memset(pipe, 0, sizeof(*pipe));
	for (size_t i = 0; i < PO_PIPE_BATCHES; i++) {
		struct po_pipe_batch *batch = &pipe->batches[i];

		batch->events = malloc(PO_PIPE_BATCH_EVENTS * sizeof(*batch->events));
		batch->keys = malloc(PO_PIPE_BATCH_EVENTS * sizeof(*batch->keys));
		batch->text = malloc(PO_PIPE_TEXT_BYTES);
		batch->text_capacity = PO_PIPE_TEXT_BYTES;
		if (!batch->events || !batch->keys || !batch->text) {
			free_batches(pipe);
			return false;
		}
	}
	if (pthread_mutex_init(&pipe->lock, NULL) != 0) {
		free_batches(pipe);
		return false;
	}
	if (pthread_cond_init(&pipe->changed, NULL) != 0) {
		pthread_mutex_destroy(&pipe->lock);
		free_batches(pipe);
		return false;
	}
	return true;
}

void po_pipe_fini(struct po_pipe *pipe)
{
	pthread_cond_destroy(&pipe->changed);
	pthread_mutex_destroy(&pipe->lock);
	free_batches(pipe);
}
