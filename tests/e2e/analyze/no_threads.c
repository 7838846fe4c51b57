/*
 * no_threads.c: a preload library whose pthread_create() always fails with EAGAIN, as
 * under a thread limit; e2e.analyze.lanes runs profopt-analyze with it to check that
 * decoding falls back to the calling thread and gives the same result.
 */
#include <errno.h>
#include <pthread.h>

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
	(void)thread;
	(void)attr;
	(void)start;
	(void)arg;
	return EAGAIN;
}
