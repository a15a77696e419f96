/*
 * provider.h
 *		The scripted provider server (test/provider_server) for the client
 *		tests that call a model: started per scenario with its own script,
 *		port file and request log, and that log read back.
 *
 * Needs MNEMO_PROVIDER_SERVER (test/client/run.sh builds and exports it).
 * Everything is static inline, so a test includes what it uses.
 */
#ifndef MNEMO_TEST_PROVIDER_H
#define MNEMO_TEST_PROVIDER_H

#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

#ifndef KEY
#define KEY "sk-test-secret-4242"
#endif

/* ---- the provider server --------------------------------------------------- */

typedef struct server
{
	pid_t		pid;
	int			port;
	char		dir[64];
	char		script[96];
	char		portfile[96];
	char		log[96];
	char		url[64];		/* base URL: OpenAI's gets "/v1" */
} server;

static inline int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static inline char *
slurp(const char *path)
{
	FILE	   *f = fopen(path, "rb");
	char	   *buf;
	long		n;

	if (f == NULL)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if ((buf = calloc(1, (size_t) n + 1)) == NULL || fread(buf, 1, (size_t) n, f) != (size_t) n)
		bail_out("reading %s", path);
	fclose(f);
	return buf;
}

/* A provider server with this script, on port (0: any free one). */
static inline void
server_start_on(server *s, const char *script, int port)
{
	const char *bin = getenv("MNEMO_PROVIDER_SERVER");
	FILE	   *f;
	int64_t		until;

	if (bin == NULL || *bin == '\0')
		bail_out("MNEMO_PROVIDER_SERVER is not set (test/client/run.sh sets it)");
	memset(s, 0, sizeof(*s));
	strcpy(s->dir, "/tmp/mnemo-ps.XXXXXX");
	if (mkdtemp(s->dir) == NULL)
		bail_out("mkdtemp: %s", strerror(errno));
	snprintf(s->script, sizeof(s->script), "%s/script", s->dir);
	snprintf(s->portfile, sizeof(s->portfile), "%s/port", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/log", s->dir);
	if ((f = fopen(s->script, "w")) == NULL)
		bail_out("%s: %s", s->script, strerror(errno));
	fputs(script, f);
	fclose(f);
	if ((s->pid = fork()) < 0)
		bail_out("fork: %s", strerror(errno));
	if (s->pid == 0)
	{
		char		port_arg[16];

		/*
		 * A test that dies before server_stop (a failed assertion, ASan)
		 * leaves its server running; it must not also hold what the test
		 * inherited, such as the flock(1) lock that serialises test runs.
		 * (Not PR_SET_PDEATHSIG: that fires when the starting thread
		 * exits, and t_send starts a server from a thread.)
		 */
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		snprintf(port_arg, sizeof(port_arg), "%d", port);
		execl(bin, bin, "--script", s->script, "--port-file", s->portfile, "--log", s->log,
			  "--key", KEY, "--quiet", "--port", port_arg, (char *) NULL);
		_exit(127);
	}
	for (until = now_ms() + 10000; now_ms() < until; sleep_ms(20))
	{
		char	   *p = slurp(s->portfile);

		s->port = atoi(p);
		free(p);
		if (s->port > 0)
			break;
	}
	if (s->port <= 0)
		bail_out("the provider server did not start");
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", s->port);
}

static inline void
server_start(server *s, const char *script)
{
	server_start_on(s, script, 0);
}

static inline void
server_stop(server *s)
{
	int			status;

	kill(s->pid, SIGTERM);
	waitpid(s->pid, &status, 0);
	unlink(s->script);
	unlink(s->portfile);
	unlink(s->log);
	rmdir(s->dir);
}

/* The request log's lines, parsed; *n gets their count.  Free with
 * log_free. */
static inline json_object **
log_read(const server *s, int *n)
{
	char	   *text = slurp(s->log);
	char	   *line,
			   *save = NULL;
	json_object **lines = calloc(64, sizeof(*lines));

	*n = 0;
	for (line = strtok_r(text, "\n", &save); line && *n < 64; line = strtok_r(NULL, "\n", &save))
		lines[(*n)++] = json_tokener_parse(line);
	free(text);
	return lines;
}

static inline void
log_free(json_object **lines, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		json_object_put(lines[i]);
	free(lines);
}

/* A member by path "a.b.0.c" (numbers index arrays), or NULL. */
static inline json_object *
jpath(json_object *o, const char *path)
{
	char		buf[256];
	char	   *tok,
			   *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save))
	{
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, (size_t) atoi(tok));
		else if (!json_object_object_get_ex(o, tok, &o))
			o = NULL;
	}
	return o;
}

/* The string at path, or NULL (absent, or not a string). */
static inline const char *
jstr(json_object *o, const char *path)
{
	json_object *v = jpath(o, path);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

#endif							/* MNEMO_TEST_PROVIDER_H */
