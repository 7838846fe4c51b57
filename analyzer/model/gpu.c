/*
 * gpu.c: GPU activity per device and stream. Records arrive in host emission order, close
 * to but not exactly in start order; each union (per device, and of all devices for the
 * steps' gpu_busy_ns) merges them through a bounded buffer sorted by start and finalizes
 * an interval once a later record starts after its end. Gaps between finalized intervals
 * are attributed to what the training thread did meanwhile.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

#define NAME_SPACE_GPU 1

static void device_interval(struct po_model *model, struct gpu_device_state *device,
			    int64_t begin_ns, int64_t end_ns);

/*
 * Adds the interval's overlap with every step to their gpu_busy_ns. Intervals mostly fall
 * in the latest steps; a late one edits older steps, whose chunk the store reads back.
 */
static void steps_busy(struct po_model *model, int64_t begin_ns, int64_t end_ns)
{
	size_t low = po_step_store_upper_bound(model->steps, begin_ns);

	for (size_t i = low ? low - 1 : 0; i < model->step_count; i++) {
		const struct po_step *step = po_step_store_borrow(model->steps, i);
		int64_t from = step->begin_ns > begin_ns ? step->begin_ns : begin_ns;
		int64_t to = step->end_ns < end_ns ? step->end_ns : end_ns;

		if (step->begin_ns >= end_ns)
			break;
		if (to > from)
			po_step_store_edit(model->steps, i)->gpu_busy_ns += to - from;
	}
}

static int64_t first_step_begin(const struct po_model *model)
{
	return po_step_store_borrow(model->steps, 0)->begin_ns;
}

static void interval_done(struct po_model *model, const struct gpu_union *merge, int64_t begin_ns,
			  int64_t end_ns)
{
	switch (merge->sink) {
	case SINK_DEVICE:
		device_interval(model, &model->devices[merge->owner], begin_ns, end_ns);
		break;
	case SINK_STREAM:
		model->streams[merge->owner].out.busy_ns += end_ns - begin_ns;
		break;
	default:
		steps_busy(model, begin_ns, end_ns);
		break;
	}
}

static void merge_one(struct po_model *model, struct gpu_union *merge, struct gpu_rec record)
{
	if (record.begin_ns > merge->flushed_begin)
		merge->flushed_begin = record.begin_ns;
	if (!merge->has_current) {
		merge->has_current = true;
	} else if (record.begin_ns <= merge->current_end) {
		if (record.end_ns > merge->current_end)
			merge->current_end = record.end_ns;
		return;
	} else {
		interval_done(model, merge, merge->current_begin, merge->current_end);
	}
	merge->current_begin = record.begin_ns;
	merge->current_end = record.end_ns;
}

static void flush_oldest(struct po_model *model, struct gpu_union *merge, size_t count)
{
	for (size_t i = 0; i < count; i++)
		merge_one(model, merge, merge->buffer[i]);
	if (merge->count > count)
		memmove(merge->buffer, merge->buffer + count,
			(merge->count - count) * sizeof(struct gpu_rec));
	merge->count -= count;
}

/*
 * A record older than the merged part can no longer be placed exactly: it only extends
 * the current interval's end (its earlier part falls in time already finalized).
 */
static void merge_late(struct gpu_union *merge, struct gpu_rec record)
{
	merge->late_records++;
	if (merge->has_current && record.end_ns > merge->current_end)
		merge->current_end = record.end_ns;
}

/*
 * Merges the records that begin PO_GPU_REORDER_NS before the newest one: records are not
 * that late, and merging them keeps gaps close to the training thread's recent segments.
 */
static void flush_stale(struct po_model *model, struct gpu_union *merge, int64_t newest_ns)
{
	size_t low = 0, high = merge->count;

	if (merge->buffer[0].begin_ns >= newest_ns - PO_GPU_REORDER_NS)
		return;
	while (low < high) { /* the first record recent enough to wait */
		size_t mid = low + (high - low) / 2;

		if (merge->buffer[mid].begin_ns < newest_ns - PO_GPU_REORDER_NS)
			low = mid + 1;
		else
			high = mid;
	}
	flush_oldest(model, merge, low);
}

static enum po_status union_add(struct po_model *model, struct gpu_union *merge,
				struct gpu_rec record)
{
	size_t low = 0, high;

	if (record.begin_ns < merge->flushed_begin) {
		merge_late(merge, record);
		return PO_STATUS_OK;
	}
	if (merge->count == PO_GPU_REORDER_CAP)
		flush_oldest(model, merge, PO_GPU_REORDER_CAP / 2);
	else if (merge->count)
		flush_stale(model, merge, record.begin_ns);
	if (po_array_reserve((void **)&merge->buffer, &merge->capacity, merge->count + 1,
			     sizeof(struct gpu_rec)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	high = merge->count;
	if (high && merge->buffer[high - 1].begin_ns <= record.begin_ns)
		low = high;  /* the usual case: records come almost in start order */
	while (low < high) { /* after every record that begins no later */
		size_t mid = low + (high - low) / 2;

		if (merge->buffer[mid].begin_ns <= record.begin_ns)
			low = mid + 1;
		else
			high = mid;
	}
	memmove(merge->buffer + low + 1, merge->buffer + low,
		(merge->count - low) * sizeof(struct gpu_rec));
	merge->buffer[low] = record;
	merge->count++;
	return PO_STATUS_OK;
}

static void union_flush(struct po_model *model, struct gpu_union *merge)
{
	flush_oldest(model, merge, merge->count);
	if (merge->has_current)
		interval_done(model, merge, merge->current_begin, merge->current_end);
	merge->has_current = false;
}

static enum po_status gap_found(struct po_model *model, struct gpu_device_state *device,
				int64_t begin_ns, int64_t end_ns)
{
	struct po_gpu_gap *gap;
	int64_t step;

	if (model->step_count && begin_ns < first_step_begin(model))
		begin_ns = first_step_begin(model); /* the analysis window starts there */
	if (end_ns - begin_ns < model->config.min_gap_ns || end_ns <= begin_ns)
		return PO_STATUS_OK;
	if (device->gap_count >= model->config.max_gaps) {
		device->out.gaps_not_kept++;
		return PO_STATUS_OK;
	}
	if (po_array_reserve((void **)&device->gaps, &device->gap_capacity, device->gap_count + 1,
			     sizeof(*gap)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	gap = &device->gaps[device->gap_count++];
	*gap = (struct po_gpu_gap){
	    .device = device->out.device, .begin_ns = begin_ns, .end_ns = end_ns, .step_index = -1};
	gap->cause = spans_cause(model, begin_ns, end_ns, &gap->cause_ns);
	step = model_step_at(model, begin_ns, end_ns);
	return step >= 0 ? detail_gap_found(model, (size_t)step, end_ns - begin_ns) : PO_STATUS_OK;
}

static void device_interval(struct po_model *model, struct gpu_device_state *device,
			    int64_t begin_ns, int64_t end_ns)
{
	if (device->union_last_ns >= 0 && begin_ns > device->union_last_ns &&
	    gap_found(model, device, device->union_last_ns, begin_ns) != PO_STATUS_OK)
		model->deferred = PO_STATUS_NOMEM; /* reported by the next po_model_consume */
	if (device->union_first_ns < 0)
		device->union_first_ns = begin_ns;
	if (end_ns > device->union_last_ns)
		device->union_last_ns = end_ns;
	device->busy_total_ns += end_ns - begin_ns;
	if (model->step_count) {
		int64_t first_ns = first_step_begin(model);
		int64_t from = begin_ns > first_ns ? begin_ns : first_ns;

		if (end_ns > from)
			device->busy_from_window_ns += end_ns - from;
	}
	device->tail[device->tail_next] = (struct gpu_rec){begin_ns, end_ns};
	device->tail_next = (device->tail_next + 1) % PO_GPU_TAIL_CAP;
	if (device->tail_count < PO_GPU_TAIL_CAP)
		device->tail_count++;
}

static struct gpu_device_state *device_get(struct po_model *model, int32_t id)
{
	struct gpu_device_state *device;

	for (size_t i = 0; i < model->device_count; i++)
		if (model->devices[i].out.device == id)
			return &model->devices[i];
	if (po_array_reserve((void **)&model->devices, &model->device_capacity,
			     model->device_count + 1, sizeof(*device)) != PO_STATUS_OK)
		return NULL;
	device = &model->devices[model->device_count];
	*device = (struct gpu_device_state){.out = {.device = id, .first_ns = -1, .last_ns = -1},
					    .merge = {.sink = SINK_DEVICE,
						      .owner = model->device_count,
						      .flushed_begin = INT64_MIN},
					    .union_first_ns = -1,
					    .union_last_ns = -1};
	model->device_count++;
	return device;
}

static struct gpu_stream_state *stream_get(struct po_model *model, int32_t device, int32_t id)
{
	struct gpu_stream_state *stream;

	for (size_t i = 0; i < model->stream_count; i++) {
		stream = &model->streams[i];
		if (stream->out.device == device && stream->out.stream == id)
			return stream;
	}
	if (po_array_reserve((void **)&model->streams, &model->stream_capacity,
			     model->stream_count + 1, sizeof(*stream)) != PO_STATUS_OK)
		return NULL;
	stream = &model->streams[model->stream_count];
	*stream = (struct gpu_stream_state){.out = {.device = device, .stream = id},
					    .last_begin_ns = -1,
					    .merge = {.sink = SINK_STREAM,
						      .owner = model->stream_count,
						      .flushed_begin = INT64_MIN}};
	model->stream_count++;
	return stream;
}

static void stream_add(struct gpu_stream_state *stream, const struct po_event *event,
		       struct gpu_rec record)
{
	enum po_gpu_kind kind = event->u.gpu_activity.kind;

	stream->out.activity_count++;
	if ((unsigned)kind < PO_GPU_KIND_COUNT)
		stream->out.kind_ns[kind] += record.end_ns - record.begin_ns;
	stream->out.bytes += (int64_t)event->u.gpu_activity.bytes;
}

static void device_add(struct gpu_device_state *device, struct gpu_rec record)
{
	device->out.activity_count++;
	if (device->out.first_ns < 0 || record.begin_ns < device->out.first_ns)
		device->out.first_ns = record.begin_ns;
	if (record.end_ns > device->out.last_ns)
		device->out.last_ns = record.end_ns;
}

enum po_status gpu_activity(struct po_model *model, const struct po_event *event)
{
	int64_t begin_ns = event->u.gpu_activity.start_ns;
	int64_t end_ns = event->u.gpu_activity.end_ns;
	struct gpu_rec record = {begin_ns, end_ns > begin_ns ? end_ns : begin_ns};
	struct gpu_stream_state *stream;
	struct gpu_device_state *device;
	const char *name;

	/* Work that ends before it starts, or runs for over an hour, is a damaged record. */
	if (end_ns < begin_ns || end_ns - begin_ns > PO_GPU_RECORD_LIMIT_NS) {
		model->quality.implausible_values++;
		return PO_STATUS_OK;
	}
	stream = stream_get(model, event->u.gpu_activity.device, event->u.gpu_activity.stream);
	device = device_get(model, event->u.gpu_activity.device);

	if (!device || !stream)
		return PO_STATUS_NOMEM;
	/*
	 * A stream runs its work one item at a time: a record that overlaps the previous one
	 * of its stream by more than clock rounding has a damaged time (records arriving out
	 * of order do not overlap).
	 */
	if (stream->last_begin_ns >= 0 && record.begin_ns < stream->last_end_ns - 1000 &&
	    stream->last_begin_ns < record.end_ns - 1000) {
		model->quality.implausible_values++;
		return PO_STATUS_OK;
	}
	stream->last_begin_ns = record.begin_ns;
	stream->last_end_ns = record.end_ns;
	stream_add(stream, event, record);
	device_add(device, record);
	if (union_add(model, &stream->merge, record) != PO_STATUS_OK ||
	    union_add(model, &device->merge, record) != PO_STATUS_OK ||
	    union_add(model, &model->all_devices, record) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	name = model_intern_capped(model, NAME_SPACE_GPU, event->u.gpu_activity.name,
				   &model->gpu_name_count, PO_NAME_CAP, model->fold_name);
	if (!name)
		return PO_STATUS_NOMEM;
	return detail_push_span(model, &(struct po_span){.kind = PO_SPAN_GPU,
							 .sub = event->u.gpu_activity.kind,
							 .pid = event->pid,
							 .tid = -1,
							 .device = event->u.gpu_activity.device,
							 .stream = event->u.gpu_activity.stream,
							 .label = name,
							 .begin_ns = record.begin_ns,
							 .end_ns = record.end_ns,
							 .batch = -1});
}

enum po_status gpu_flush_all(struct po_model *model)
{
	union_flush(model, &model->all_devices);
	for (size_t i = 0; i < model->device_count; i++)
		union_flush(model, &model->devices[i].merge);
	for (size_t i = 0; i < model->stream_count; i++)
		union_flush(model, &model->streams[i].merge);
	return PO_STATUS_OK;
}

void gpu_free(struct po_model *model)
{
	for (size_t i = 0; i < model->device_count; i++) {
		free(model->devices[i].merge.buffer);
		free(model->devices[i].gaps);
	}
	for (size_t i = 0; i < model->stream_count; i++)
		free(model->streams[i].merge.buffer);
	free(model->devices);
	free(model->streams);
	free(model->all_devices.buffer);
}

size_t gpu_bytes(const struct po_model *model)
{
	size_t bytes = model->device_capacity * sizeof(struct gpu_device_state);

	bytes += model->all_devices.capacity * sizeof(struct gpu_rec);
	bytes += model->stream_capacity * sizeof(struct gpu_stream_state);
	for (size_t i = 0; i < model->device_count; i++)
		bytes += model->devices[i].gap_capacity * sizeof(struct po_gpu_gap) +
			 model->devices[i].merge.capacity * sizeof(struct gpu_rec);
	for (size_t i = 0; i < model->stream_count; i++)
		bytes += model->streams[i].merge.capacity * sizeof(struct gpu_rec);
	return bytes;
}

/* The analysis window: first step begin to last step end, else the device's activity. */
static void device_window(const struct po_model *model, const struct gpu_device_state *device,
			  int64_t *begin_ns, int64_t *end_ns)
{
	if (model->step_count) {
		*begin_ns = first_step_begin(model);
		*end_ns = po_step_store_borrow(model->steps, model->step_count - 1)->end_ns;
	} else {
		*begin_ns = device->out.first_ns;
		*end_ns = device->out.last_ns;
	}
}

/* Union time in the window: what was counted from its begin, less what lies past its end. */
static int64_t device_busy(const struct po_model *model, const struct gpu_device_state *device,
			   int64_t window_end_ns)
{
	int64_t busy_ns;

	if (!model->step_count)
		return device->busy_total_ns;
	busy_ns = device->busy_from_window_ns;
	for (size_t i = 0; i < device->tail_count; i++) {
		const struct gpu_rec *interval = &device->tail[i];
		int64_t from =
		    interval->begin_ns > window_end_ns ? interval->begin_ns : window_end_ns;

		if (interval->end_ns > from)
			busy_ns -= interval->end_ns - from;
	}
	return busy_ns < 0 ? 0 : busy_ns;
}

/* The idle stretches at both ends of the window, which no later record can close. */
static enum po_status edge_gaps(struct po_model *model, struct gpu_device_state *device,
				int64_t begin_ns, int64_t end_ns)
{
	enum po_status status = PO_STATUS_OK;

	if (device->union_first_ns < 0)
		return PO_STATUS_OK;
	if (device->union_first_ns > begin_ns)
		status =
		    gap_found(model, device, begin_ns,
			      device->union_first_ns < end_ns ? device->union_first_ns : end_ns);
	if (status == PO_STATUS_OK && device->union_last_ns < end_ns &&
	    device->union_first_ns < end_ns)
		status = gap_found(
		    model, device,
		    device->union_last_ns > begin_ns ? device->union_last_ns : begin_ns, end_ns);
	return status;
}

static int compare_gaps(const void *left, const void *right)
{
	const struct po_gpu_gap *a = left, *b = right;

	if (a->begin_ns != b->begin_ns)
		return a->begin_ns < b->begin_ns ? -1 : 1;
	return (a->end_ns > b->end_ns) - (a->end_ns < b->end_ns);
}

/* Clips the device's gaps to the window, attributes them to steps and sums them by cause. */
static void settle_gaps(struct po_model *model, struct gpu_device_state *device, int64_t begin_ns,
			int64_t end_ns)
{
	size_t kept = 0;

	for (size_t i = 0; i < device->gap_count; i++) {
		struct po_gpu_gap gap = device->gaps[i];

		if (gap.begin_ns < begin_ns)
			gap.begin_ns = begin_ns;
		if (gap.end_ns > end_ns)
			gap.end_ns = end_ns;
		if (gap.end_ns - gap.begin_ns < model->config.min_gap_ns ||
		    gap.end_ns <= gap.begin_ns)
			continue;
		if (gap.cause_ns > gap.end_ns - gap.begin_ns)
			gap.cause_ns = gap.end_ns - gap.begin_ns;
		gap.step_index = model_step_at(model, gap.begin_ns, gap.end_ns);
		device->out.gap_ns_by_cause[gap.cause] += gap.end_ns - gap.begin_ns;
		device->gaps[kept++] = gap;
	}
	device->gap_count = kept;
	po_sort(device->gaps, kept, sizeof(*device->gaps), compare_gaps);
}

static int compare_devices(const void *left, const void *right)
{
	const struct gpu_device_state *a = left, *b = right;

	return (a->out.device > b->out.device) - (a->out.device < b->out.device);
}

static int compare_streams(const void *left, const void *right)
{
	const struct po_gpu_stream *a = left, *b = right;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return (a->stream > b->stream) - (a->stream < b->stream);
}

/* Settles each device's window, busy time and gaps, then sorts the devices. */
static enum po_status settle_devices(struct po_model *model, size_t *total_gaps)
{
	*total_gaps = 0;
	for (size_t i = 0; i < model->device_count; i++) {
		struct gpu_device_state *device = &model->devices[i];
		int64_t begin_ns, end_ns;

		device_window(model, device, &begin_ns, &end_ns);
		if (edge_gaps(model, device, begin_ns, end_ns) != PO_STATUS_OK)
			return PO_STATUS_NOMEM;
		settle_gaps(model, device, begin_ns, end_ns);
		device->out.window_ns = end_ns > begin_ns ? end_ns - begin_ns : 0;
		device->out.busy_ns = device_busy(model, device, end_ns);
		if (device->out.busy_ns > device->out.window_ns)
			device->out.busy_ns = device->out.window_ns;
		device->out.idle_ns = device->out.window_ns - device->out.busy_ns;
		device->out.late_records = device->merge.late_records;
		*total_gaps += device->gap_count;
	}
	po_sort(model->devices, model->device_count, sizeof(*model->devices), compare_devices);
	return PO_STATUS_OK;
}

enum po_status gpu_build(struct po_model *model, struct po_analysis *analysis)
{
	size_t total_gaps;

	if (settle_devices(model, &total_gaps) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	analysis->gpus = calloc(model->device_count + 1, sizeof(*analysis->gpus));
	analysis->streams = calloc(model->stream_count + 1, sizeof(*analysis->streams));
	analysis->gaps = calloc(total_gaps + 1, sizeof(*analysis->gaps));
	if (!analysis->gpus || !analysis->streams || !analysis->gaps)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < model->device_count; i++) {
		struct gpu_device_state *device = &model->devices[i];

		device->out.gaps_begin = analysis->gap_count;
		device->out.gap_count = device->gap_count;
		if (device->gap_count)
			memcpy(analysis->gaps + analysis->gap_count, device->gaps,
			       device->gap_count * sizeof(*device->gaps));
		analysis->gap_count += device->gap_count;
		analysis->gpus[analysis->gpu_count++] = device->out;
	}
	for (size_t i = 0; i < model->stream_count; i++)
		analysis->streams[analysis->stream_count++] = model->streams[i].out;
	po_sort(analysis->streams, analysis->stream_count, sizeof(*analysis->streams),
		compare_streams);
	return PO_STATUS_OK;
}
