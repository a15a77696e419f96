/*
 * clock.c
 *		The one clock of libmnemo, in milliseconds: monotonic for waits and
 *		timeouts, the wall clock for times that are stored.
 */
#define _POSIX_C_SOURCE 200809L

#include <time.h>

#include "core/core.h"

int64_t
mn_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
mn_unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
