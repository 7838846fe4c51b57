/*
 * ranks_words.c: the sentences about a distributed job's ranks that index.html and
 * report.pdf both print (the straggler, a host's clock), from the result's fields
 * (model/distributed.h).
 */
#include <stdio.h>
#include <string.h>

#include "report_priv.h"

static const char *const straggler_cause_names[] = {
#define PO_X(name, json) json,
    PO_STRAGGLER_CAUSES(PO_X)
#undef PO_X
};

void po_report_straggler_sentence(const struct po_distributed *d, char *text, size_t size)
{
	const struct po_straggler *s = &d->straggler;

	char missing[256];

	if (d->missing_rank_count > 0)
		po_distributed_missing_words(d, missing, sizeof(missing));
	if (!s->present && d->missing_rank_count > 0) {
		po_distributed_missing_sentence(d, text, size);
		return;
	}
	if (!s->present) {
		snprintf(text, size,
			 "No straggler: no rank makes the others wait at the collectives (%zu "
			 "steps matched).",
			 d->step_count);
		return;
	}
	snprintf(text, size,
		 "Straggler: rank %d (%s), last in %.1f%% of the steps; cause %s; the others wait "
		 "%.3f ms per step, the job loses %.3f ms per step.",
		 (int)s->rank, s->chronic ? "chronic" : "occasional", s->last_pct,
		 (unsigned)s->cause < PO_STRAGGLER_CAUSE_COUNT ? straggler_cause_names[s->cause]
							       : "?",
		 s->others_wait_ns_per_step / 1e6, s->lost_ns_per_step / 1e6);
	if (d->missing_rank_count > 0) {
		size_t used = strlen(text);

		if (used < size)
			snprintf(text + used, size - used, " Of the present ranks only: %s.",
				 missing);
	}
}

void po_report_clock_sentence(const struct po_distributed *d, size_t host, char *text, size_t size)
{
	snprintf(text, size,
		 "Clock of %s: %+.3f ms from %s's (residual %.3f ms over %lld collectives).",
		 d->hosts[host].host ? d->hosts[host].host : "?", d->hosts[host].offset_ns / 1e6,
		 d->hosts[0].host ? d->hosts[0].host : "?", d->hosts[host].residual_ns / 1e6,
		 (long long)d->hosts[host].samples);
}
