/*
 * provider-server: a scripted local stand-in for the OpenAI and Anthropic
 * streaming APIs (see ps.h for the files, doc/wire-formats.md ("Scripts") for
 * the script format).
 *
 *   provider-server --script FILE [--port N] [--port-file FILE] [--log FILE]
 *                   [--key KEY] [--lenient] [--quiet]
 *   provider-server --script FILE --check
 *   provider-server --script FILE --render N [--dialect openai|anthropic]
 *                   [--include-usage] [--no-stream]
 *
 * The port file is written (atomically, by rename) only once the socket
 * listens, so a test that waits for the file can connect at once.  SIGTERM
 * or SIGINT stop the server: it removes the port file and exits 0.
 */
#define _POSIX_C_SOURCE 200809L

#include "ps.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int	stop_pipe[2] = {-1, -1};

static void
on_signal(int sig)
{
	int			saved = errno;
	char		c = (char) sig;

	/* the main loop polls the pipe: a signal may land on any thread */
	if (write(stop_pipe[1], &c, 1) < 0)
	{
		/* nothing to do: the pipe is full, so a stop is already pending */
	}
	errno = saved;
}

static void
usage(void)
{
	fputs("usage: provider-server --script FILE [--port N] [--port-file FILE] [--log FILE]\n"
		  "                       [--key KEY] [--keyless] [--lenient] [--quiet]\n"
		  "       provider-server --script FILE --check\n"
		  "       provider-server --script FILE --render N [--dialect openai|anthropic]\n"
		  "                       [--include-usage] [--no-stream]\n", stderr);
	exit(2);
}

static void
write_port_file(const char *path, int port)
{
	char		tmp[4096];
	FILE	   *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long) getpid());
	f = fopen(tmp, "w");
	if (f == NULL)
		die("cannot write %s: %s", tmp, strerror(errno));
	fprintf(f, "%d\n", port);
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		die("cannot write %s: %s", path, strerror(errno));
}

static long
to_long(const char *s, const char *what, long min, long max)
{
	char	   *e;
	long		v;

	errno = 0;
	v = strtol(s, &e, 10);
	if (*s == '\0' || *e != '\0' || errno || v < min || v > max)
		die("%s: '%s' is not a number in [%ld, %ld]", what, s, min, max);
	return v;
}

static int
render_only(const script *s, long n, dialect d, bool include_usage, bool stream)
{
	request_info ri = {.dialect = d, .stream = stream, .include_usage = include_usage,
	.body_len = 100, .number = 1, .first_tool_id = 1};
	const reply *r;
	rendered	rd;

	if (n < 1 || (size_t) n > s->nreplies)
		die("--render %ld: the script has %zu replies", n, s->nreplies);
	r = &s->replies[n - 1];
	if (r->status)
		render_error(r, &ri, r->status, NULL, NULL, NULL, &rd);
	else
		render_reply(r, &ri, &rd);
	fwrite(rd.body.p, 1, rd.body.len, stdout);
	rendered_free(&rd);
	return fflush(stdout) == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	const char *script_path = NULL,
			   *port_file = NULL,
			   *log_path = NULL,
			   *key = NULL;
	long		port = 0,
				render = 0;
	bool		lenient = false,
				keyless = false,
				quiet = false,
				check = false,
				include_usage = false,
				no_stream = false;
	dialect		d = DIALECT_OPENAI;
	script		s;
	server_config cfg = {0};
	int			lfd,
				one = 1;
	struct sockaddr_in addr = {0};
	socklen_t	alen = sizeof(addr);
	struct sigaction sa = {0};

	for (int i = 1; i < argc; i++)
	{
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

#define TAKE() do { if (v == NULL) usage(); i++; } while (0)
		if (strcmp(a, "--script") == 0)
		{
			TAKE();
			script_path = v;
		}
		else if (strcmp(a, "--port") == 0)
		{
			TAKE();
			port = to_long(v, "--port", 0, 65535);
		}
		else if (strcmp(a, "--port-file") == 0)
		{
			TAKE();
			port_file = v;
		}
		else if (strcmp(a, "--log") == 0)
		{
			TAKE();
			log_path = v;
		}
		else if (strcmp(a, "--key") == 0)
		{
			TAKE();
			key = v;
		}
		else if (strcmp(a, "--render") == 0)
		{
			TAKE();
			render = to_long(v, "--render", 1, 1000000000);
		}
		else if (strcmp(a, "--dialect") == 0)
		{
			TAKE();
			if (strcmp(v, "openai") == 0)
				d = DIALECT_OPENAI;
			else if (strcmp(v, "anthropic") == 0)
				d = DIALECT_ANTHROPIC;
			else
				usage();
		}
		else if (strcmp(a, "--lenient") == 0)
			lenient = true;
		else if (strcmp(a, "--keyless") == 0)
			keyless = true;
		else if (strcmp(a, "--quiet") == 0)
			quiet = true;
		else if (strcmp(a, "--check") == 0)
			check = true;
		else if (strcmp(a, "--include-usage") == 0)
			include_usage = true;
		else if (strcmp(a, "--no-stream") == 0)
			no_stream = true;
		else
			usage();
#undef TAKE
	}
	if (script_path == NULL)
		usage();
	script_load(&s, script_path);
	if (check)
	{
		printf("%s: %zu replies\n", script_path, s.nreplies);
		script_free(&s);
		return 0;
	}
	if (render)
	{
		int			rc = render_only(&s, render, d, include_usage, !no_stream);

		script_free(&s);
		return rc;
	}

	signal(SIGPIPE, SIG_IGN);
	if (pipe(stop_pipe) != 0)
		die("pipe: %s", strerror(errno));
	fcntl(stop_pipe[1], F_SETFL, O_NONBLOCK);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	cfg.script = &s;
	cfg.key = key;
	cfg.lenient = lenient;
	cfg.keyless = keyless;
	cfg.quiet = quiet;
	cfg.log_fd = -1;
	if (log_path)
	{
		cfg.log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (cfg.log_fd < 0)
			die("cannot open log %s: %s", log_path, strerror(errno));
	}
	server_init(&cfg);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t) port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *) &addr, sizeof(addr)) != 0)
		die("bind 127.0.0.1:%ld: %s", port, strerror(errno));
	if (listen(lfd, 128) != 0)
		die("listen: %s", strerror(errno));
	if (getsockname(lfd, (struct sockaddr *) &addr, &alen) != 0)
		die("getsockname: %s", strerror(errno));
	port = ntohs(addr.sin_port);
	if (port_file)
		write_port_file(port_file, (int) port);
	if (!quiet)
		fprintf(stderr, "provider-server: listening on 127.0.0.1:%ld, %zu replies from %s\n",
				port, s.nreplies, script_path);

	for (;;)
	{
		struct pollfd pfd[2] = {{.fd = lfd, .events = POLLIN}, {.fd = stop_pipe[0], .events = POLLIN}};
		int			fd;

		if (poll(pfd, 2, -1) < 0)
		{
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & POLLIN))
			continue;
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
		{
			if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN)
				fprintf(stderr, "provider-server: accept: %s\n", strerror(errno));
			continue;
		}
		serve_connection(fd);
	}

	/*
	 * Stop: no new connections, the open ones ended (a client mid-stream
	 * sees the connection close, as if the provider went away).  The log
	 * needs no flush: every line went out with its own write().
	 */
	close(lfd);
	if (port_file)
		unlink(port_file);
	{
		long		requests,
					used;
		bool		all_ended = server_shutdown(2000);

		server_stats(&requests, &used);
		if (!quiet)
			fprintf(stderr, "provider-server: stopped; %ld requests, %ld replies served\n", requests, used);
		/* a thread still running may be reading the script: leave it then */
		if (all_ended)
			script_free(&s);
	}
	if (cfg.log_fd >= 0)
		close(cfg.log_fd);
	close(stop_pipe[0]);
	close(stop_pipe[1]);
	return 0;
}
