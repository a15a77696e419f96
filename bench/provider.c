/*
 * provider.c
 *		The local provider server for the benchmarks (provider.h).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "provider.h"

extern char **environ;

void
bench_server_start(bench_server *s, const char *path, const char *script_text, bool with_log)
{
	char		script[128],
				port_file[128],
				buf[32];
	FILE	   *f;
	char	   *argv[10];
	int			argc = 0;
	int			waited;

	snprintf(s->dir, sizeof(s->dir), "/tmp/mnemo-bench.XXXXXX");
	if (mkdtemp(s->dir) == NULL)
		die("mkdtemp: %s", strerror(errno));
	snprintf(script, sizeof(script), "%s/bench.script", s->dir);
	snprintf(port_file, sizeof(port_file), "%s/port", s->dir);
	s->log[0] = '\0';
	if (with_log)
		snprintf(s->log, sizeof(s->log), "%s/requests.log", s->dir);
	if ((f = fopen(script, "w")) == NULL)
		die("%s: %s", script, strerror(errno));
	fputs(script_text, f);
	fclose(f);
	argv[argc++] = (char *) path;
	argv[argc++] = (char *) "--script";
	argv[argc++] = script;
	argv[argc++] = (char *) "--port-file";
	argv[argc++] = port_file;
	if (with_log)
	{
		argv[argc++] = (char *) "--log";
		argv[argc++] = s->log;
	}
	argv[argc++] = (char *) "--quiet";
	argv[argc] = NULL;
	if ((errno = posix_spawn(&s->pid, path, NULL, NULL, argv, environ)) != 0)
		die("starting %s: %s", path, strerror(errno));
	for (waited = 0; waited < 200; waited++)
	{
		if ((f = fopen(port_file, "r")) != NULL)
		{
			bool		got = fgets(buf, sizeof(buf), f) != NULL;

			fclose(f);
			if (got)
				break;
		}
		nanosleep(&(struct timespec) {.tv_nsec = 25000000}, NULL);
	}
	if (waited == 200)
		die("the provider server did not start");
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d/v1", atoi(buf));
}

void
bench_server_stop(bench_server *s)
{
	char		path[160];

	kill(s->pid, SIGTERM);
	waitpid(s->pid, NULL, 0);
	snprintf(path, sizeof(path), "%s/bench.script", s->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/port", s->dir);
	unlink(path);
	if (s->log[0] != '\0')
		unlink(s->log);
	rmdir(s->dir);
}
