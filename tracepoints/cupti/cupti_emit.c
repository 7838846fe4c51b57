/* cupti_emit.c: a converted CUPTI record, recorded with libprofopt (cupti_convert.h). */
#include "cupti_convert.h"

void po_cupti_emit(enum po_cupti_out out, const struct po_cupti_event *event)
{
	switch (out) {
	case PO_CUPTI_ACTIVITY:
		profopt_gpu_activity(&event->activity);
		break;
	case PO_CUPTI_KERNEL:
		profopt_gpu_kernel(&event->activity, &event->shape);
		break;
	case PO_CUPTI_ALLOC:
		profopt_mem_alloc(event->address, event->bytes, event->device, event->label);
		break;
	case PO_CUPTI_FREE:
		profopt_mem_free(event->address, event->bytes, event->device, event->label);
		break;
	default:
		break;
	}
}
