/*
 * snapshot.c: a consistent result of everything a model consumed so far, built without
 * changing the model, so that consuming can go on after it (a live view, a periodic
 * summary of a long run).
 *
 * Finishing a model closes its open spans, flushes its reorder buffers and hands its
 * strings and steps to the analysis: the result of a finish cannot be had twice. A snapshot
 * therefore finishes a copy: fork() gives one of the whole model, copy-on-write, in the time
 * it takes to copy the page tables (0.1 ms for a process holding 1 GiB, measured here).
 * The copy finishes, hands the analysis to the caller's function, and exits; the step
 * store's file is the only thing the two processes share, and the copy writes the steps it
 * changes to a file of its own (po_step_store_privatize). The caller waits for the copy, so
 * the model does not change while the copy reads the shared file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model_internal.h"

/* What the copy sends back: its status, then its message. */
struct snapshot_reply {
	int32_t status;
	char message[PO_ERROR_MAX];
};

static void write_all(int fd, const void *bytes, size_t size)
{
	size_t done = 0;

	while (done < size) {
		ssize_t moved = write(fd, (const char *)bytes + done, size - done);

		if (moved < 0 && errno == EINTR)
			continue;
		if (moved <= 0)
			return;
		done += (size_t)moved;
	}
}

static size_t read_all(int fd, void *bytes, size_t size)
{
	size_t done = 0;

	while (done < size) {
		ssize_t moved = read(fd, (char *)bytes + done, size - done);

		if (moved < 0 && errno == EINTR)
			continue;
		if (moved <= 0)
			break;
		done += (size_t)moved;
	}
	return done;
}

/* In the copy: finish, call fn, report, exit without running the program's exit handlers. */
static void __attribute__((noreturn))
snapshot_child(struct po_model *model, int reply_fd, po_snapshot_fn fn, void *context)
{
	struct snapshot_reply reply = {.status = PO_STATUS_OK};
	struct po_error err = {{0}};
	struct po_analysis *analysis = NULL;
	enum po_status status;

	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the caller */
	po_step_store_privatize(model->loop.steps);
	status = po_model_finish(model, &analysis, &err);
	if (status == PO_STATUS_OK)
		status = fn(analysis, context, &err);
	reply.status = (int32_t)status;
	memcpy(reply.message, err.message, sizeof(reply.message));
	write_all(reply_fd, &reply, sizeof(reply));
	_exit(0);
}

enum po_status po_model_snapshot(struct po_model *model, int64_t steps_after_ns, po_snapshot_fn fn,
				 void *context, struct po_error *err)
{
	struct snapshot_reply reply = {.status = PO_STATUS_INTERNAL};
	int fds[2], wait_status = 0;
	size_t got;
	pid_t pid;

	if (model->finished) {
		po_error_set(err, "Failed to take a snapshot: the model was finished already");
		return PO_STATUS_INTERNAL;
	}
	if (pipe2(fds, O_CLOEXEC) != 0) {
		po_error_set(err, "Failed to take a snapshot: pipe: %s", strerror(errno));
		return PO_STATUS_INTERNAL;
	}
	pid = fork();
	if (pid < 0) {
		int error = errno;

		close(fds[0]);
		close(fds[1]);
		po_error_set(err, "Failed to take a snapshot: fork: %s", strerror(error));
		return error == ENOMEM ? PO_STATUS_NOMEM : PO_STATUS_INTERNAL;
	}
	if (pid == 0) {
		close(fds[0]);
		model->config.steps_after_ns = steps_after_ns; /* the copy's own */
		snapshot_child(model, fds[1], fn, context);
	}
	close(fds[1]);
	got = read_all(fds[0], &reply, sizeof(reply));
	close(fds[0]);
	while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR)
		;
	if (got != sizeof(reply)) {
		if (WIFSIGNALED(wait_status))
			po_error_set(err, "The snapshot's process ended by signal %d (%s)",
				     WTERMSIG(wait_status), strsignal(WTERMSIG(wait_status)));
		else
			po_error_set(err, "The snapshot's process ended without a result");
		return PO_STATUS_INTERNAL;
	}
	if (reply.status != PO_STATUS_OK) {
		reply.message[sizeof(reply.message) - 1] = '\0';
		po_error_set(err, "%s", reply.message);
	}
	return (enum po_status)reply.status;
}
