/*
 * gpu.c: the GPU activity tracker (gpu.h). Gaps between a device's finalized intervals
 * go to the host, which attributes them to what the training thread did meanwhile.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/arena.h"
#include "gpu.h"
#include "map.h"
#include "saturate.h"

#define GPU_SINK_ALL 0	  /* intervals go to the host's busy() */
#define GPU_SINK_DEVICE 1 /* intervals make a device's busy time and gaps */
#define GPU_SINK_STREAM 2 /* intervals make a stream's busy time */

static void device_interval(struct po_gpu_tracker *t, struct gpu_device_state *device,
			    int64_t begin_ns, int64_t end_ns);

static void interval_done(struct po_gpu_tracker *t, const struct gpu_union *merge, int64_t begin_ns,
			  int64_t end_ns)
{
	switch (merge->sink) {
	case GPU_SINK_DEVICE:
		device_interval(t, &t->devices[merge->owner], begin_ns, end_ns);
		break;
	case GPU_SINK_STREAM:
		t->streams[merge->owner].out.busy_ns += end_ns - begin_ns;
		break;
	default:
		t->host.busy(t->host.ctx, begin_ns, end_ns);
		break;
	}
}

static void merge_one(struct po_gpu_tracker *t, struct gpu_union *merge, struct gpu_rec record)
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
		interval_done(t, merge, merge->current_begin, merge->current_end);
	}
	merge->current_begin = record.begin_ns;
	merge->current_end = record.end_ns;
}

/* The waiting records: buffer[head, head + count), sorted by begin. */
static inline struct gpu_rec *waiting(const struct gpu_union *merge)
{
	return merge->buffer + merge->head;
}

static void flush_oldest(struct po_gpu_tracker *t, struct gpu_union *merge, size_t count)
{
	for (size_t i = 0; i < count; i++)
		merge_one(t, merge, waiting(merge)[i]);
	merge->head += count;
	merge->count -= count;
	if (!merge->count)
		merge->head = 0;
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
 * Merges the records that begin horizon_ns before the newest one: no record arrives that
 * late, and merging them keeps gaps close to the training thread's recent segments.
 */
static void flush_stale(struct po_gpu_tracker *t, struct gpu_union *merge, int64_t newest_ns)
{
	const struct gpu_rec *records = waiting(merge);
	int64_t before_ns = newest_ns - t->horizon_ns;
	size_t low = 0, high = merge->count;

	if (records[0].begin_ns >= before_ns)
		return;
	while (low < high) { /* the first record recent enough to wait */
		size_t mid = low + (high - low) / 2;

		if (records[mid].begin_ns < before_ns)
			low = mid + 1;
		else
			high = mid;
	}
	flush_oldest(t, merge, low);
}

/* Room for one more waiting record at the end: the merged part's room is reused first. */
static enum po_status union_reserve(struct gpu_union *merge)
{
	if (merge->head && merge->head + merge->count == merge->capacity &&
	    merge->head >= merge->count) {
		memmove(merge->buffer, waiting(merge), merge->count * sizeof(struct gpu_rec));
		merge->head = 0;
	}
	return po_array_reserve((void **)&merge->buffer, &merge->capacity,
				merge->head + merge->count + 1, sizeof(struct gpu_rec));
}

static enum po_status union_add(struct po_gpu_tracker *t, struct gpu_union *merge,
				struct gpu_rec record)
{
	struct gpu_rec *records;
	size_t low = 0, high;

	if (record.begin_ns < merge->flushed_begin) {
		merge_late(merge, record);
		return PO_STATUS_OK;
	}
	if (merge->count == PO_GPU_REORDER_CAP)
		flush_oldest(t, merge, PO_GPU_REORDER_CAP / 2);
	else if (merge->count)
		flush_stale(t, merge, record.begin_ns);
	if (union_reserve(merge) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	records = waiting(merge);
	high = merge->count;
	if (high && records[high - 1].begin_ns <= record.begin_ns)
		low = high;  /* the usual case: records come almost in start order */
	while (low < high) { /* after every record that begins no later */
		size_t mid = low + (high - low) / 2;

		if (records[mid].begin_ns <= record.begin_ns)
			low = mid + 1;
		else
			high = mid;
	}
	memmove(records + low + 1, records + low, (merge->count - low) * sizeof(struct gpu_rec));
	records[low] = record;
	merge->count++;
	return PO_STATUS_OK;
}

static void union_flush(struct po_gpu_tracker *t, struct gpu_union *merge)
{
	flush_oldest(t, merge, merge->count);
	if (merge->has_current)
		interval_done(t, merge, merge->current_begin, merge->current_end);
	merge->has_current = false;
}

static enum po_status gap_found(struct po_gpu_tracker *t, struct gpu_device_state *device,
				int64_t begin_ns, int64_t end_ns)
{
	int64_t window_begin_ns = t->host.window_begin_ns(t->host.ctx);
	struct po_gpu_gap *gap;

	if (begin_ns < window_begin_ns)
		begin_ns = window_begin_ns; /* the analysis window starts there */
	if (end_ns - begin_ns < t->min_gap_ns || end_ns <= begin_ns)
		return PO_STATUS_OK;
	if (device->gap_count >= t->max_gaps) {
		device->out.gaps_not_kept++;
		return PO_STATUS_OK;
	}
	if (po_array_reserve((void **)&device->gaps, &device->gap_capacity, device->gap_count + 1,
			     sizeof(*gap)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	gap = &device->gaps[device->gap_count++];
	*gap = (struct po_gpu_gap){
	    .device = device->out.device, .begin_ns = begin_ns, .end_ns = end_ns, .step_index = -1};
	return t->host.gap(t->host.ctx, gap);
}

static void device_interval(struct po_gpu_tracker *t, struct gpu_device_state *device,
			    int64_t begin_ns, int64_t end_ns)
{
	int64_t window_begin_ns = t->host.window_begin_ns(t->host.ctx);

	if (device->union_last_ns >= 0 && begin_ns > device->union_last_ns &&
	    gap_found(t, device, device->union_last_ns, begin_ns) != PO_STATUS_OK)
		t->deferred = PO_STATUS_NOMEM; /* returned by the next consume or flush */
	if (device->union_first_ns < 0)
		device->union_first_ns = begin_ns;
	if (end_ns > device->union_last_ns)
		device->union_last_ns = end_ns;
	device->busy_total_ns += end_ns - begin_ns;
	if (window_begin_ns != INT64_MIN) {
		int64_t from = begin_ns > window_begin_ns ? begin_ns : window_begin_ns;

		if (end_ns > from)
			device->busy_from_window_ns += end_ns - from;
	}
	device->tail[device->tail_next] = (struct gpu_rec){begin_ns, end_ns};
	device->tail_next = (device->tail_next + 1) % PO_GPU_TAIL_CAP;
	if (device->tail_count < PO_GPU_TAIL_CAP)
		device->tail_count++;
}

static struct gpu_device_state *device_get(struct po_gpu_tracker *t, int32_t id)
{
	struct gpu_device_state *device;

	for (size_t i = 0; i < t->device_count; i++)
		if (t->devices[i].out.device == id)
			return &t->devices[i];
	if (po_array_reserve((void **)&t->devices, &t->device_capacity, t->device_count + 1,
			     sizeof(*device)) != PO_STATUS_OK)
		return NULL;
	device = &t->devices[t->device_count];
	*device = (struct gpu_device_state){.out = {.device = id, .first_ns = -1, .last_ns = -1},
					    .merge = {.sink = GPU_SINK_DEVICE,
						      .owner = t->device_count,
						      .flushed_begin = INT64_MIN},
					    .union_first_ns = -1,
					    .union_last_ns = -1};
	t->device_count++;
	return device;
}

static struct gpu_stream_state *stream_get(struct po_gpu_tracker *t, int32_t device, int32_t id)
{
	struct gpu_stream_state *stream;

	for (size_t i = 0; i < t->stream_count; i++) {
		stream = &t->streams[i];
		if (stream->out.device == device && stream->out.stream == id)
			return stream;
	}
	if (po_array_reserve((void **)&t->streams, &t->stream_capacity, t->stream_count + 1,
			     sizeof(*stream)) != PO_STATUS_OK)
		return NULL;
	stream = &t->streams[t->stream_count];
	*stream = (struct gpu_stream_state){.out = {.device = device, .stream = id},
					    .last_begin_ns = -1,
					    .merge = {.sink = GPU_SINK_STREAM,
						      .owner = t->stream_count,
						      .flushed_begin = INT64_MIN}};
	t->stream_count++;
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

/* A record written lateness_ns after it began: records wait at least twice as long. */
static void note_lateness(struct po_gpu_tracker *t, int64_t lateness_ns)
{
	if (lateness_ns > PO_GPU_REORDER_MAX_NS / 2)
		lateness_ns = PO_GPU_REORDER_MAX_NS / 2;
	if (2 * lateness_ns > t->horizon_ns)
		t->horizon_ns = 2 * lateness_ns;
}

enum po_status gpu_tracker_consume(struct po_gpu_tracker *t, const struct po_event *event,
				   bool *accepted)
{
	int64_t begin_ns = event->u.gpu_activity.start_ns;
	int64_t end_ns = event->u.gpu_activity.end_ns;
	struct gpu_rec record = {begin_ns, end_ns > begin_ns ? end_ns : begin_ns};
	struct gpu_stream_state *stream;
	struct gpu_device_state *device;

	*accepted = false;
	if (t->deferred != PO_STATUS_OK)
		return t->deferred;
	/*
	 * Work that ends before it starts, runs for over an hour, or ends after its record was
	 * written is a damaged record (one flipped bit in an end time once made 918 good
	 * records after it look like overlaps, and the device busy).
	 */
	if (end_ns < begin_ns || end_ns - begin_ns > PO_GPU_RECORD_LIMIT_NS ||
	    end_ns > po_add_sat(event->time_ns, PO_GPU_FUTURE_SLACK_NS)) {
		t->implausible_records++;
		return PO_STATUS_OK;
	}
	stream = stream_get(t, event->u.gpu_activity.device, event->u.gpu_activity.stream);
	device = device_get(t, event->u.gpu_activity.device);

	if (!device || !stream)
		return PO_STATUS_NOMEM;
	/*
	 * A stream runs its work in order. A record may begin before the previous one of its
	 * stream ends (on Hopper, a kernel launched with programmatic dependent launch starts
	 * early and waits on the device: seen for cuDNN's kernels on an H100), but one that
	 * begins no later than the previous one and overlaps it by more than clock rounding
	 * has a damaged time (records arriving out of order do not overlap).
	 */
	if (stream->last_begin_ns >= 0 && record.begin_ns <= stream->last_begin_ns &&
	    record.begin_ns < stream->last_end_ns - 1000 &&
	    stream->last_begin_ns < record.end_ns - 1000) {
		t->implausible_records++;
		return PO_STATUS_OK;
	}
	note_lateness(t, event->time_ns - begin_ns);
	stream->last_begin_ns = record.begin_ns;
	stream->last_end_ns = record.end_ns;
	stream_add(stream, event, record);
	device_add(device, record);
	if (union_add(t, &stream->merge, record) != PO_STATUS_OK ||
	    union_add(t, &device->merge, record) != PO_STATUS_OK ||
	    union_add(t, &t->all_devices, record) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	*accepted = true;
	return t->deferred;
}

void gpu_tracker_launched_by(struct po_gpu_tracker *t, int32_t device, int stage,
			     int64_t duration_ns)
{
	struct po_gpu_device *out = NULL;

	for (size_t i = 0; i < t->device_count && !out; i++)
		if (t->devices[i].out.device == device)
			out = &t->devices[i].out;
	if (!out)
		return;
	if (stage >= 0 && stage < PO_STAGE_COUNT)
		out->launched_ns_by_stage[stage] += duration_ns;
	else if (stage == -1)
		out->launched_outside_stages_ns += duration_ns;
	else
		out->unlaunched_ns += duration_ns;
}

/* ---- descriptions and memory counters ---- */

static struct gpu_description *description_get(struct po_gpu_tracker *t, int32_t device)
{
	for (size_t i = 0; i < t->description_count; i++)
		if (t->descriptions[i].device == device)
			return &t->descriptions[i];
	if (po_array_reserve((void **)&t->descriptions, &t->description_capacity,
			     t->description_count + 1, sizeof(*t->descriptions)) != PO_STATUS_OK)
		return NULL;
	t->descriptions[t->description_count] = (struct gpu_description){.device = device,
									 .multiprocessors = -1,
									 .capability_major = -1,
									 .capability_minor = -1,
									 .peak_bytes = -1,
									 .reserved_bytes = -1,
									 .free_bytes = -1,
									 .used_stride = 1};
	return &t->descriptions[t->description_count++];
}

static const struct gpu_description *description_find(const struct po_gpu_tracker *t,
						      int32_t device)
{
	for (size_t i = 0; i < t->description_count; i++)
		if (t->descriptions[i].device == device)
			return &t->descriptions[i];
	return NULL;
}

enum po_status gpu_tracker_describe(struct po_gpu_tracker *t, const struct po_event *event,
				    const char *name)
{
	struct gpu_description *description = description_get(t, event->u.gpu_device.device);

	if (!description)
		return PO_STATUS_NOMEM;
	if (name)
		description->name = name;
	if (event->u.gpu_device.memory_bytes > 0 &&
	    event->u.gpu_device.memory_bytes <= (uint64_t)INT64_MAX)
		description->memory_bytes = (int64_t)event->u.gpu_device.memory_bytes;
	description->multiprocessors = event->u.gpu_device.multiprocessors;
	description->capability_major = event->u.gpu_device.capability_major;
	description->capability_minor = event->u.gpu_device.capability_minor;
	return PO_STATUS_OK;
}

int32_t gpu_tracker_multiprocessors(const struct po_gpu_tracker *t, int32_t device)
{
	const struct gpu_description *description = description_find(t, device);

	return description ? description->multiprocessors : -1;
}

/* Keeps every used_stride-th sample; past the cap, every other one kept goes. */
static enum po_status keep_used(struct gpu_description *description, int64_t value)
{
	if (description->used_seen++ % description->used_stride)
		return PO_STATUS_OK;
	if (description->used_count == PO_GPU_USED_CAP) {
		for (size_t i = 0; i < PO_GPU_USED_CAP / 2; i++)
			description->used[i] = description->used[2 * i];
		description->used_count = PO_GPU_USED_CAP / 2;
		description->used_stride *= 2;
	}
	if (po_array_reserve((void **)&description->used, &description->used_capacity,
			     description->used_count + 1, sizeof(int64_t)) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	description->used[description->used_count++] = value;
	return PO_STATUS_OK;
}

enum po_status gpu_tracker_memory(struct po_gpu_tracker *t, const struct po_event *event)
{
	int64_t value = event->u.counter.value;
	struct gpu_description *description;

	if (event->u.counter.device < 0 || value < 0)
		return PO_STATUS_OK;
	description = description_get(t, event->u.counter.device);
	if (!description)
		return PO_STATUS_NOMEM;
	switch (event->u.counter.kind) {
	case PO_COUNTER_GPU_MEM_USED:
		if (keep_used(description, value) != PO_STATUS_OK)
			return PO_STATUS_NOMEM;
		/* what is in use is a lower bound of the peak */
		if (value > description->peak_bytes)
			description->peak_bytes = value;
		break;
	case PO_COUNTER_GPU_MEM_PEAK:
		if (value > description->peak_bytes)
			description->peak_bytes = value;
		break;
	case PO_COUNTER_GPU_MEM_RESERVED:
		if (value > description->reserved_bytes)
			description->reserved_bytes = value;
		break;
	case PO_COUNTER_GPU_MEM_FREE:
		if (description->free_bytes < 0 || value < description->free_bytes)
			description->free_bytes = value;
		break;
	default:
		break;
	}
	return PO_STATUS_OK;
}

static int compare_int64(const void *left, const void *right)
{
	int64_t a = *(const int64_t *)left, b = *(const int64_t *)right;

	return (a > b) - (a < b);
}

/* The memory the program used of a device, and what one more step's worth would need. */
static struct po_gpu_memory memory_of(struct gpu_description *description)
{
	struct po_gpu_memory memory = {.peak_allocated_bytes = description->peak_bytes,
				       .resident_bytes = -1,
				       .reserved_max_bytes = description->reserved_bytes,
				       .free_min_bytes = description->free_bytes,
				       .step_bytes = -1,
				       .headroom_bytes = -1};

	if (description->used_count) {
		po_sort(description->used, description->used_count, sizeof(int64_t), compare_int64);
		memory.resident_bytes = description->used[description->used_count / 2];
	}
	if (memory.peak_allocated_bytes >= 0 && memory.resident_bytes >= 0)
		memory.step_bytes = memory.peak_allocated_bytes > memory.resident_bytes
					? memory.peak_allocated_bytes - memory.resident_bytes
					: 0;
	if (memory.peak_allocated_bytes < 0 || memory.reserved_max_bytes < 0)
		return memory;
	if (memory.free_min_bytes >= 0)
		memory.headroom_bytes =
		    memory.free_min_bytes +
		    (memory.reserved_max_bytes > memory.peak_allocated_bytes
			 ? memory.reserved_max_bytes - memory.peak_allocated_bytes
			 : 0);
	else if (description->memory_bytes > memory.reserved_max_bytes)
		memory.headroom_bytes = description->memory_bytes - memory.reserved_max_bytes;
	return memory;
}

/* A device with activity takes its description and memory, when there are some. */
static void describe_out(struct po_gpu_tracker *t, struct po_gpu_device *out)
{
	struct gpu_description *description = NULL;

	for (size_t i = 0; i < t->description_count; i++)
		if (t->descriptions[i].device == out->device)
			description = &t->descriptions[i];
	out->name = NULL;
	out->memory_bytes = -1;
	out->multiprocessors = out->capability_major = out->capability_minor = -1;
	out->memory = (struct po_gpu_memory){-1, -1, -1, -1, -1, -1};
	if (!description)
		return;
	out->name = description->name;
	out->memory_bytes = description->memory_bytes > 0 ? description->memory_bytes : -1;
	out->multiprocessors = description->multiprocessors;
	out->capability_major = description->capability_major;
	out->capability_minor = description->capability_minor;
	out->memory = memory_of(description);
}

enum po_status gpu_tracker_flush(struct po_gpu_tracker *t)
{
	union_flush(t, &t->all_devices);
	for (size_t i = 0; i < t->device_count; i++)
		union_flush(t, &t->devices[i].merge);
	for (size_t i = 0; i < t->stream_count; i++)
		union_flush(t, &t->streams[i].merge);
	return t->deferred;
}

void gpu_tracker_init(struct po_gpu_tracker *t, const struct po_gpu_host *host, int64_t min_gap_ns,
		      size_t max_gaps)
{
	*t = (struct po_gpu_tracker){
	    .host = *host,
	    .min_gap_ns = min_gap_ns,
	    .max_gaps = max_gaps,
	    .all_devices = {.sink = GPU_SINK_ALL, .flushed_begin = INT64_MIN},
	    .horizon_ns = PO_GPU_REORDER_NS,
	};
}

void gpu_tracker_fini(struct po_gpu_tracker *t)
{
	for (size_t i = 0; i < t->device_count; i++) {
		free(t->devices[i].merge.buffer);
		free(t->devices[i].gaps);
	}
	for (size_t i = 0; i < t->stream_count; i++)
		free(t->streams[i].merge.buffer);
	for (size_t i = 0; i < t->description_count; i++)
		free(t->descriptions[i].used);
	free(t->descriptions);
	free(t->devices);
	free(t->streams);
	free(t->all_devices.buffer);
}

size_t gpu_tracker_bytes(const struct po_gpu_tracker *t)
{
	size_t bytes = t->device_capacity * sizeof(struct gpu_device_state);

	bytes += t->all_devices.capacity * sizeof(struct gpu_rec);
	bytes += t->stream_capacity * sizeof(struct gpu_stream_state);
	for (size_t i = 0; i < t->device_count; i++)
		bytes += t->devices[i].gap_capacity * sizeof(struct po_gpu_gap) +
			 t->devices[i].merge.capacity * sizeof(struct gpu_rec);
	for (size_t i = 0; i < t->stream_count; i++)
		bytes += t->streams[i].merge.capacity * sizeof(struct gpu_rec);
	bytes += t->description_capacity * sizeof(struct gpu_description);
	for (size_t i = 0; i < t->description_count; i++)
		bytes += t->descriptions[i].used_capacity * sizeof(int64_t);
	return bytes;
}

/* Union time in the window: what was counted from its begin, less what lies past its end. */
static int64_t device_busy(const struct gpu_device_state *device, bool has_window,
			   int64_t window_end_ns)
{
	int64_t busy_ns;

	if (!has_window)
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
static enum po_status edge_gaps(struct po_gpu_tracker *t, struct gpu_device_state *device,
				int64_t begin_ns, int64_t end_ns)
{
	enum po_status status = PO_STATUS_OK;

	if (device->union_first_ns < 0)
		return PO_STATUS_OK;
	if (device->union_first_ns > begin_ns)
		status =
		    gap_found(t, device, begin_ns,
			      device->union_first_ns < end_ns ? device->union_first_ns : end_ns);
	if (status == PO_STATUS_OK && device->union_last_ns < end_ns &&
	    device->union_first_ns < end_ns)
		status = gap_found(
		    t, device, device->union_last_ns > begin_ns ? device->union_last_ns : begin_ns,
		    end_ns);
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
static void settle_gaps(struct po_gpu_tracker *t, struct gpu_device_state *device, int64_t begin_ns,
			int64_t end_ns)
{
	size_t kept = 0;

	for (size_t i = 0; i < device->gap_count; i++) {
		struct po_gpu_gap gap = device->gaps[i];

		if (gap.begin_ns < begin_ns)
			gap.begin_ns = begin_ns;
		if (gap.end_ns > end_ns)
			gap.end_ns = end_ns;
		if (gap.end_ns - gap.begin_ns < t->min_gap_ns || gap.end_ns <= gap.begin_ns)
			continue;
		if (gap.cause_ns > gap.end_ns - gap.begin_ns)
			gap.cause_ns = gap.end_ns - gap.begin_ns;
		gap.step_index = t->host.step_at(t->host.ctx, gap.begin_ns, gap.end_ns);
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
static enum po_status settle_devices(struct po_gpu_tracker *t, bool has_window,
				     int64_t window_begin_ns, int64_t window_end_ns,
				     size_t *total_gaps)
{
	*total_gaps = 0;
	for (size_t i = 0; i < t->device_count; i++) {
		struct gpu_device_state *device = &t->devices[i];
		int64_t begin_ns, end_ns;

		/* The analysis window, else the device's own activity. */
		begin_ns = has_window ? window_begin_ns : device->out.first_ns;
		end_ns = has_window ? window_end_ns : device->out.last_ns;
		if (edge_gaps(t, device, begin_ns, end_ns) != PO_STATUS_OK)
			return PO_STATUS_NOMEM;
		settle_gaps(t, device, begin_ns, end_ns);
		device->out.window_ns = end_ns > begin_ns ? end_ns - begin_ns : 0;
		device->out.busy_ns = device_busy(device, has_window, end_ns);
		if (device->out.busy_ns > device->out.window_ns)
			device->out.busy_ns = device->out.window_ns;
		device->out.idle_ns = device->out.window_ns - device->out.busy_ns;
		device->out.window_busy_pct =
		    device->out.window_ns > 0
			? 100.0 * (double)device->out.busy_ns / (double)device->out.window_ns
			: NAN;
		device->out.late_records = device->merge.late_records;
		*total_gaps += device->gap_count;
	}
	po_sort(t->devices, t->device_count, sizeof(*t->devices), compare_devices);
	return PO_STATUS_OK;
}

enum po_status gpu_tracker_build(struct po_gpu_tracker *t, bool has_window, int64_t begin_ns,
				 int64_t end_ns, struct po_analysis *analysis)
{
	size_t total_gaps;

	if (settle_devices(t, has_window, begin_ns, end_ns, &total_gaps) != PO_STATUS_OK)
		return PO_STATUS_NOMEM;
	analysis->gpus = calloc(t->device_count + 1, sizeof(*analysis->gpus));
	analysis->streams = calloc(t->stream_count + 1, sizeof(*analysis->streams));
	analysis->gaps = calloc(total_gaps + 1, sizeof(*analysis->gaps));
	if (!analysis->gpus || !analysis->streams || !analysis->gaps)
		return PO_STATUS_NOMEM;
	for (size_t i = 0; i < t->device_count; i++) {
		struct gpu_device_state *device = &t->devices[i];

		device->out.gaps_begin = analysis->gap_count;
		device->out.gap_count = device->gap_count;
		if (device->gap_count)
			memcpy(analysis->gaps + analysis->gap_count, device->gaps,
			       device->gap_count * sizeof(*device->gaps));
		analysis->gap_count += device->gap_count;
		describe_out(t, &device->out);
		analysis->gpus[analysis->gpu_count++] = device->out;
	}
	for (size_t i = 0; i < t->stream_count; i++)
		analysis->streams[analysis->stream_count++] = t->streams[i].out;
	po_sort(analysis->streams, analysis->stream_count, sizeof(*analysis->streams),
		compare_streams);
	return PO_STATUS_OK;
}
