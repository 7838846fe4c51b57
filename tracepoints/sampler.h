/* sampler.h: the optional thread that records host RSS and process CPU time as counters. */
#ifndef PROFOPT_SAMPLER_H
#define PROFOPT_SAMPLER_H

/* Starts (or re-periods) the sampler; 0 on success, -1 on error (errno set). */
int po_sampler_start(unsigned period_ms);
/* Stops the sampler and waits for its thread; a no-op when it is not running. */
void po_sampler_stop(void);

#endif /* PROFOPT_SAMPLER_H */
