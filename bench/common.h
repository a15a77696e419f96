/*
 * common.h
 *		What the benchmarks share: clocks, dying with a message, and libpq
 *		calls that must succeed.  Each benchmark defines bench_name, the
 *		prefix of its error messages.
 */
#ifndef MNEMO_BENCH_COMMON_H
#define MNEMO_BENCH_COMMON_H

#include <libpq-fe.h>

extern const char *bench_name;

double		now_s(void);		/* monotonic seconds */
long long	unix_ms(void);		/* wall clock, unix milliseconds */
void		die(const char *fmt,...) __attribute__((noreturn, format(printf, 1, 2)));
PGconn	   *connect_db(void);	/* from the PG* environment */
PGresult   *exec_ok(PGconn *conn, const char *sql);
void		exec_cmd(PGconn *conn, const char *sql);
void		prepare(PGconn *conn, const char *name, const char *sql);
void		print_server(PGconn *conn, const char *const *settings);
int			cmp_double(const void *a, const void *b);	/* qsort's order of doubles */
double		median(double *v, int n);	/* of n values; sorts v */

#endif
