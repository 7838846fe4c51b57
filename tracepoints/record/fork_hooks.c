/*
 * fork_hooks.c: libprofopt-fork, which profopt-record preloads into the command in place
 * of lttng-ust's fork wrapper (liblttng-ust-fork.so). A process in which lttng-ust is
 * loaded must tell it of each fork (lttng_ust_before_fork and the after hooks), or the
 * child writes its events with its parent's cached pid and is never registered. The
 * wrapper does that, but it links liblttng-ust: every program the command runs (a shell,
 * /bin/true, a compiler) loaded lttng-ust, registered with the session daemon, mapped the
 * user's ring buffers and unregistered at exit, 37 ms an exec (docs/performance.md). This
 * library links nothing of lttng: at each fork it asks the dynamic linker whether
 * liblttng-ust is loaded (by the program, by libprofopt, or by a library dlopen'd before)
 * and only then calls its hooks, as the wrapper does.
 *
 * Wrapped: fork() and daemon() (whose fork inside libc cannot be interposed). Not wrapped
 * (the wrapper's others): clone() without CLONE_VM, and setns, unshare and the set*id
 * calls, which only refresh lttng-ust's namespace and credential contexts (profopt's
 * session adds none of them).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <paths.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#define UST_LIBRARY "liblttng-ust.so.1"

struct ust_fork_hooks {
	void (*before)(sigset_t *save_sigset);
	void (*after_parent)(sigset_t *restore_sigset);
	void (*after_child)(sigset_t *restore_sigset);
};

/*
 * lttng-ust's hooks when it is loaded in this process; false (nothing to do) otherwise. Once
 * found they are kept: the lookup pins the library (RTLD_NODELETE), so the pointers stay
 * valid, and later forks take no dynamic-linker lock. Until then each fork asks again (the
 * program may load lttng-ust later, a Python program when it imports profopt).
 */
static bool ust_fork_hooks_find(struct ust_fork_hooks *hooks)
{
	static struct ust_fork_hooks found_hooks;
	static int found; /* 1 once found_hooks holds the pinned library's hooks */
	void *ust;

	if (__atomic_load_n(&found, __ATOMIC_ACQUIRE)) {
		*hooks = found_hooks;
		return true;
	}
	ust = dlopen(UST_LIBRARY, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
	if (!ust)
		return false;
	hooks->before = (void (*)(sigset_t *))dlsym(ust, "lttng_ust_before_fork");
	hooks->after_parent = (void (*)(sigset_t *))dlsym(ust, "lttng_ust_after_fork_parent");
	hooks->after_child = (void (*)(sigset_t *))dlsym(ust, "lttng_ust_after_fork_child");
	dlclose(ust); /* drops the reference NOLOAD took; NODELETE keeps the library */
	if (!hooks->before || !hooks->after_parent || !hooks->after_child)
		return false;
	found_hooks = *hooks; /* two threads may both store the same pointers */
	__atomic_store_n(&found, 1, __ATOMIC_RELEASE);
	return true;
}

__attribute__((visibility("default"))) pid_t fork(void)
{
	static pid_t (*libc_fork)(void);
	struct ust_fork_hooks hooks;
	sigset_t saved_sigset;
	int saved_errno;
	pid_t pid;

	if (!libc_fork)
		libc_fork = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
	if (!libc_fork) {
		errno = ENOSYS;
		return -1;
	}
	if (!ust_fork_hooks_find(&hooks))
		return libc_fork();
	hooks.before(&saved_sigset);
	pid = libc_fork();
	saved_errno = errno;
	if (pid == 0)
		hooks.after_child(&saved_sigset);
	else
		hooks.after_parent(&saved_sigset);
	errno = saved_errno;
	return pid;
}

/* glibc's daemon(), over the fork() above. */
__attribute__((visibility("default"))) int daemon(int nochdir, int noclose)
{
	int fd;

	switch (fork()) {
	case -1:
		return -1;
	case 0:
		break;
	default:
		_exit(0);
	}
	if (setsid() == -1)
		return -1;
	if (!nochdir && chdir("/") == -1)
		return -1;
	if (!noclose && (fd = open(_PATH_DEVNULL, O_RDWR)) != -1) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	return 0;
}
