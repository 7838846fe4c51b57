/*
 * data_loss.c: the trace-data-loss detector. Discarded events or packets and unmatched
 * spans make every other number less certain, so this finding says how much was lost and
 * how to record without loss. Spans still open when a process's events end were cut off by
 * the program's end (a crash, a signal, workers terminated at shutdown): that is how the
 * run ended, not a loss, and needs no larger buffers.
 */
#include <math.h>

#include "detect_internal.h"

static enum po_severity loss_severity(const struct det_ctx *ctx, double event_pct, double lossy_pct)
{
	const struct po_quality *quality = &ctx->analysis->quality;
	const struct po_rules *rules = ctx->rules;

	if (event_pct >= rules->trace_loss_critical_pct ||
	    lossy_pct >= rules->trace_loss_critical_pct)
		return PO_SEVERITY_CRITICAL;
	if (event_pct >= rules->trace_loss_warning_pct || quality->unknown_discards > 0 ||
	    quality->discarded_packets > 0 || quality->lossy_steps > 0 ||
	    quality->gpu_records_dropped > 0)
		return PO_SEVERITY_WARNING;
	return PO_SEVERITY_INFO;
}

static void add_evidence(struct det_ctx *ctx, struct po_finding *finding, double event_pct,
			 double lossy_pct)
{
	const struct po_quality *quality = &ctx->analysis->quality;

	det_ev_int(ctx, finding, PO_EVIDENCE_DISCARDED_EVENTS, quality->discarded_events);
	det_ev_int(ctx, finding, PO_EVIDENCE_DISCARDED_PACKETS, quality->discarded_packets);
	det_ev_int(ctx, finding, PO_EVIDENCE_UNKNOWN_DISCARDS, quality->unknown_discards);
	det_ev_number(ctx, finding, PO_EVIDENCE_DISCARDED_PCT, event_pct);
	det_ev_int(ctx, finding, PO_EVIDENCE_UNMATCHED_SPANS,
		   quality->unmatched_begins + quality->unmatched_ends);
	det_ev_int(ctx, finding, PO_EVIDENCE_MISSING_WINDOWS, quality->missing_windows);
	det_ev_int(ctx, finding, PO_EVIDENCE_LOSSY_STEPS, quality->lossy_steps);
	det_ev_number(ctx, finding, PO_EVIDENCE_LOSSY_STEPS_PCT, lossy_pct);
	det_ev_int(ctx, finding, PO_EVIDENCE_STEPS, (int64_t)ctx->analysis->step_count);
	if (quality->gpu_records_dropped)
		det_ev_int(ctx, finding, PO_EVIDENCE_GPU_RECORDS_DROPPED,
			   quality->gpu_records_dropped);
}

static void add_windows(struct det_ctx *ctx, struct po_finding *finding)
{
	const struct po_analysis *analysis = ctx->analysis;
	struct po_window windows[16];
	size_t count = 0;

	for (size_t i = 0; i < analysis->quality.window_count && count < 16; i++) {
		const struct po_discard_window *window = &analysis->discard_windows[i];

		if (window->begin_ns >= 0 && window->end_ns >= window->begin_ns)
			windows[count++] = (struct po_window){window->begin_ns, window->end_ns};
	}
	for (size_t i = 0; i < analysis->missing_window_count && count < 16; i++)
		windows[count++] = (struct po_window){analysis->missing_windows[i].begin_ns,
						      analysis->missing_windows[i].end_ns};
	det_set_windows(ctx, finding, windows, count);
}

enum po_status det_trace_data_loss(struct det_ctx *ctx)
{
	const struct po_quality *quality = &ctx->analysis->quality;
	int64_t unmatched = quality->unmatched_begins + quality->unmatched_ends;
	double total = (double)(quality->events + quality->discarded_events);
	double event_pct = total > 0 ? 100.0 * (double)quality->discarded_events / total : 0.0;
	double lossy_pct = ctx->analysis->step_count ? 100.0 * (double)quality->lossy_steps /
							   (double)ctx->analysis->step_count
						     : 0.0;
	struct po_finding *finding;

	if (quality->discarded_events <= 0 && quality->discarded_packets <= 0 &&
	    quality->unknown_discards <= 0 && unmatched <= 0 && quality->lossy_steps <= 0 &&
	    quality->missing_windows <= 0 && quality->gpu_records_dropped <= 0)
		return PO_STATUS_OK;
	finding = det_finding_add(ctx, PO_FINDING_TRACE_DATA_LOSS,
				  loss_severity(ctx, event_pct, lossy_pct), 1.0);
	if (!finding)
		return PO_STATUS_NOMEM;
	finding->confidence = 1.0; /* the loss itself is certain */
	det_summary(ctx, finding,
		    "The trace lost data: %lld events discarded (%.2f%%), %lld packets, %lld "
		    "windows of unknown size, %lld windows missing from its files (streams "
		    "cut short), %lld unmatched spans; %lld of %zu steps overlap a loss and are "
		    "kept out of every verdict, and the other findings carry less confidence.",
		    (long long)quality->discarded_events, event_pct,
		    (long long)quality->discarded_packets, (long long)quality->unknown_discards,
		    (long long)quality->missing_windows, (long long)unmatched,
		    (long long)quality->lossy_steps, ctx->analysis->step_count);
	if (quality->gpu_records_dropped > 0)
		det_summary(ctx, finding,
			    "The trace lost data: the CUPTI collector dropped %lld GPU activity "
			    "records, so GPU busy time is a lower bound; the tracer discarded %lld "
			    "events (%.2f%%) and %lld packets, %lld windows of unknown size, %lld "
			    "windows are missing from its files, %lld spans are unmatched; %lld of "
			    "%zu steps overlap a loss.",
			    (long long)quality->gpu_records_dropped,
			    (long long)quality->discarded_events, event_pct,
			    (long long)quality->discarded_packets,
			    (long long)quality->unknown_discards,
			    (long long)quality->missing_windows, (long long)unmatched,
			    (long long)quality->lossy_steps, ctx->analysis->step_count);
	add_evidence(ctx, finding, event_pct, lossy_pct);
	add_windows(ctx, finding);
	if (quality->gpu_records_dropped > 0)
		det_recommend(ctx, finding, PO_KNOB_CUPTI_BUFFERS,
			      "give the GPU collector larger buffers or flush them more often: "
			      "PROFOPT_CUPTI_BUFFER_KB=32768 PROFOPT_CUPTI_FLUSH_MS=100",
			      "CUPTI drops activity records when its buffers fill before the "
			      "collector flushes them",
			      "a complete GPU timeline; no change to the step time", NAN, NAN);
	if (quality->discarded_events > 0 || quality->discarded_packets > 0 ||
	    quality->unknown_discards > 0)
		det_recommend(ctx, finding, PO_KNOB_TRACE_BUFFERS,
			      "record with larger buffers than the defaults (4M x 8): "
			      "profopt-record --subbuf-size 8M --num-subbuf 16",
			      "events are dropped when the tracer's ring buffers fill faster than "
			      "the consumer empties them",
			      "a complete trace; no change to the step time", NAN, NAN);
	return PO_STATUS_OK;
}
