/* event_text.c: every text member of a decoded event made clean, once, before it is handed on. */
#include <stdlib.h>

#include "event_text.h"

size_t po_event_text_members(struct po_event *event, struct po_str *out[PO_EVENT_TEXT_MAX])
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
	case PO_EV_PROCESS:
		out[count++] = &event->u.process.recording;
		break;
	case PO_EV_GPU_LAUNCH:
		out[count++] = &event->u.gpu_launch.name;
		break;
	case PO_EV_GPU_ACTIVITY:
		out[count++] = &event->u.gpu_activity.name;
		break;
	case PO_EV_GPU_DEVICE:
		out[count++] = &event->u.gpu_device.name;
		break;
	case PO_EV_RANK:
		out[count++] = &event->u.rank.host;
		break;
	case PO_EV_CODE:
		out[count++] = &event->u.code.function;
		out[count++] = &event->u.code.file;
		break;
	case PO_EV_BIN_INFO:
	case PO_EV_LIB_LOAD:
	case PO_EV_DL_OPEN:
	case PO_EV_DL_MOPEN:
		out[count++] = &event->u.bin.path;
		break;
	default:
		break;
	}
	return count;
}

/* Room for `bytes` in slot `slot` of scratch. */
static bool reserve(struct po_text_scratch *scratch, size_t slot, size_t bytes)
{
	char *bigger;

	if (scratch->capacities[slot] >= bytes)
		return true;
	bigger = realloc(scratch->buffers[slot], bytes);
	if (!bigger)
		return false;
	scratch->buffers[slot] = bigger;
	scratch->capacities[slot] = bytes;
	return true;
}

bool po_event_clean_text(struct po_text_scratch *scratch, struct po_event *event)
{
	struct po_str *members[PO_EVENT_TEXT_MAX];
	size_t count = po_event_text_members(event, members);

	for (size_t i = 0; i < count; i++) {
		struct po_str *text = members[i];
		size_t size = PO_TEXT_CLEAN_BYTES_MAX(text->len) + 1;

		if (po_text_is_clean(text->ptr, text->len))
			continue;
		if (!reserve(scratch, i, size))
			return false;
		/* Never cut: size has room for every byte becoming U+FFFD. */
		text->len = po_text_clean(text->ptr, text->len, scratch->buffers[i], size, NULL);
		text->ptr = scratch->buffers[i];
	}
	return true;
}

void po_text_scratch_fini(struct po_text_scratch *scratch)
{
	for (size_t i = 0; i < PO_EVENT_TEXT_MAX; i++) {
		free(scratch->buffers[i]);
		scratch->buffers[i] = NULL;
		scratch->capacities[i] = 0;
	}
}
