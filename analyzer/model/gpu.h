/*
 * gpu.h: the GPU activity tracker, one of the model's trackers. It owns the devices and
 * streams, the union of each device's activity (busy time, idle gaps) and the union of
 * all devices (the steps' GPU time). Records arrive in host emission order, close to but
 * not exactly in start order; each union merges them through a bounded buffer sorted by
 * start and finalizes an interval once a later record starts after its end.
 *
 * What the tracker needs of the rest of the model (the first step's begin, what the
 * training thread did during a gap, which step a gap fell in, where the steps' GPU time
 * goes) it asks through struct po_gpu_host, so it runs and is tested without a model.
 *
 * Life: init, consume records, flush (at the end of the stream), build its part of a
 * result, fini. No global state: several trackers live side by side.
 */
#ifndef PO_MODEL_GPU_H
#define PO_MODEL_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "result.h"

#define PO_GPU_REORDER_CAP (1u << 20)	       /* records waiting to be merged, per union */
#define PO_GPU_REORDER_NS 100000000LL	       /* records this much older than the newest merge */
#define PO_GPU_REORDER_MAX_NS 600000000000LL   /* the longest wait, however late records come */
#define PO_GPU_TAIL_CAP 512		       /* latest union intervals per device */
#define PO_GPU_RECORD_LIMIT_NS 3600000000000LL /* longer records are damaged ones */
/*
 * A record describes finished work, written after it ended: one that ends more than this
 * after the moment it was written has a damaged time (on an H100, CUPTI's records were
 * written 1.5 ms or more after they ended; the slack covers the clock conversion).
 */
#define PO_GPU_FUTURE_SLACK_NS 100000000LL

struct po_gpu_host {
	void *ctx;
	/* The analysis window's begin (the first step's); INT64_MIN before the first step. */
	int64_t (*window_begin_ns)(void *ctx);
	/* A final interval of the union of all devices' activity. */
	void (*busy)(void *ctx, int64_t begin_ns, int64_t end_ns);
	/* A device was idle over the gap: fill its cause; the step it fell in may want it. */
	enum po_status (*gap)(void *ctx, struct po_gpu_gap *gap);
	/* The step with the largest overlap with [begin, end), or -1. */
	int64_t (*step_at)(void *ctx, int64_t begin_ns, int64_t end_ns);
};

struct gpu_rec {
	int64_t begin_ns;
	int64_t end_ns;
};

/* The streaming union of activity intervals, merged through a reorder buffer. */
struct gpu_union {
	int sink;		/* GPU_SINK_* */
	size_t owner;		/* index of the device or stream */
	struct gpu_rec *buffer; /* owned; [head, head + count) sorted by begin */
	size_t head;		/* records before it are merged; their room is reused */
	size_t count;		/* at most PO_GPU_REORDER_CAP */
	size_t capacity;
	int64_t flushed_begin; /* largest begin merged so far; INT64_MIN */
	bool has_current;
	int64_t current_begin;
	int64_t current_end;
	int64_t late_records;
};

struct gpu_device_state {
	struct po_gpu_device out;
	struct gpu_union merge;
	int64_t union_first_ns;		      /* first union interval's begin; -1 */
	int64_t union_last_ns;		      /* last union interval's end; -1 */
	int64_t busy_total_ns;		      /* every union interval */
	int64_t busy_from_window_ns;	      /* clipped to [window begin, +inf) */
	struct gpu_rec tail[PO_GPU_TAIL_CAP]; /* latest union intervals */
	size_t tail_count;
	size_t tail_next;
	struct po_gpu_gap *gaps; /* owned */
	size_t gap_count;
	size_t gap_capacity;
};

struct gpu_stream_state {
	struct po_gpu_stream out;
	struct gpu_union merge;
	int64_t last_begin_ns; /* the last record accepted on the stream; -1 before one */
	int64_t last_end_ns;
};

/*
 * What a device is (profopt:gpu_device) and the memory counters of it, kept apart from the
 * devices with activity: a program is told of every device of the machine and may use one.
 */
struct gpu_description {
	int32_t device;
	const char *name; /* weak: interned by the model; NULL */
	int64_t memory_bytes;
	int32_t multiprocessors;
	int32_t capability_major, capability_minor;
	int64_t peak_bytes;	/* the largest gpu_mem_peak or gpu_mem_used; -1 */
	int64_t reserved_bytes; /* the largest gpu_mem_reserved; -1 */
	int64_t free_bytes;	/* the smallest gpu_mem_free; -1 */
	int64_t *used;		/* owned: gpu_mem_used samples (step ends), every used_stride-th */
	size_t used_count;
	size_t used_capacity;
	size_t used_stride; /* doubles each time PO_GPU_USED_CAP samples are kept */
	size_t used_seen;
};

#define PO_GPU_USED_CAP 65536 /* gpu_mem_used samples kept per device for their median */

struct po_gpu_tracker {
	struct po_gpu_host host;
	struct gpu_description *descriptions; /* owned */
	size_t description_count;
	size_t description_capacity;
	int64_t min_gap_ns;		  /* shorter gaps are not kept */
	size_t max_gaps;		  /* gaps kept per device */
	struct gpu_device_state *devices; /* owned */
	size_t device_count;
	size_t device_capacity;
	struct gpu_stream_state *streams; /* owned */
	size_t stream_count;
	size_t stream_capacity;
	struct gpu_union all_devices; /* for the host's busy() */
	int64_t implausible_records;  /* refused: damaged times or overlaps on a stream */
	/*
	 * How long a record waits to be merged: PO_GPU_REORDER_NS, or twice the latest any
	 * record arrived after it began (an activity API delivers its records in batches, a
	 * flush period late: CUPTI's are up to half a second old), up to PO_GPU_REORDER_MAX_NS.
	 * What waits is bounded by the record rate times this.
	 */
	int64_t horizon_ns;
	enum po_status deferred; /* a failure inside a merge, returned by the next call */
};

void gpu_tracker_init(struct po_gpu_tracker *tracker, const struct po_gpu_host *host,
		      int64_t min_gap_ns, size_t max_gaps);
void gpu_tracker_fini(struct po_gpu_tracker *tracker);
size_t gpu_tracker_bytes(const struct po_gpu_tracker *tracker);

/*
 * A PO_EV_GPU_ACTIVITY event. *accepted is false when the record is implausible (counted
 * in implausible_records, nothing else changes). Fails only on allocation failure.
 */
enum po_status gpu_tracker_consume(struct po_gpu_tracker *tracker, const struct po_event *event,
				   bool *accepted) PO_NODISCARD;

/*
 * The device's record of duration_ns was launched while stage was open on the launching
 * thread (-1: no stage; -2: its launch is unknown).
 */
void gpu_tracker_launched_by(struct po_gpu_tracker *tracker, int32_t device, int stage,
			     int64_t duration_ns);

/* A PO_EV_GPU_DEVICE event; name is its interned name (NULL when empty). */
enum po_status gpu_tracker_describe(struct po_gpu_tracker *tracker, const struct po_event *event,
				    const char *name) PO_NODISCARD;

/* A device's streaming multiprocessors, -1 when it was not described. */
int32_t gpu_tracker_multiprocessors(const struct po_gpu_tracker *tracker, int32_t device);

/* A GPU memory counter sample (gpu_mem_used, _reserved, _peak, _free) of a device. */
enum po_status gpu_tracker_memory(struct po_gpu_tracker *tracker,
				  const struct po_event *event) PO_NODISCARD;

/* Merges every record still waiting: no record may come after. */
enum po_status gpu_tracker_flush(struct po_gpu_tracker *tracker) PO_NODISCARD;

/*
 * Fills analysis->gpus, streams and gaps for the window [begin, end) (has_window false:
 * each device's own activity span), adding the idle stretches at the window's edges.
 * Called once, after gpu_tracker_flush.
 */
enum po_status gpu_tracker_build(struct po_gpu_tracker *tracker, bool has_window, int64_t begin_ns,
				 int64_t end_ns, struct po_analysis *analysis) PO_NODISCARD;

#endif /* PO_MODEL_GPU_H */
