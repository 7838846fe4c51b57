/* pipe.c: typed events from the decoding thread to the callback's thread, in batches. */
#include <stdlib.h>
#include <string.h>

#include "pipe.h"

/* The string members of an event of this kind, procname included; returns their count. */
static size_t event_strings(struct po_event *event, struct po_str **out)
{
	size_t count = 0;

	out[count++] = &event->procname;
	switch (event->kind) {
	case PO_EV_RUN_BEGIN:
		out[count++] = &event->u.run_begin.framework;
		break;
	case PO_EV_RUN_CONFIG:
		out[count++] = &event->u.run_config.key;
		out[count++] = &event->u.run_config.value;
		break;
	case PO_EV_STAGE_BEGIN:
	case PO_EV_STAGE_END:
		out[count++] = &event->u.stage.label;
		break;
	case PO_EV_MEM_ALLOC:
	case PO_EV_MEM_FREE:
		out[count++] = &event->u.mem.label;
		break;
	case PO_EV_GPU_LAUNCH:
		out[count++] = &event->u.gpu_launch.name;
		break;
	case PO_EV_GPU_ACTIVITY:
		out[count++] = &event->u.gpu_activity.name;
		break;
	default:
		break;
	}
	return count;
}

/* The consumer: takes batches in order and hands their events to the callback. */
static void *consume_batches(void *data)
{
	struct po_pipe *pipe = data;

	pthread_mutex_lock(&pipe->lock);
	for (;;) {
		struct po_pipe_batch *batch;
		enum po_status status = pipe->status;

		while (!pipe->queued && !pipe->quit)
			pthread_cond_wait(&pipe->changed, &pipe->lock);
		if (!pipe->queued)
			break;
		batch = &pipe->batches[pipe->head];
		pthread_mutex_unlock(&pipe->lock);
		for (size_t i = 0; i < batch->count && status == PO_STATUS_OK; i++)
			status = pipe->callback(pipe->callback_ctx, &batch->events[i]);
		batch->count = 0;
		batch->text_used = 0;
		pthread_mutex_lock(&pipe->lock);
		if (pipe->status == PO_STATUS_OK)
			pipe->status = status;
		pipe->head = (pipe->head + 1) % PO_PIPE_BATCHES;
		pipe->queued--;
		pthread_cond_broadcast(&pipe->changed);
	}
	pthread_mutex_unlock(&pipe->lock);
	return NULL;
}

/* Publishes the filling batch and waits for a free one; the callback's status so far. */
static enum po_status publish(struct po_pipe *pipe)
{
	enum po_status status;

	pthread_mutex_lock(&pipe->lock);
	pipe->queued++;
	pthread_cond_broadcast(&pipe->changed);
	while (pipe->queued == PO_PIPE_BATCHES)
		pthread_cond_wait(&pipe->changed, &pipe->lock);
	pipe->filling = (pipe->head + pipe->queued) % PO_PIPE_BATCHES;
	status = pipe->status;
	pthread_mutex_unlock(&pipe->lock);
	return status;
}

/* Room for `bytes` of text in the filling batch; publishes it first when it is short. */
static bool reserve_text(struct po_pipe *pipe, size_t bytes, enum po_status *status)
{
	struct po_pipe_batch *batch = &pipe->batches[pipe->filling];
	char *bigger;

	if (batch->text_capacity - batch->text_used >= bytes)
		return true;
	if (batch->count) {
		*status = publish(pipe);
		batch = &pipe->batches[pipe->filling];
		if (batch->text_capacity - batch->text_used >= bytes)
			return true;
	}
	/* An empty batch: nothing points into its text yet. */
	bigger = realloc(batch->text, bytes);
	if (!bigger)
		return false;
	batch->text = bigger;
	batch->text_capacity = bytes;
	return true;
}

bool po_pipe_push(struct po_pipe *pipe, const struct po_event *event, bool *nomem)
{
	struct po_str *strings[3];
	size_t count, bytes = 0;
	enum po_status status = PO_STATUS_OK;
	struct po_pipe_batch *batch;
	struct po_event *copy;

	if (pipe->batches[pipe->filling].count == PO_PIPE_BATCH_EVENTS)
		status = publish(pipe);
	count = event_strings((struct po_event *)event, strings);
	for (size_t i = 0; i < count; i++)
		bytes += strings[i]->len;
	if (!reserve_text(pipe, bytes, &status)) {
		*nomem = true;
		return false;
	}
	batch = &pipe->batches[pipe->filling];
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
	return status == PO_STATUS_OK;
}

enum po_status po_pipe_drain(struct po_pipe *pipe)
{
	enum po_status status;

	if (pipe->batches[pipe->filling].count)
		(void)publish(pipe);
	pthread_mutex_lock(&pipe->lock);
	while (pipe->queued)
		pthread_cond_wait(&pipe->changed, &pipe->lock);
	status = pipe->status;
	pthread_mutex_unlock(&pipe->lock);
	return status;
}

static void free_batches(struct po_pipe *pipe)
{
	for (size_t i = 0; i < PO_PIPE_BATCHES; i++) {
		free(pipe->batches[i].events);
		free(pipe->batches[i].text);
	}
}

bool po_pipe_start(struct po_pipe *pipe, po_event_fn callback, void *ctx)
{
	memset(pipe, 0, sizeof(*pipe));
	pipe->callback = callback;
	pipe->callback_ctx = ctx;
	for (size_t i = 0; i < PO_PIPE_BATCHES; i++) {
		struct po_pipe_batch *batch = &pipe->batches[i];

		batch->events = malloc(PO_PIPE_BATCH_EVENTS * sizeof(*batch->events));
		batch->text = malloc(PO_PIPE_TEXT_BYTES);
		batch->text_capacity = PO_PIPE_TEXT_BYTES;
		if (!batch->events || !batch->text) {
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
	if (pthread_create(&pipe->thread, NULL, consume_batches, pipe) != 0) {
		pthread_cond_destroy(&pipe->changed);
		pthread_mutex_destroy(&pipe->lock);
		free_batches(pipe);
		return false;
	}
	return true;
}

void po_pipe_stop(struct po_pipe *pipe)
{
	(void)po_pipe_drain(pipe);
	pthread_mutex_lock(&pipe->lock);
	pipe->quit = true;
	pthread_cond_broadcast(&pipe->changed);
	pthread_mutex_unlock(&pipe->lock);
	pthread_join(pipe->thread, NULL);
	pthread_cond_destroy(&pipe->changed);
	pthread_mutex_destroy(&pipe->lock);
	free_batches(pipe);
}
