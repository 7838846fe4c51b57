/*
 * membership.c: which processes belong to the recorded command.
 *
 * A trace recorded by profopt-record holds every instrumented process of the machine's
 * user that ran during it (the buffers are per user, the events enabled for all). Each
 * process announces itself (profopt:process) before its first other profopt event, with
 * the recording id it inherited from profopt-record (PROFOPT_RECORDING) and its parent.
 * A process belongs when its id is the recording's, or when it has no id (a child started
 * with a cleared environment) and its parent belongs or is the command itself. Everything
 * else is left out and listed: another recording's processes, and processes outside any.
 *
 * A process that emits profopt events without having announced itself in this recording is
 * left out: it announced before the recording started (a program already running), or its
 * libprofopt predates the announcement (then every process is left out, and the error says
 * to use --all-processes). When packets are missing from the trace (streams cut short,
 * damaged packets --salvage left out: config.keep_unannounced), its announcement may have
 * been in one of them: it is kept, and counted. One that announces later is taken back; the
 * events it emitted before are lost to the analysis and counted. Non-profopt events (the
 * libc wrapper, lttng-ust's object state dumps) of a process not yet announced are kept: a
 * process loads libprofopt after it started allocating. A trace without a recording id
 * (recorded with plain lttng, or by an older profopt-record) keeps every process. A
 * directory of several recordings (one per host) applies each recording's id to the
 * processes of its own pid space (config.recordings): two recordings made through one
 * session daemon each hold the other's processes too, left out of each.
 */
#include <string.h>

#include "model_internal.h"

/* The membership states kept in the map (value). */
enum {
	MEMBER_UNKNOWN = 0,
	MEMBER_IN,
	MEMBER_OUT, /* reason in the excluded list */
};

#define EXCLUDED_KEPT 1000

static bool str_equals(struct po_str text, const char *value)
{
	size_t length = strlen(value);

	return text.len == length && (length == 0 || memcmp(text.ptr, value, length) == 0);
}

static int state_of(const struct po_model *model, int32_t pid)
{
	const struct po_map_entry *entry = po_map_find(&model->membership, (uint32_t)pid, 0);

	return entry ? (int)entry->value : MEMBER_UNKNOWN;
}

static bool set_state(struct po_model *model, int32_t pid, int state)
{
	bool created;
	struct po_map_entry *entry = po_map_upsert(&model->membership, (uint32_t)pid, 0, &created);

	if (!entry)
		return false;
	entry->value = (uint64_t)state;
	return true;
}

/* A process left out as unannounced announced itself after all: it is not left out. */
static void take_back(struct po_model *model, int32_t pid)
{
	for (size_t i = model->excluded_count; i-- > 0;) {
		if (model->excluded[i].pid != pid)
			continue;
		if (model->excluded[i].reason == PO_EXCLUDED_NO_ANNOUNCEMENT) {
			model->quality.late_announced_events += model->excluded[i].events;
			model->quality.excluded_events -= model->excluded[i].events;
			memmove(&model->excluded[i], &model->excluded[i + 1],
				(model->excluded_count - i - 1) * sizeof(*model->excluded));
			model->excluded_count--;
			model->quality.excluded_processes--;
		}
		return;
	}
}

/* The excluded entry of pid (the last one made for it), or a new one; NULL past the cap. */
static struct po_excluded_process *excluded_entry(struct po_model *model, int32_t pid, bool fresh)
{
	if (!fresh) {
		for (size_t i = model->excluded_count; i-- > 0;)
			if (model->excluded[i].pid == pid)
				return &model->excluded[i];
	}
	model->quality.excluded_processes++;
	if (model->excluded_count >= EXCLUDED_KEPT)
		return NULL;
	if (po_array_reserve((void **)&model->excluded, &model->excluded_capacity,
			     model->excluded_count + 1, sizeof(*model->excluded)) != PO_STATUS_OK) {
		model->deferred = PO_STATUS_NOMEM;
		return NULL;
	}
	model->excluded[model->excluded_count] = (struct po_excluded_process){.pid = pid};
	return &model->excluded[model->excluded_count++];
}

static void exclude(struct po_model *model, const struct po_event *event,
		    enum po_excluded_reason reason)
{
	/*
	 * A process already left out (its events came before its announcement, or it
	 * announced twice) keeps its one entry, with the announcement's reason: it is one
	 * process, listed and counted once.
	 */
	bool known = state_of(model, event->pid) == MEMBER_OUT;
	struct po_excluded_process *entry;

	if (!set_state(model, event->pid, MEMBER_OUT)) {
		model->deferred = PO_STATUS_NOMEM;
		return;
	}
	entry = excluded_entry(model, event->pid, !known);
	if (!entry)
		return;
	entry->reason = reason;
	if (!known)
		entry->first_ns = event->time_ns;
	if (event->procname.len)
		entry->name =
		    po_strtab_intern(model->strings, event->procname.ptr, event->procname.len);
}

static void count_excluded(struct po_model *model, const struct po_event *event)
{
	struct po_excluded_process *entry;

	model->quality.excluded_events++;
	if (model->excluded_count && model->excluded[model->excluded_count - 1].pid == event->pid)
		entry = &model->excluded[model->excluded_count - 1];
	else
		entry = excluded_entry(model, event->pid, false);
	if (entry)
		entry->events++;
}

/*
 * The recording a pid belongs to: its id (empty: every process of it is kept) and its
 * command's pid in the analysis's pid space (-1).
 */
static const char *recording_of(const struct po_model *model, int32_t pid, int32_t *command_pid)
{
	const struct po_model_config *config = &model->config;
	uint32_t k = (uint32_t)pid >> PO_RECORDING_PID_SHIFT;

	if (!config->recording_count) {
		*command_pid = config->command_pid;
		return config->recording_id;
	}
	if (pid < 0 || k >= config->recording_count) {
		*command_pid = -1;
		return "";
	}
	*command_pid =
	    config->recordings[k].command_pid >= 0
		? config->recordings[k].command_pid + (int32_t)(k << PO_RECORDING_PID_SHIFT)
		: -1;
	return config->recordings[k].id;
}

static void on_announcement(struct po_model *model, const struct po_event *event)
{
	int32_t command_pid;
	const char *recording = recording_of(model, event->pid, &command_pid);
	int32_t parent = event->u.process.parent_pid;
	bool in;

	model->any_announced = true;
	if (str_equals(event->u.process.recording, recording)) {
		in = true;
	} else if (event->u.process.recording.len) {
		exclude(model, event, PO_EXCLUDED_OTHER_RECORDING);
		return;
	} else {
		in = parent >= 0 && ((command_pid >= 0 && parent == command_pid) ||
				     state_of(model, parent) == MEMBER_IN);
	}
	if (!in) {
		exclude(model, event, PO_EXCLUDED_OUTSIDE_COMMAND);
		return;
	}
	if (state_of(model, event->pid) == MEMBER_OUT)
		take_back(model, event->pid);
	if (!set_state(model, event->pid, MEMBER_IN))
		model->deferred = PO_STATUS_NOMEM;
}

bool model_admits(struct po_model *model, const struct po_event *event)
{
	int32_t command_pid;
	int state;

	if (event->pid < 0 || !recording_of(model, event->pid, &command_pid)[0])
		return true;
	if (event->kind == PO_EV_PROCESS) {
		on_announcement(model, event);
		if (state_of(model, event->pid) == MEMBER_IN)
			return true;
		count_excluded(model, event);
		return false;
	}
	state = state_of(model, event->pid);
	if (state == MEMBER_IN)
		return true;
	if (state == MEMBER_OUT) {
		count_excluded(model, event);
		return false;
	}
	/* Not announced: its non-profopt events are kept. */
	if (event->kind >= PO_EV_LIBC_MALLOC)
		return true;
	if (model->config.keep_unannounced) { /* its announcement may be in a packet left out */
		if (!set_state(model, event->pid, MEMBER_IN))
			model->deferred = PO_STATUS_NOMEM;
		model->quality.unannounced_kept++;
		return true;
	}
	exclude(model, event, PO_EXCLUDED_NO_ANNOUNCEMENT);
	count_excluded(model, event);
	return false;
}

int64_t po_model_excluded_processes(const struct po_model *model)
{
	return model->quality.excluded_processes;
}
