/*
 * provider.h
 *		The local provider server (test/provider_server) for the benchmarks
 *		that make chat turns: started with a script of their own in a
 *		temporary directory, its port awaited, stopped and cleaned up.
 */
#ifndef MNEMO_BENCH_PROVIDER_H
#define MNEMO_BENCH_PROVIDER_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct bench_server
{
	pid_t		pid;
	char		dir[64];
	char		log[128];		/* the request log, "" when not kept */
	char		url[128];		/* http://127.0.0.1:PORT/v1 */
} bench_server;

/* Start the server at path playing script; with_log keeps a request log. */
void		bench_server_start(bench_server *s, const char *path, const char *script,
							   bool with_log);
void		bench_server_stop(bench_server *s);

#endif
