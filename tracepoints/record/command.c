/*
 * command.c: the command profopt-record traces. It is resolved through PATH before the
 * session exists (so a typo leaves no trace directory), started with the LTTng-UST fork
 * wrapper preloaded so forked workers are traced, and waited for while SIGINT, SIGTERM and
 * SIGHUP sent to profopt-record are forwarded to it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record.h"

extern char **environ;

static volatile sig_atomic_t forward_pid;
static volatile sig_atomic_t last_signal;
static volatile sig_atomic_t signal_count; /* the handler is not nested: see sa_mask */

static void on_signal(int signal_number, siginfo_t *info, void *context)
{
	(void)context;
	last_signal = signal_number;
	signal_count++;
	/*
	 * A signal from the terminal (Ctrl-C) already reached the command, which is in the
	 * same foreground process group; sending it again could interrupt its own cleanup.
	 */
	if (forward_pid > 0 && info->si_code != SI_KERNEL)
		kill((pid_t)forward_pid, signal_number);
}

enum rec_status rec_signals_install(struct po_error *err)
{
	static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction action;
	size_t i;

	memset(&action, 0, sizeof(action));
	action.sa_sigaction = on_signal;
	action.sa_flags = SA_SIGINFO;
	sigemptyset(&action.sa_mask);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&action.sa_mask, forwarded[i]);
	for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++) {
		if (sigaction(forwarded[i], &action, NULL) == -1) {
			po_error_set(err, "Failed to install a signal handler: %s",
				     strerror(errno));
			return REC_STATUS_TRACING;
		}
	}
	return REC_STATUS_OK;
}

int rec_signals_received(void)
{
	return last_signal;
}

unsigned rec_signals_count(void)
{
	return (unsigned)signal_count;
}

/* errno of what stops NAME from running, 0 when it is an executable file. */
static int check_executable(const char *path)
{
	struct stat info;

	if (stat(path, &info) == -1)
		return errno;
	if (S_ISDIR(info.st_mode))
		return EISDIR;
	if (access(path, X_OK) == -1)
		return errno;
	return 0;
}

/* Looks NAME up in PATH as execvp would; the first error other than ENOENT is kept. */
int rec_search_path(const char *name, char **resolved)
{
	const char *search = getenv("PATH");
	char candidate[PATH_MAX];
	const char *start, *end;
	int first_error = ENOENT, error;

	if (!search)
		search = "/usr/local/bin:/usr/bin:/bin";
	for (start = search;; start = end + 1) {
		end = strchrnul(start, ':');
		snprintf(candidate, sizeof(candidate), "%.*s%s%s", (int)(end - start), start,
			 end == start ? "" : "/", name);
		error = check_executable(candidate);
		if (!error) {
			*resolved = strdup(candidate);
			return *resolved ? 0 : ENOMEM;
		}
		if (first_error == ENOENT && error != ENOENT && error != ENOTDIR)
			first_error = error;
		if (!*end)
			return first_error;
	}
}

static enum rec_status resolve_failed(const char *name, int error, struct po_error *err)
{
	if (error == ENOMEM) {
		po_error_set(err, "out of memory");
		return REC_STATUS_NOMEM;
	}
	if (error == ENOENT || error == ENOTDIR) {
		po_error_set(err, "command not found: %s", name);
		return REC_STATUS_NOT_FOUND;
	}
	po_error_set(err, "cannot execute %s: %s", name, strerror(error));
	return REC_STATUS_NOT_EXECUTABLE;
}

/* "NAME=VALUE" entries replace NAME in a copy of the environment. */
static char **environment_with(char *const *replacements, size_t replacement_count)
{
	size_t count = 0, used = 0, i, j;
	char **envp;

	while (environ[count])
		count++;
	envp = calloc(count + replacement_count + 1, sizeof(*envp));
	if (!envp)
		return NULL;
	for (i = 0; i < count; i++) {
		for (j = 0; j < replacement_count; j++) {
			size_t name_length = strchr(replacements[j], '=') - replacements[j] + 1;

			if (!strncmp(environ[i], replacements[j], name_length))
				break;
		}
		if (j == replacement_count)
			envp[used++] = environ[i];
	}
	for (j = 0; j < replacement_count; j++)
		envp[used++] = replacements[j];
	return envp;
}

/* Whether the command is a Python interpreter (python, python3.11, /usr/bin/python3). */
static bool python_command(const struct rec_options *options)
{
	const char *program = options->command_argv ? options->command_argv[0] : NULL;
	const char *slash = program ? strrchr(program, '/') : NULL;

	return program && strncmp(slash ? slash + 1 : program, "python", 6) == 0;
}

bool rec_objects_named(const struct rec_options *options)
{
	return options->heap || (options->stacks_hz > 0 && !python_command(options));
}

/*
 * liblttng-ust-dl.so, from the fork wrapper's directory (lttng-ust installs its helpers side
 * by side with one soname version).
 */
static void dl_wrapper_path(char *path, size_t size)
{
	const char *slash = strrchr(REC_UST_FORK_LIB, '/');
	int directory_length = slash ? (int)(slash - REC_UST_FORK_LIB + 1) : 0;

	snprintf(path, size, "%.*sliblttng-ust-dl.so.1", directory_length, REC_UST_FORK_LIB);
}

/*
 * One of profopt's own libraries: $variable, else next to this program's libprofopt (../lib
 * from its directory, as in the build tree and a /usr/local install), else installed (the
 * path given). False when none exists.
 */
static bool own_library(const char *variable, const char *name, const char *installed, char *path,
			size_t size)
{
	const char *chosen = getenv(variable);
	char self[4096];
	ssize_t length;

	if (chosen && *chosen) {
		snprintf(path, size, "%s", chosen);
		return access(path, R_OK) == 0;
	}
	length = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (length > 0) {
		char *slash;

		self[length] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(path, size, "%s/../lib/%s", self, name) < size &&
			    access(path, R_OK) == 0)
				return true;
		}
	}
	snprintf(path, size, "%s", installed);
	return access(path, R_OK) == 0;
}

void rec_fork_library(char *path, size_t size)
{
	if (!own_library("PROFOPT_FORK_LIBRARY", "libprofopt-fork.so.0", REC_FORK_LIB, path, size))
		snprintf(path, size, "%s", REC_UST_FORK_LIB);
}

/* The GPU collector ($PROFOPT_CUPTI_LIBRARY overrides). */
static bool cupti_library(char *path, size_t size)
{
	return own_library("PROFOPT_CUPTI_LIBRARY", "libprofopt-cupti.so.0", REC_CUPTI_LIB, path,
			   size);
}

/*
 * --heap: the library that records each allocation's callers, preloaded right after the
 * libc wrapper ($PROFOPT_HEAP_LIBRARY overrides). Without it allocation sites are named by
 * their immediate caller alone.
 */
bool rec_heap_library(char *path, size_t size)
{
	return own_library("PROFOPT_HEAP_LIBRARY", "libprofopt-heap.so.0", REC_HEAP_LIB, path,
			   size);
}

/* --gpu: CUDA_INJECTION64_PATH names the collector, which the CUDA driver then loads. */
static enum rec_status gpu_environment(char *entry, size_t size, struct po_error *err)
{
	const char *existing = getenv("CUDA_INJECTION64_PATH");
	char path[4096];

	if (!cupti_library(path, sizeof(path))) {
		po_error_set(err,
			     "--gpu: the GPU collector %s is not there (libprofopt-cupti is built "
			     "when the CUDA toolkit's CUPTI is found; docs/gpu.md)",
			     path);
		return REC_STATUS_USAGE;
	}
	if (existing && *existing && strcmp(existing, path) != 0) {
		po_error_set(err,
			     "--gpu: CUDA_INJECTION64_PATH already loads %s into CUDA programs; "
			     "the driver loads one injection library",
			     existing);
		return REC_STATUS_USAGE;
	}
	snprintf(entry, size, "CUDA_INJECTION64_PATH=%s", path);
	return REC_STATUS_OK;
}

/*
 * LD_PRELOAD: the fork hooks (and with --heap the libc wrapper and libprofopt-heap, which
 * records each allocation's callers; where objects are named, liblttng-ust-dl.so, which
 * reports the objects that dlopen maps) first, then the user's own preloads. Each of
 * lttng-ust's wrappers loads lttng-ust into every program the command runs, which then
 * registers with the session daemon (docs/performance.md, "Each exec").
 * PROFOPT_SAMPLE_MS starts libprofopt's RSS/CPU sampler; with --stacks, PROFOPT_STACKS_HZ
 * starts the Python module's stack sampler on the clock PROFOPT_STACKS_CLOCK names.
 */
static enum rec_status build_environment(struct rec_command *command,
					 const struct rec_options *options, struct po_error *err)
{
	static char preload[12288];
	static char sample[64];
	static char stacks[64];
	static char stacks_clock[64];
	static char injection[4200];
	const char *user_preload = getenv("LD_PRELOAD");
	char *replacements[5];
	size_t replacement_count = 0;
	char fork_hooks[4096], dl_wrapper[4096], heap[4096] = "";
	bool objects = rec_objects_named(options);

	rec_fork_library(fork_hooks, sizeof(fork_hooks));
	dl_wrapper_path(dl_wrapper, sizeof(dl_wrapper));
	if (options->heap && !rec_heap_library(heap, sizeof(heap)))
		heap[0] = '\0';
	if ((size_t)snprintf(preload, sizeof(preload), "LD_PRELOAD=%s%s%s%s%s%s%s%s%s", fork_hooks,
			     options->heap ? ":" : "",
			     options->heap ? REC_UST_LIBC_WRAPPER_LIB : "", heap[0] ? ":" : "",
			     heap, objects ? ":" : "", objects ? dl_wrapper : "",
			     user_preload && *user_preload ? ":" : "",
			     user_preload ? user_preload : "") >= sizeof(preload)) {
		po_error_set(err, "LD_PRELOAD is too long (%zu bytes) to add the tracing libraries",
			     strlen(user_preload));
		return REC_STATUS_USAGE;
	}
	replacements[replacement_count++] = preload;
	if (options->sample_ms >= 0 || !getenv("PROFOPT_SAMPLE_MS")) {
		snprintf(sample, sizeof(sample), "PROFOPT_SAMPLE_MS=%ld",
			 options->sample_ms >= 0 ? options->sample_ms
						 : (long)REC_DEFAULT_SAMPLE_MS);
		replacements[replacement_count++] = sample;
	}
	if (options->stacks_hz > 0) {
		snprintf(stacks, sizeof(stacks), "PROFOPT_STACKS_HZ=%ld", options->stacks_hz);
		replacements[replacement_count++] = stacks;
		snprintf(stacks_clock, sizeof(stacks_clock), "PROFOPT_STACKS_CLOCK=%s",
			 options->stacks_clock ? options->stacks_clock : "cpu");
		replacements[replacement_count++] = stacks_clock;
	}
	if (options->gpu) {
		enum rec_status status = gpu_environment(injection, sizeof(injection), err);

		if (status != REC_STATUS_OK)
			return status;
		replacements[replacement_count++] = injection;
	}
	command->envp = environment_with(replacements, replacement_count);
	if (!command->envp) {
		po_error_set(err, "out of memory");
		return REC_STATUS_NOMEM;
	}
	return REC_STATUS_OK;
}

enum rec_status rec_command_resolve(struct rec_command *command, const struct rec_options *options,
				    struct po_error *err)
{
	const char *name = options->command_argv[0];
	int error;

	*command = (struct rec_command){0};
	if (strchr(name, '/')) {
		error = check_executable(name);
		if (!error && !(command->path = strdup(name)))
			error = ENOMEM;
	} else {
		error = name[0] ? rec_search_path(name, &command->path) : ENOENT;
	}
	if (error)
		return resolve_failed(name, error, err);
	return build_environment(command, options, err);
}

/* In the child: exec, or report errno through the close-on-exec pipe. */
static void run_child(const struct rec_command *command, const struct rec_options *options,
		      int report_fd)
{
	int error;
	struct sigaction action;

	memset(&action, 0, sizeof(action));
	action.sa_handler = SIG_DFL;
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	sigaction(SIGHUP, &action, NULL);
	execve(command->path, options->command_argv, command->envp);
	error = errno;
	if (write(report_fd, &error, sizeof(error)) < 0) {
		/* The parent then sees a command that exited with 127. */
	}
	_exit(127);
}

enum rec_status rec_command_spawn(struct rec_command *command, const struct rec_options *options,
				  struct po_error *err)
{
	int report[2];
	int exec_error = 0;
	ssize_t got;

	if (pipe2(report, O_CLOEXEC) == -1) {
		po_error_set(err, "pipe: %s", strerror(errno));
		return REC_STATUS_TRACING;
	}
	command->pid = fork();
	if (command->pid == -1) {
		po_error_set(err, "Failed to start %s: fork: %s", options->command_argv[0],
			     strerror(errno));
		close(report[0]);
		close(report[1]);
		return REC_STATUS_TRACING;
	}
	if (command->pid == 0)
		run_child(command, options, report[1]);
	forward_pid = command->pid;
	close(report[1]);
	do {
		got = read(report[0], &exec_error, sizeof(exec_error));
	} while (got == -1 && errno == EINTR);
	close(report[0]);
	if (got == (ssize_t)sizeof(exec_error)) {
		rec_command_wait(command);
		return resolve_failed(options->command_argv[0], exec_error, err);
	}
	return REC_STATUS_OK;
}

void rec_command_wait(struct rec_command *command)
{
	int wait_status = 0;

	while (waitpid(command->pid, &wait_status, 0) == -1) {
		if (errno != EINTR) {
			wait_status = 0;
			break;
		}
	}
	forward_pid = 0;
	if (WIFSIGNALED(wait_status))
		command->exit_status = 128 + WTERMSIG(wait_status);
	else
		command->exit_status = WEXITSTATUS(wait_status);
}

void rec_command_fini(struct rec_command *command)
{
	free(command->path);
	free(command->envp);
	command->path = NULL;
	command->envp = NULL;
}
