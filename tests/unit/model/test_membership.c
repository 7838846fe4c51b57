/*
 * test_membership.c: only the recorded command's processes are analysed (membership.c):
 * its own, its children with or without the recording id, never another recording's or
 * a process outside any; a late announcement takes a process back.
 */
#include "builder.h"

#define RECORDING "00112233445566778899aabbccddeeff"
enum { COMMAND = 50, MAIN = 100, WORKER = 200, GRANDCHILD = 250, OTHER = 300, OUTSIDE = 400 };

static void announce(struct po_model *model, int64_t t, int32_t pid, const char *recording,
		     int32_t parent)
{
	struct po_event event = event_at(PO_EV_PROCESS, t, pid, pid);

	event.u.process.recording = str_of(recording);
	event.u.process.parent_pid = parent;
	event.u.process.reason = 0;
	feed(model, &event);
}

static struct po_model *recording_model(void)
{
	struct po_model_config config;

	po_model_config_init(&config);
	snprintf(config.recording_id, sizeof(config.recording_id), "%s", RECORDING);
	config.command_pid = COMMAND;
	return model_new(&config);
}

/* Two steps of pid, a worker batch of worker; times from t. */
static void run(struct po_model *model, int64_t t, int32_t pid, int32_t worker)
{
	worker_begin(model, t, worker, 0, pid);
	stage_begin(model, t + 1 * MS, worker, worker, PO_STAGE_LOAD, "load", 0);
	stage_end(model, t + 3 * MS, worker, worker, PO_STAGE_LOAD, 0);
	for (int i = 0; i < 2; i++) {
		step_begin(model, t + (10 + 10 * i) * MS, pid, pid, i);
		step_end(model, t + (19 + 10 * i) * MS, pid, pid, i);
	}
}

static const struct po_excluded_process *excluded(const struct po_analysis *analysis, int32_t pid)
{
	for (size_t i = 0; i < analysis->excluded_process_count; i++)
		if (analysis->excluded_processes[i].pid == pid)
			return &analysis->excluded_processes[i];
	return NULL;
}

static bool analysed(const struct po_analysis *analysis, int32_t pid)
{
	for (size_t i = 0; i < analysis->process_count; i++)
		if (analysis->processes[i].pid == pid)
			return true;
	return false;
}

static void keeps_only_the_command(void)
{
	struct po_model *model = recording_model();
	struct po_analysis *analysis;
	const struct po_excluded_process *entry;

	announce(model, 0, OUTSIDE, "", 1); /* a program outside any recording */
	announce(model, 1, OTHER, "ffffffffffffffffffffffffffffffff", 7); /* another recording */
	announce(model, 2, MAIN, RECORDING, COMMAND);
	announce(model, 3, WORKER, RECORDING, MAIN);
	announce(model, 4, GRANDCHILD, "", WORKER); /* environment cleared: its parent is in */
	run(model, 5 * MS, OTHER, OTHER + 1);
	run(model, 5 * MS, OUTSIDE, OUTSIDE + 1);
	run(model, 6 * MS, MAIN, WORKER);
	counter(model, 40 * MS, GRANDCHILD, PO_COUNTER_HOST_RSS, -1, 1 << 20);
	analysis = model_done(model);

	CHECK_INT_EQ(analysis->step_count, 2);
	CHECK_INT_EQ(analysis->main_pid, MAIN);
	CHECK(analysed(analysis, MAIN) && analysed(analysis, WORKER) &&
	      analysed(analysis, GRANDCHILD));
	CHECK(!analysed(analysis, OTHER) && !analysed(analysis, OUTSIDE));
	CHECK((entry = excluded(analysis, OTHER)) && entry->reason == PO_EXCLUDED_OTHER_RECORDING &&
	      entry->events == 5);
	CHECK((entry = excluded(analysis, OUTSIDE)) &&
	      entry->reason == PO_EXCLUDED_OUTSIDE_COMMAND && entry->events == 5);
	/* OTHER+1 and OUTSIDE+1 never announced in this recording */
	CHECK((entry = excluded(analysis, OTHER + 1)) &&
	      entry->reason == PO_EXCLUDED_NO_ANNOUNCEMENT && entry->events == 3);
	CHECK_INT_EQ(analysis->quality.excluded_processes, 4);
	CHECK_INT_EQ(analysis->quality.excluded_events, 5 + 5 + 3 + 3); /* announcements included */
	CHECK(analysis->quality.recording_known && !analysis->quality.recording_unannounced);
	CHECK(find_warning(analysis, "other-processes") != NULL);
	po_analysis_destroy(analysis);
}

static void late_announcement_and_pid_reuse(void)
{
	struct po_model *model = recording_model();
	struct po_analysis *analysis;

	libc_call(model, PO_EV_LIBC_MALLOC, 1, MAIN, 0x1000, 0, 64, 0, 0xAA); /* kept */
	step_begin(model, 2, MAIN, MAIN, 0); /* before the announcement: left out */
	announce(model, 3, MAIN, RECORDING, COMMAND);
	step_begin(model, 10 * MS, MAIN, MAIN, 1);
	step_end(model, 20 * MS, MAIN, MAIN, 1);
	/* the pid of MAIN taken over by a program outside the recording */
	announce(model, 30 * MS, MAIN, "", 1);
	step_begin(model, 31 * MS, MAIN, MAIN, 2);
	step_end(model, 40 * MS, MAIN, MAIN, 2);
	analysis = model_done(model);

	CHECK_INT_EQ(analysis->step_count, 1);
	CHECK_INT_EQ(analysis->quality.late_announced_events, 1);
	CHECK_INT_EQ(analysis->quality.excluded_processes, 1);
	CHECK(analysis->excluded_process_count == 1 &&
	      analysis->excluded_processes[0].reason == PO_EXCLUDED_OUTSIDE_COMMAND);
	CHECK(analysis->quality.libc_events == 1);
	CHECK(find_warning(analysis, "late-announcement") != NULL);
	po_analysis_destroy(analysis);
}

/*
 * Another recording's process whose first events come before its announcement, and which
 * announces twice (two threads can race to announce): one process, listed and counted
 * once, with the announcement's reason and all its events.
 */
static void excluded_once(void)
{
	struct po_model *model = recording_model();
	struct po_analysis *analysis;
	const struct po_excluded_process *other;

	announce(model, 1, MAIN, RECORDING, COMMAND);
	step_begin(model, 2 * MS, OTHER, OTHER, 0);
	announce(model, 3 * MS, OTHER, "ffffffffffffffffffffffffffffffff", 7);
	announce(model, 4 * MS, OTHER, "ffffffffffffffffffffffffffffffff", 7);
	step_end(model, 5 * MS, OTHER, OTHER, 0);
	announce(model, 6 * MS, WORKER, RECORDING, MAIN);
	run(model, 10 * MS, MAIN, WORKER);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->quality.excluded_processes, 1);
	CHECK_INT_EQ(analysis->excluded_process_count, 1);
	other = excluded(analysis, OTHER);
	CHECK(other != NULL && other->reason == PO_EXCLUDED_OTHER_RECORDING);
	CHECK(other != NULL && other->events == 4 && other->first_ns == 2 * MS);
	CHECK_INT_EQ(analysis->step_count, 2);
	po_analysis_destroy(analysis);
}

static void no_recording_keeps_everything(void)
{
	struct po_model *model = model_new(NULL);
	struct po_analysis *analysis;

	announce(model, 1, OTHER, "ffffffffffffffffffffffffffffffff", 7);
	run(model, 5 * MS, OTHER, OTHER + 1);
	analysis = model_done(model);
	CHECK_INT_EQ(analysis->step_count, 2);
	CHECK_INT_EQ(analysis->quality.excluded_processes, 0);
	CHECK(!analysis->quality.recording_known);
	po_analysis_destroy(analysis);
}

static void nothing_announced(void)
{
	struct po_model *model = recording_model();
	struct po_analysis *analysis = NULL;
	struct po_error err = {{0}};

	run(model, 5 * MS, MAIN, WORKER); /* a libprofopt that predates the announcement */
	CHECK(po_model_finish(model, &analysis, &err) == PO_STATUS_INPUT);
	CHECK_INT_EQ(po_model_excluded_processes(model), 2);
	po_model_destroy(model);
}

int main(void)
{
	RUN(keeps_only_the_command);
	RUN(late_announcement_and_pid_reuse);
	RUN(excluded_once);
	RUN(no_recording_keeps_everything);
	RUN(nothing_announced);
	return CHECK_SUMMARY();
}
