/*
 * recording.c: the identity of a recording. profopt-record gives its command a random
 * recording id (PROFOPT_RECORDING, inherited by every process the command forks or
 * spawns); libprofopt puts it in each process's profopt:process event, and the analyzer
 * keeps only the processes of this id. profopt-recording.txt in the trace directory holds
 * the id, the command's pid, when and how the command ended, on CLOCK_MONOTONIC (the
 * trace clock), and the recorder's own CPU time while it ran; see docs/trace-format.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record.h"

#define RECORDING_NAME "profopt-recording.txt"

int64_t rec_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * A process's CPU time (user and system, /proc/PID/stat) and its parent; false when it is
 * gone or unreadable. The command name, in parentheses, may hold spaces: fields are read
 * after its last ')'.
 */
static bool process_cpu(pid_t pid, int64_t *cpu_ns, pid_t *parent)
{
	char path[64], text[1024], *cursor;
	unsigned long long user_ticks, system_ticks;
	long ticks_per_s = sysconf(_SC_CLK_TCK);
	int parent_pid, fd;
	ssize_t length;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	length = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (length <= 0 || ticks_per_s <= 0)
		return false;
	text[length] = '\0';
	cursor = strrchr(text, ')');
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!cursor || sscanf(cursor + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			      &parent_pid, &user_ticks, &system_ticks) != 3)
		return false;
	*cpu_ns =
	    (int64_t)((user_ticks + system_ticks) * (1000000000ULL / (unsigned long)ticks_per_s));
	*parent = (pid_t)parent_pid;
	return true;
}

/* The CPU time of a daemon and of its children (a session daemon's consumer daemons). */
static int64_t daemon_family_cpu_ns(pid_t daemon_pid)
{
	int64_t total_ns, cpu_ns;
	pid_t parent;
	DIR *proc;
	struct dirent *entry;

	if (!process_cpu(daemon_pid, &total_ns, &parent))
		return -1;
	proc = opendir("/proc");
	if (!proc)
		return total_ns;
	while ((entry = readdir(proc)) != NULL) {
		long pid = strtol(entry->d_name, NULL, 10);

		if (pid > 0 && pid != daemon_pid && process_cpu((pid_t)pid, &cpu_ns, &parent) &&
		    parent == daemon_pid)
			total_ns += cpu_ns;
	}
	closedir(proc);
	return total_ns;
}

int64_t rec_recorder_cpu_ns(pid_t daemon_pid)
{
	struct rusage usage;
	int64_t own_ns, daemons_ns = 0;

	if (getrusage(RUSAGE_SELF, &usage) != 0)
		return -1;
	own_ns = ((int64_t)usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000000 +
		 ((int64_t)usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000;
	if (daemon_pid > 0)
		daemons_ns = daemon_family_cpu_ns(daemon_pid);
	return daemons_ns < 0 ? -1 : own_ns + daemons_ns;
}

enum rec_status rec_recording_init(struct rec_recording *recording, struct po_error *err)
{
	unsigned char bytes[REC_RECORDING_ID_BYTES];
	size_t got = 0;

	*recording = (struct rec_recording){
	    .command_pid = -1, .exit_status = -1, .recorder_cpu_ns = -1, .cpu_start_ns = -1};
	while (got < sizeof(bytes)) {
		ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* No entropy source: time and pid still tell two recordings apart. */
			uint64_t mix = (uint64_t)rec_monotonic_ns() ^ ((uint64_t)getpid() << 40);

			for (size_t i = 0; i < sizeof(bytes); i++)
				bytes[i] = (unsigned char)(mix >> (8 * (i % 8))) ^ (unsigned char)i;
			break;
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(bytes); i++)
		snprintf(recording->id + 2 * i, 3, "%02x", bytes[i]);
	if (setenv("PROFOPT_RECORDING", recording->id, 1) != 0) {
		po_error_set(err, "out of memory");
		return REC_STATUS_NOMEM;
	}
	return REC_STATUS_OK;
}

/*
 * Writes the file whole (a temporary file renamed over it), so a reader never sees half of
 * it. The trace directory is made if the session daemon has not made it yet. Failing to
 * write it is a warning: the trace is still usable, only not restricted to the command.
 */
void rec_recording_write(const struct rec_recording *recording, const char *trace_dir)
{
	char path[4096], temporary[4200], text[512];
	int length, fd;

	if (!trace_dir)
		return;
	length =
	    snprintf(text, sizeof(text),
		     "profopt-recording/1\nrecording %s\ncommand_pid %d\ncommand_start_ns "
		     "%lld\n",
		     recording->id, (int)recording->command_pid, (long long)recording->start_ns);
	if (recording->end_ns > 0)
		length += snprintf(text + length, sizeof(text) - (size_t)length,
				   "command_end_ns %lld\ncommand_exit %d\n",
				   (long long)recording->end_ns, recording->exit_status);
	if (recording->end_ns > 0 && recording->recorder_cpu_ns >= 0)
		length += snprintf(text + length, sizeof(text) - (size_t)length,
				   "recorder_cpu_ns %lld\n", (long long)recording->recorder_cpu_ns);
	if ((size_t)snprintf(path, sizeof(path), "%s/" RECORDING_NAME, trace_dir) >= sizeof(path))
		return;
	snprintf(temporary, sizeof(temporary), "%s.%d", path, (int)getpid());
	if (mkdir(trace_dir, 0770) != 0 && errno != EEXIST)
		goto failed;
	fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		goto failed;
	if (write(fd, text, (size_t)length) != length || close(fd) != 0) {
		unlink(temporary);
		goto failed;
	}
	if (rename(temporary, path) != 0) {
		unlink(temporary);
		goto failed;
	}
	return;
failed:
	fprintf(stderr,
		"profopt-record: warning: cannot write %s: %s; the analysis will not be able to "
		"tell the command's processes from others that recorded at the same time\n",
		path, strerror(errno));
}
