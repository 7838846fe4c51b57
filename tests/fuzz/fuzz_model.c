/*
 * fuzz_model.c: a libFuzzer target over the model's event handling. The input bytes are
 * read as a sequence of typed events (kind, thread, time step and fields drawn from the
 * bytes), fed to the model, which must then finish (or refuse with a status) without a
 * crash, an assertion, a leak or undefined behaviour. Built with clang -fsanitize=fuzzer
 * when PROFOPT_FUZZ is on; otherwise linked with replay_main.c to run the committed corpus
 * as a regression test.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/model.h"

struct cursor {
	const uint8_t *data; /* weak: the fuzzer's input */
	size_t size;
	size_t offset;
};

static uint64_t take(struct cursor *cursor, unsigned bytes)
{
	uint64_t value = 0;

	for (unsigned i = 0; i < bytes; i++) {
		value <<= 8;
		if (cursor->offset < cursor->size)
			value |= cursor->data[cursor->offset++];
	}
	return value;
}

/* Small signed values, with -1 (unknown) and extremes reachable. */
static int64_t take_int(struct cursor *cursor)
{
	uint8_t selector = (uint8_t)take(cursor, 1);

	switch (selector & 7) {
	case 0:
		return -1;
	case 1:
		return INT64_MAX;
	case 2:
		return INT64_MIN;
	default:
		return (int64_t)take(cursor, 2) - 16;
	}
}

/* a + b with two's-complement wrap-around: the harness itself must not overflow. */
static int64_t wrap_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static struct po_str take_str(struct cursor *cursor)
{
	size_t len = take(cursor, 1) % 24;
	struct po_str str = {NULL, 0};

	if (cursor->offset + len > cursor->size)
		len = cursor->size - cursor->offset;
	str.ptr = (const char *)cursor->data + cursor->offset;
	str.len = len;
	cursor->offset += len;
	return str;
}

static void fill_payload(struct cursor *cursor, struct po_event *event)
{
	switch (event->kind) {
	case PO_EV_STAGE_BEGIN:
	case PO_EV_STAGE_END:
		event->u.stage.stage = (enum po_stage)(take(cursor, 1) % PO_STAGE_COUNT);
		event->u.stage.label = take_str(cursor);
		event->u.stage.batch = take_int(cursor);
		event->u.stage.cpu_ns = take_int(cursor);
		break;
	case PO_EV_COUNTER:
		event->u.counter.kind = (enum po_counter)(take(cursor, 1) % PO_COUNTER_COUNT);
		event->u.counter.device = (int32_t)take_int(cursor);
		event->u.counter.value = take_int(cursor);
		break;
	case PO_EV_GPU_ACTIVITY:
		event->u.gpu_activity.device = (int32_t)(take(cursor, 1) % 4);
		event->u.gpu_activity.stream = (int32_t)(take(cursor, 1) % 4);
		event->u.gpu_activity.kind =
		    (enum po_gpu_kind)(take(cursor, 1) % PO_GPU_KIND_COUNT);
		event->u.gpu_activity.name = take_str(cursor);
		event->u.gpu_activity.start_ns = event->time_ns - (int64_t)take(cursor, 3);
		event->u.gpu_activity.end_ns =
		    wrap_add(event->u.gpu_activity.start_ns, take_int(cursor));
		event->u.gpu_activity.grid_blocks = take(cursor, 1);
		event->u.gpu_activity.block_threads = (uint32_t)take(cursor, 1);
		break;
	case PO_EV_GPU_DEVICE:
		event->u.gpu_device.device = (int32_t)(take(cursor, 1) % 4);
		event->u.gpu_device.name = take_str(cursor);
		event->u.gpu_device.memory_bytes = (uint64_t)take_int(cursor);
		event->u.gpu_device.multiprocessors = (int32_t)take_int(cursor);
		event->u.gpu_device.capability_major = (int16_t)take(cursor, 1);
		event->u.gpu_device.capability_minor = (int16_t)take(cursor, 1);
		break;
	case PO_EV_RANK:
		event->u.rank.rank = (int32_t)(take(cursor, 1) % 4) - 1;
		event->u.rank.local_rank = (int32_t)take_int(cursor);
		event->u.rank.world_size = (int32_t)take_int(cursor);
		event->u.rank.host = take_str(cursor);
		break;
	case PO_EV_COLLECTIVE_BEGIN:
	case PO_EV_COLLECTIVE_END:
		event->u.collective.group = (int32_t)(take(cursor, 1) % 3);
		event->u.collective.op =
		    (enum po_collective_op)(take(cursor, 1) % PO_COLLECTIVE_OP_COUNT);
		event->u.collective.bytes = take(cursor, 2);
		event->u.collective.seq = take_int(cursor);
		event->u.collective.device = (int32_t)take_int(cursor);
		break;
	case PO_EV_MEM_ALLOC:
	case PO_EV_MEM_FREE:
		event->u.mem.addr = take(cursor, 1);
		event->u.mem.bytes = take(cursor, 4);
		event->u.mem.device = (int32_t)(take(cursor, 1) % 3) - 1;
		event->u.mem.label = take_str(cursor);
		break;
	case PO_EV_CODE:
		event->u.code.code_id = (uint32_t)(take(cursor, 1) % 8);
		event->u.code.function = take_str(cursor);
		event->u.code.file = take_str(cursor);
		event->u.code.first_line = (int32_t)take_int(cursor);
		break;
	case PO_EV_STACK_SAMPLE:
		/* frames are raw bytes; a depth they cannot hold is a malformed sample */
		event->u.stack_sample.tid = event->tid;
		event->u.stack_sample.cpu_ns = take_int(cursor);
		event->u.stack_sample.depth = (uint32_t)(take(cursor, 1) % 5);
		event->u.stack_sample.frames = take_str(cursor);
		break;
	case PO_EV_NATIVE_STACK:
		/* addresses are raw bytes, likewise; small ones fall in small fuzzed objects */
		event->u.native_stack.tid = event->tid;
		event->u.native_stack.weight_ns = take_int(cursor);
		event->u.native_stack.depth = (uint32_t)(take(cursor, 1) % 5);
		event->u.native_stack.pcs = take_str(cursor);
		break;
	case PO_EV_DISCARDED_EVENTS:
	case PO_EV_DISCARDED_PACKETS:
		event->u.discarded.count = take_int(cursor);
		event->u.discarded.begin_ns =
		    (int64_t)((uint64_t)event->time_ns - (uint64_t)take_int(cursor));
		break;
	default:
		/* Every other kind: fill the union's bytes, then keep enums in range. */
		for (size_t i = 0; i < sizeof(event->u) && cursor->offset < cursor->size; i += 8) {
			int64_t value = take_int(cursor);

			memcpy((char *)&event->u + i, &value,
			       sizeof(event->u) - i < 8 ? sizeof(event->u) - i : 8);
		}
		memset(&event->u.run_begin.framework, 0, sizeof(struct po_str));
		if (event->kind == PO_EV_RUN_CONFIG) {
			event->u.run_config.key = take_str(cursor);
			event->u.run_config.value = take_str(cursor);
		}
		if (event->kind == PO_EV_GPU_LAUNCH)
			event->u.gpu_launch.name = take_str(cursor);
		break;
	}
}

/* Names every other native offset, so that both named and unnamed frames are fuzzed. */
static enum po_status fuzz_namer(void *ctx, const char *path, const char *build_id, uint64_t offset,
				 bool interrupted, struct po_native_name *out)
{
	(void)ctx;
	(void)path;
	(void)build_id;
	*out = (struct po_native_name){offset % 2 ? NULL : (interrupted ? "leaf" : "caller"),
				       offset % 4 ? NULL : "src.c", offset % 4 ? -1 : 7};
	return PO_STATUS_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cursor cursor = {data, size, 0};
	struct po_model_config config;
	struct po_model *model = NULL;
	struct po_analysis *analysis = NULL;
	struct po_error err = {{0}};
	int64_t time_ns = 1000000;

	po_model_config_init(&config);
	config.max_gaps = 16;
	config.detail_span_cap = 64;
	config.native_namer = (struct po_native_namer){.name = fuzz_namer};
	if (po_model_create(&config, &model, &err) != PO_STATUS_OK)
		return 0;
	while (cursor.offset < cursor.size) {
		struct po_event event;

		memset(&event, 0, sizeof(event));
		event.kind = (enum po_event_kind)(take(&cursor, 1) % PO_EV_COUNT);
		time_ns += (int64_t)take(&cursor, 2) - 256; /* occasionally backwards */
		event.time_ns = time_ns;
		event.pid = (int32_t)(take(&cursor, 1) % 4) - 1;
		event.tid = event.pid < 0 ? -1 : event.pid * 10 + (int32_t)(take(&cursor, 1) % 3);
		event.procname = take_str(&cursor);
		fill_payload(&cursor, &event);
		if (po_model_consume(model, &event) != PO_STATUS_OK)
			break;
	}
	if (po_model_finish(model, &analysis, &err) == PO_STATUS_OK)
		po_analysis_destroy(analysis);
	po_model_destroy(model);
	return 0;
}
