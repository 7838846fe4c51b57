/*
 * ranks_text.c: the ranks of a distributed job in the stdout summary: one line per rank
 * and the straggler, or "no straggler"; printed only for a recording with ranks. Every
 * number is a field of the result (model/distributed.h).
 */
#include <math.h>
#include <stdio.h>

#include "json_names.h"
#include "render_json.h"
#include "common/text.h"

static const char *const straggler_cause_names[] = {
#define PO_X(name, json) json,
    PO_STRAGGLER_CAUSES(PO_X)
#undef PO_X
};

/* ns as milliseconds with 3 decimals in width columns; "-" when unknown. */
static void put_ms(FILE *out, double ns, int width)
{
	if (isnan(ns))
		fprintf(out, " %*s", width, "-");
	else
		fprintf(out, " %*.3f", width, ns / 1e6);
}

static void print_rank(const struct po_rank_summary *rank, FILE *out)
{
	const char *host = rank->host ? rank->host : "?";

	fprintf(out, "  %4d %-16.*s %6lld", (int)rank->rank, po_text_precision(host, 16), host,
		(long long)rank->steady_steps);
	put_ms(out, rank->mean_step_ns, 10);
	put_ms(out, rank->steady_steps ? rank->category_mean_ns[PO_CAT_DATA_WAIT] : NAN, 10);
	put_ms(out, rank->steady_steps ? rank->category_mean_ns[PO_CAT_FORWARD] : NAN, 10);
	put_ms(out, rank->steady_steps ? rank->category_mean_ns[PO_CAT_BACKWARD] : NAN, 10);
	put_ms(out, rank->collective_ns_per_step, 10);
	put_ms(out, rank->wait_ns_per_step, 10);
	if (isnan(rank->last_pct))
		fprintf(out, " %6s\n", "-");
	else
		fprintf(out, " %5.1f%%\n", rank->last_pct);
}

static void print_straggler(const struct po_distributed *d, FILE *out)
{
	const struct po_straggler *s = &d->straggler;

	char missing[256];

	if (d->missing_rank_count > 0)
		po_distributed_missing_words(d, missing, sizeof(missing));
	if (!s->present && d->missing_rank_count > 0) {
		char sentence[640];

		po_distributed_missing_sentence(d, sentence, sizeof(sentence));
		fprintf(out, "  %s\n", sentence);
		return;
	}
	if (!s->present) {
		fprintf(out,
			"  No straggler: no rank makes the others wait at the collectives "
			"(%zu steps matched).\n",
			d->step_count);
		return;
	}
	fprintf(out,
		"  Straggler: rank %d (%s), last in %.1f%% of the steps; cause %s (%s +%.3f ms "
		"per step); the others wait %.3f ms per step, the job loses %.3f ms per step\n",
		(int)s->rank, s->chronic ? "chronic" : "occasional", s->last_pct,
		(unsigned)s->cause < PO_STRAGGLER_CAUSE_COUNT ? straggler_cause_names[s->cause]
							      : "?",
		po_json_category_name(s->cause_category), s->cause_excess_ns / 1e6,
		s->others_wait_ns_per_step / 1e6, s->lost_ns_per_step / 1e6);
	if (d->missing_rank_count > 0)
		fprintf(out, "  Of the present ranks only: %s.\n", missing);
}

void po_render_ranks_text(const struct po_analysis *analysis, FILE *out)
{
	const struct po_distributed *d = analysis->distributed;

	if (!d)
		return;
	fprintf(out, "Ranks (%zu of world size %d), per steady step in ms:\n", d->rank_count,
		(int)d->world_size);
	fprintf(out, "  %4s %-16s %6s %10s %10s %10s %10s %10s %10s %6s\n", "rank", "host", "steps",
		"step", "data_wait", "forward", "backward", "collective", "waiting", "last");
	for (size_t i = 0; i < d->rank_count; i++)
		print_rank(&d->ranks[i], out);
	for (size_t i = 1; i < d->host_count; i++)
		fprintf(
		    out,
		    "  Clock of %s: %+.3f ms from %s's (residual %.3f ms over %lld collectives)\n",
		    d->hosts[i].host ? d->hosts[i].host : "?", d->hosts[i].offset_ns / 1e6,
		    d->hosts[0].host ? d->hosts[0].host : "?", d->hosts[i].residual_ns / 1e6,
		    (long long)d->hosts[i].samples);
	print_straggler(d, out);
}
