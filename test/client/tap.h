/*
 * tap.h
 *		The Test Anything Protocol for the client tests, header only.
 *
 *	ok(cond, "what the user relies on");
 *	is_int(got, want, "...");  is_str(got, want, "...");
 *	return tap_done();         (exit status: 0 only if every test passed)
 *
 * Each test program prints "ok N - ..." / "not ok N - ..." lines, then the
 * plan "1..N" at the end; test/client/run.sh counts them.
 */
#ifndef MNEMO_TAP_H
#define MNEMO_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int	tap_run;
static int	tap_failed;

__attribute__((format(printf, 2, 3)))
static int
tap_ok(int cond, const char *fmt,...)
{
	va_list		ap;

	tap_run++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_run);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok((cond) ? 1 : 0, __VA_ARGS__)

#define is_int(got, want, ...) \
	do { \
		long long got_ = (long long) (got), want_ = (long long) (want); \
		if (!tap_ok(got_ == want_, __VA_ARGS__)) \
			printf("#   got %lld, want %lld (%s:%d)\n", got_, want_, __FILE__, __LINE__); \
	} while (0)

#define is_str(got, want, ...) \
	do { \
		const char *got_ = (got), *want_ = (want); \
		int same_ = (got_ == NULL && want_ == NULL) || \
			(got_ != NULL && want_ != NULL && strcmp(got_, want_) == 0); \
		if (!tap_ok(same_, __VA_ARGS__)) \
			printf("#   got \"%s\", want \"%s\" (%s:%d)\n", got_ ? got_ : "(null)", \
				   want_ ? want_ : "(null)", __FILE__, __LINE__); \
	} while (0)

/* A check that cannot run here, and why: counts as passed (TAP "# SKIP"). */
#define skip(...) \
	do { tap_run++; printf("ok %d # SKIP ", tap_run); printf(__VA_ARGS__); printf("\n"); \
		fflush(stdout); } while (0)

/* A diagnostic line. */
#define diag(...) \
	do { printf("# "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); } while (0)

/* Stop the program: a failed precondition makes the rest meaningless. */
#define bail_out(...) \
	do { printf("Bail out! "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); exit(2); } while (0)

static int
tap_done(void)
{
	printf("1..%d\n", tap_run);
	if (tap_failed)
		printf("# %d of %d failed\n", tap_failed, tap_run);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif							/* MNEMO_TAP_H */
