/*
 * test_corpus_cases.c: po_ingest_run() on chosen traces of the babeltrace2 CTF corpus:
 * discarded events and packets become typed events, and --salvage leaves a failing trace
 * out while every event of the good one is delivered exactly once.
 */
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ingest/ingest.h"

static const char *corpus;

struct tally {
	int64_t per_trace[4];
	int64_t total;
	struct po_event last_discarded;
	int64_t discarded;
};

static enum po_status on_event(void *ctx, const struct po_event *event)
{
	struct tally *tally = ctx;

	tally->total++;
	if (event->trace_id < 4)
		tally->per_trace[event->trace_id]++;
	if (event->kind == PO_EV_DISCARDED_EVENTS || event->kind == PO_EV_DISCARDED_PACKETS) {
		tally->last_discarded = *event;
		tally->discarded++;
	}
	return PO_STATUS_OK;
}

static enum po_status decode(const char *path, bool salvage, struct tally *tally,
			     struct po_ingest_stats *stats, struct po_error *err)
{
	struct po_ingest_options options = {.salvage = salvage};

	memset(tally, 0, sizeof(*tally));
	memset(err, 0, sizeof(*err));
	return po_ingest_run(path, &options, on_event, tally, stats, err);
}

static void test_discarded_packets(void)
{
	char path[1024];
	struct po_ingest_stats stats;
	struct po_error err;
	struct tally tally;

	snprintf(path, sizeof(path), "%s/packet-seq-num/2-lost-before-last", corpus);
	CHECK_INT_EQ(decode(path, false, &tally, &stats, &err), PO_STATUS_OK);
	CHECK_INT_EQ(tally.discarded, 1);
	CHECK_INT_EQ(tally.last_discarded.kind, PO_EV_DISCARDED_PACKETS);
	CHECK_INT_EQ(tally.last_discarded.u.discarded.count, 2);
	CHECK(tally.last_discarded.u.discarded.begin_ns >= 0);
	CHECK(tally.last_discarded.time_ns > tally.last_discarded.u.discarded.begin_ns);
	CHECK_INT_EQ(tally.last_discarded.pid, -1);
	CHECK_INT_EQ(stats.discarded_messages, 1);
	CHECK_INT_EQ(stats.profopt_events, 0);
}

static void test_discarded_events_without_times(void)
{
	char path[1024];
	struct po_ingest_stats stats;
	struct po_error err;
	struct tally tally;

	snprintf(path, sizeof(path), "%s/succeed/ev-disc-no-ts-begin-end", corpus);
	CHECK_INT_EQ(decode(path, false, &tally, &stats, &err), PO_STATUS_OK);
	CHECK_INT_EQ(tally.discarded, 1);
	CHECK_INT_EQ(tally.last_discarded.kind, PO_EV_DISCARDED_EVENTS);
	CHECK_INT_EQ(tally.last_discarded.u.discarded.count, 17);
	CHECK_INT_EQ(tally.last_discarded.u.discarded.begin_ns, -1);
	CHECK_INT_EQ(tally.last_discarded.time_ns, -1);
}

/* A directory with a good trace (a/, 3 events, one discarded-packets
 * message) and one that fails in the middle (b/). */
static bool make_mixed(char *dir, size_t size)
{
	char command[4096];

	snprintf(dir, size, "/tmp/profopt-salvage.XXXXXX");
	if (!mkdtemp(dir))
		return false;
	snprintf(command, sizeof(command),
		 "cp -r '%s/packet-seq-num/2-lost-before-last' '%s/a' && "
		 "cp -r '%s/fail/valid-events-then-invalid-events/trace' '%s/b'",
		 corpus, dir, corpus, dir);
	return system(command) == 0;
}

static void test_salvage(void)
{
	char dir[256], command[300];
	struct po_ingest_stats stats;
	struct po_error err;
	struct tally tally;

	CHECK(make_mixed(dir, sizeof(dir)));
	CHECK_INT_EQ(decode(dir, false, &tally, &stats, &err), PO_STATUS_DECODE);
	CHECK(strstr(err.message, "Failed to decode trace: path=") == err.message);
	CHECK(strstr(err.message, "/b: ") != NULL);
	CHECK(strchr(err.message, '\n') == NULL);
	fprintf(stderr, "  %s\n", err.message);

	CHECK_INT_EQ(decode(dir, true, &tally, &stats, &err), PO_STATUS_OK);
	CHECK(stats.partial);
	CHECK_INT_EQ(stats.skipped_traces, 1);
	/* The note goes into reports: the trace is named relative to the directory given. */
	CHECK(strstr(stats.skipped_note, "skipped trace path=b: ") == stats.skipped_note);
	CHECK(strstr(stats.skipped_note, dir) == NULL);
	CHECK_INT_EQ(stats.trace_count, 2);
	/* What the good trace delivers (its discarded-packets message) comes once, and its
	 * events are counted once, though its graph ran again after the failure. */
	CHECK_INT_EQ(tally.per_trace[0], 1);
	CHECK_INT_EQ(stats.events, 3);
	fprintf(stderr, "  %s (events: %lld of a, %lld of b, %lld in all)\n", stats.skipped_note,
		(long long)tally.per_trace[0], (long long)tally.per_trace[1],
		(long long)tally.total);
	snprintf(command, sizeof(command), "rm -rf '%s'", dir);
	CHECK(system(command) == 0);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	corpus = argv[1];
	RUN(test_discarded_packets);
	RUN(test_discarded_events_without_times);
	RUN(test_salvage);
	return CHECK_SUMMARY();
}
