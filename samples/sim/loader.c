/*
 * loader.c: the simulated data loader. Like PyTorch's DataLoader, batch first + i is made by
 * worker i % N; each worker has at most --prefetch requests outstanding, and the main
 * process takes batches strictly in order. Requests and finished batch indexes travel
 * through one pipe pair per worker; the number of batches ready and not yet taken lives in
 * a shared counter, so both sides can report it. A loader serves one epoch (new workers
 * every epoch, --persistent-workers 0) or the whole run. Taking a ready batch costs the main
 * process --handoff-ms of CPU (unpickling); with --kill-workers the workers are given one more
 * batch at the end and killed in the middle of its load.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profopt.h"
#include "sim.h"

#define MAX_WORKERS 64

struct worker_handle {
	pid_t pid;	/* 0 when not started or already reaped */
	int request_fd; /* write end: batch indexes to make; -1 when closed */
	int result_fd;	/* read end: batch indexes made; -1 when closed */
};

struct sim_loader {
	const struct sim_options *opts; /* weak: belongs to main() */
	int64_t worker_count;
	int64_t first_batch; /* the first batch this loader serves */
	int64_t batch_count; /* one past the last batch it requests */
	struct worker_handle workers[MAX_WORKERS];
	_Atomic int64_t *ready_count; /* owned: a shared mapping, batches ready and not taken */
	struct sim_random rng;	      /* for loading in the main process */
};

static PO_NODISCARD int write_all(int fd, const void *buf, size_t size)
{
	const char *p = buf;

	while (size > 0) {
		ssize_t done = write(fd, p, size);

		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			return -1;
		p += done;
		size -= (size_t)done;
	}
	return 0;
}

/* Returns 1 when read, 0 at end of file, -1 on error. */
static PO_NODISCARD int read_all(int fd, void *buf, size_t size)
{
	char *p = buf;

	while (size > 0) {
		ssize_t done = read(fd, p, size);

		if (done < 0 && errno == EINTR)
			continue;
		if (done < 0)
			return -1;
		if (done == 0)
			return p == (char *)buf ? 0 : -1;
		p += done;
		size -= (size_t)done;
	}
	return 1;
}

void sim_produce_batch(const struct sim_options *all, struct sim_random *rng, int64_t batch)
{
	const struct sim_options *opts = sim_options_at(all, batch);
	const char *load = sim_label(opts, "decode_jpeg");
	const char *preprocess = sim_label(opts, "random_crop");
	const char *collate = sim_label(opts, "default_collate");

	profopt_stage_begin(PROFOPT_STAGE_LOAD, load, batch, -1);
	sim_sleep(sim_jitter(rng, opts->load_ns, opts->jitter_pct));
	profopt_stage_end(PROFOPT_STAGE_LOAD, load, batch, -1);
	profopt_stage_begin(PROFOPT_STAGE_PREPROCESS, preprocess, batch, -1);
	sim_burn_cpu(sim_jitter(rng, opts->preprocess_ns, opts->jitter_pct));
	profopt_stage_end(PROFOPT_STAGE_PREPROCESS, preprocess, batch, -1);
	profopt_stage_begin(PROFOPT_STAGE_COLLATE, collate, batch, -1);
	sim_burn_cpu(sim_jitter(rng, opts->collate_ns, opts->jitter_pct));
	profopt_stage_end(PROFOPT_STAGE_COLLATE, collate, batch, -1);
	if (strcmp(opts->leak_in, "worker") == 0)
		sim_leak_host_memory(opts->leak_bytes);
}

/* The body of a worker process; returns its exit status. */
static int worker_main(struct sim_loader *loader, int64_t worker_id, int request_fd, int result_fd)
{
	struct sim_random rng;
	int64_t batch;
	int status = 0;

	profopt_worker_begin(worker_id);
	sim_sleep(loader->opts->worker_start_ns);
	sim_random_seed(&rng, loader->opts->seed, worker_id + 1 + loader->first_batch);
	while (read_all(request_fd, &batch, sizeof(batch)) == 1 && batch >= 0) {
		int64_t depth;

		sim_produce_batch(loader->opts, &rng, batch);
		depth = atomic_fetch_add(loader->ready_count, 1) + 1;
		if (write_all(result_fd, &batch, sizeof(batch)) != 0) {
			/* the main process has gone or stopped early: not an error of ours */
			status = errno == EPIPE ? 0 : 1;
			break;
		}
		profopt_batch_ready(batch, depth);
	}
	profopt_worker_end(worker_id);
	close(request_fd);
	close(result_fd);
	return status;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In a new worker: drops the pipe ends that belong to the main process and other workers. */
static void close_inherited(struct sim_loader *loader, int64_t worker_id)
{
	for (int64_t i = 0; i < worker_id; i++) {
		close_fd(&loader->workers[i].request_fd);
		close_fd(&loader->workers[i].result_fd);
	}
}

static PO_NODISCARD enum po_status start_worker(struct sim_loader *loader, int64_t worker_id,
						int *worker_exit_status, struct po_error *err)
{
	int request[2], result[2];
	pid_t pid;

	if (pipe(request) != 0 || pipe(result) != 0) {
		po_error_set(err, "Failed to create pipes for worker=%" PRId64 ": %s", worker_id,
			     strerror(errno));
		return PO_STATUS_INTERNAL;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		po_error_set(err, "Failed to fork worker=%" PRId64 ": %s", worker_id,
			     strerror(errno));
		return PO_STATUS_INTERNAL;
	}
	if (pid == 0) {
		close(request[1]);
		close(result[0]);
		close_inherited(loader, worker_id);
		*worker_exit_status = worker_main(loader, worker_id, request[0], result[1]);
		return PO_STATUS_OK;
	}
	close(request[0]);
	close(result[1]);
	loader->workers[worker_id] = (struct worker_handle){pid, request[1], result[0]};
	return PO_STATUS_OK;
}

static PO_NODISCARD enum po_status send_request(struct sim_loader *loader, int64_t batch,
						struct po_error *err)
{
	struct worker_handle *worker =
	    &loader->workers[(batch - loader->first_batch) % loader->worker_count];

	if (batch >= loader->batch_count)
		return PO_STATUS_OK;
	if (write_all(worker->request_fd, &batch, sizeof(batch)) != 0) {
		po_error_set(
		    err, "Failed to send a request: batch=%" PRId64 " worker=%" PRId64 ": %s",
		    batch, (batch - loader->first_batch) % loader->worker_count, strerror(errno));
		return PO_STATUS_INTERNAL;
	}
	return PO_STATUS_OK;
}

static PO_NODISCARD enum po_status start_workers(struct sim_loader *loader, int *worker_exit_status,
						 struct po_error *err)
{
	for (int64_t id = 0; id < loader->worker_count; id++) {
		if (start_worker(loader, id, worker_exit_status, err) != PO_STATUS_OK)
			return PO_STATUS_INTERNAL;
		if (*worker_exit_status >= 0)
			return PO_STATUS_OK;
	}
	/* In order, as DataLoader primes its workers: prefetch batches per worker. */
	for (int64_t i = 0; i < loader->worker_count * loader->opts->prefetch; i++) {
		if (send_request(loader, loader->first_batch + i, err) != PO_STATUS_OK)
			return PO_STATUS_INTERNAL;
	}
	return PO_STATUS_OK;
}

/* In a worker: frees its copy of the loader, whose pipe ends it has already closed or lost. */
static void release_in_worker(struct sim_loader *loader)
{
	munmap(loader->ready_count, sizeof(*loader->ready_count));
	free(loader);
}

enum po_status sim_loader_create(struct sim_loader **loader_out, const struct sim_options *opts,
				 int64_t first_batch, int64_t end_batch, int *worker_exit_status,
				 struct po_error *err)
{
	struct sim_loader *loader = calloc(1, sizeof(*loader));
	enum po_status status;

	*worker_exit_status = -1;
	if (!loader) {
		po_error_set(err, "Failed to allocate the data loader");
		return PO_STATUS_NOMEM;
	}
	/* A worker that dies must show up as a write error, in every process. */
	signal(SIGPIPE, SIG_IGN);
	loader->opts = opts;
	loader->worker_count = opts->workers;
	loader->first_batch = first_batch;
	/* Killed workers are still busy at the end: they load ahead past the last batch. */
	loader->batch_count = end_batch + (opts->kill_workers ? opts->workers * opts->prefetch : 0);
	for (int i = 0; i < MAX_WORKERS; i++)
		loader->workers[i] = (struct worker_handle){0, -1, -1};
	sim_random_seed(&loader->rng, opts->seed, 0);
	loader->ready_count = mmap(NULL, sizeof(*loader->ready_count), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (loader->ready_count == MAP_FAILED) {
		free(loader);
		po_error_set(err, "Failed to map the shared queue counter: %s", strerror(errno));
		return PO_STATUS_INTERNAL;
	}
	atomic_init(loader->ready_count, 0);
	*loader_out = loader;
	status = start_workers(loader, worker_exit_status, err);
	if (*worker_exit_status >= 0) {
		/* a worker that has finished: its copy of the loader is of no further use */
		release_in_worker(loader);
		*loader_out = NULL;
	}
	return status;
}

static PO_NODISCARD enum po_status receive(struct sim_loader *loader, int64_t batch,
					   struct po_error *err)
{
	int64_t worker_id = (batch - loader->first_batch) % loader->worker_count;
	int64_t received = -1;
	int got = read_all(loader->workers[worker_id].result_fd, &received, sizeof(received));

	if (got != 1) {
		po_error_set(err,
			     "Worker stopped before delivering its batch: worker=%" PRId64
			     " batch=%" PRId64,
			     worker_id, batch);
		return PO_STATUS_INTERNAL;
	}
	if (received != batch) {
		po_error_set(err,
			     "Worker delivered batches out of order: worker=%" PRId64
			     " expected=%" PRId64 " received=%" PRId64,
			     worker_id, batch, received);
		return PO_STATUS_INTERNAL;
	}
	atomic_fetch_sub(loader->ready_count, 1);
	return send_request(loader, batch + loader->worker_count * loader->opts->prefetch, err);
}

enum po_status sim_loader_next(struct sim_loader *loader, int64_t batch, struct po_error *err)
{
	const char *label = sim_label(loader->opts, "next_batch");
	enum po_status status = PO_STATUS_OK;

	profopt_counter(PROFOPT_COUNTER_QUEUE_DEPTH, PROFOPT_DEVICE_HOST,
			atomic_load(loader->ready_count));
	profopt_stage_begin(PROFOPT_STAGE_DATA_WAIT, label, batch, -1);
	if (loader->worker_count == 0) {
		sim_produce_batch(loader->opts, &loader->rng, batch);
		profopt_batch_ready(batch, -1);
	} else {
		status = receive(loader, batch, err);
		/* the batch was ready: taking it in (unpickling) is the main process's work */
		sim_burn_cpu(sim_options_at(loader->opts, batch)->handoff_ns);
	}
	profopt_stage_end(PROFOPT_STAGE_DATA_WAIT, label, batch, -1);
	return status;
}

static PO_NODISCARD enum po_status reap(struct worker_handle *worker, int64_t worker_id,
					struct po_error *err)
{
	int wstatus = 0;
	pid_t done;

	do {
		done = waitpid(worker->pid, &wstatus, 0);
	} while (done < 0 && errno == EINTR);
	worker->pid = 0;
	if (done < 0 || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
		po_error_set(err, "Worker failed: worker=%" PRId64 " %s=%d", worker_id,
			     done >= 0 && WIFSIGNALED(wstatus) ? "signal" : "status",
			     done >= 0 && WIFSIGNALED(wstatus) ? WTERMSIG(wstatus)
							       : WEXITSTATUS(wstatus));
		return PO_STATUS_INTERNAL;
	}
	return PO_STATUS_OK;
}

static void free_loader(struct sim_loader *loader)
{
	munmap(loader->ready_count, sizeof(*loader->ready_count));
	free(loader);
}

/*
 * Kills the workers in the middle of their loads, as a DataLoader ends workers that do not
 * stop in time: each gets one more batch to make, and is killed half-way into its load.
 */
static enum po_status kill_workers(struct sim_loader *loader)
{
	sim_sleep(loader->opts->load_ns * 3); /* the batches ahead are made by now */
	for (int64_t id = 0; id < loader->worker_count; id++) {
		int64_t batch = loader->batch_count + id;

		if (write_all(loader->workers[id].request_fd, &batch, sizeof(batch)) != 0)
			continue; /* a worker that has gone needs no killing */
	}
	sim_sleep(loader->opts->load_ns / 2);
	for (int64_t id = 0; id < loader->worker_count; id++) {
		if (loader->workers[id].pid > 0)
			kill(loader->workers[id].pid, SIGKILL);
	}
	for (int64_t id = 0; id < loader->worker_count; id++) {
		if (loader->workers[id].pid > 0)
			while (waitpid(loader->workers[id].pid, NULL, 0) < 0 && errno == EINTR)
				;
		close_fd(&loader->workers[id].request_fd);
		close_fd(&loader->workers[id].result_fd);
	}
	free_loader(loader);
	return PO_STATUS_OK;
}

enum po_status sim_loader_destroy(struct sim_loader *loader, struct po_error *err)
{
	enum po_status status = PO_STATUS_OK;

	if (!loader)
		return PO_STATUS_OK;
	if (loader->opts->kill_workers)
		return kill_workers(loader);
	/* End of file on its request pipe tells a worker to finish. */
	for (int64_t id = 0; id < loader->worker_count; id++) {
		close_fd(&loader->workers[id].request_fd);
		close_fd(&loader->workers[id].result_fd);
	}
	for (int64_t id = 0; id < loader->worker_count; id++) {
		if (loader->workers[id].pid > 0 &&
		    reap(&loader->workers[id], id, err) != PO_STATUS_OK)
			status = PO_STATUS_INTERNAL;
	}
	free_loader(loader);
	return status;
}
