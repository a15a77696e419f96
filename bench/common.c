/*
 * common.c
 *		Helpers shared by bench/append.c and bench/context.c (see common.h).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

long long
unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
die(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", bench_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

PGconn *
connect_db(void)
{
	PGconn	   *conn = PQconnectdb("");

	if (PQstatus(conn) != CONNECTION_OK)
		die("connection failed: %s", PQerrorMessage(conn));
	return conn;
}

/* Run one statement; die unless it succeeds. */
PGresult *
exec_ok(PGconn *conn, const char *sql)
{
	PGresult   *res = PQexec(conn, sql);
	ExecStatusType st = PQresultStatus(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		die("%s: %s", sql, PQerrorMessage(conn));
	return res;
}

void
exec_cmd(PGconn *conn, const char *sql)
{
	PQclear(exec_ok(conn, sql));
}

void
prepare(PGconn *conn, const char *name, const char *sql)
{
	PGresult   *res = PQprepare(conn, name, sql, 0, NULL);

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		die("prepare %s: %s", name, PQerrorMessage(conn));
	PQclear(res);
}

/*
 * Print the server, mnemo and machine lines and "settings:" with the given
 * settings' values, leaving the line open for the caller to finish.
 */
void
print_server(PGconn *conn, const char *const *settings)
{
	PGresult   *res;
	const char *const *s;

	res = exec_ok(conn, "SELECT version()");
	printf("server:   %s\n", PQgetvalue(res, 0, 0));
	PQclear(res);
	res = exec_ok(conn, "SELECT mnemo.version()");
	printf("mnemo:    %s\n", PQgetvalue(res, 0, 0));
	PQclear(res);
	printf("machine:  %ld CPUs online\n", sysconf(_SC_NPROCESSORS_ONLN));
	printf("settings:");
	for (s = settings; *s; s++)
	{
		char		sql[128];

		snprintf(sql, sizeof(sql), "SHOW %s", *s);
		res = exec_ok(conn, sql);
		printf(" %s=%s", *s, PQgetvalue(res, 0, 0));
		PQclear(res);
	}
}

int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

double
median(double *v, int n)
{
	qsort(v, (size_t) n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
