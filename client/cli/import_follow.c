/*
 * import_follow.c
 *		mnemo import --follow PATH: an agent's logs into the database as the
 *		agent writes them.
 *
 * PATH is a log, or a folder of them (a Claude Code project folder, pi's
 * sessions folder, a Codex sessions tree), walked for *.jsonl files (a
 * subagents/ folder is its parent log's, imported with it).  Every pass
 * reads each file that changed (its size, time or inode) again with
 * options.update: the session of the log's id keeps what it has and gets
 * what is new, so the database itself is the follower's position, and a
 * follower killed at any point and started again adds only what it had not
 * committed (each pass is one transaction).  A last line still being
 * written is skipped (options.lenient) until it is whole; a file replaced
 * (rotation) or cut is read again the same way.  SIGTERM and SIGINT stop it
 * between passes, exit 0.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

/* Folders deeper than this are not walked (a loop of links ends here). */
#define FOLLOW_DEPTH 8

typedef struct followed
{
	char	   *path;
	dev_t		dev;
	ino_t		ino;
	off_t		size;
	struct timespec mtime;
	bool		read;			/* read at least once, as it is now */
	off_t		failed_at;		/* the size an error was reported at, + 1 */
} followed;

typedef struct follow_state
{
	followed   *files;
	size_t		n;
	/* the sessions of the pass's import, reported after it */
	struct made
	{
		char		id[MNEMO_ID_MAX + 1];
		int64_t		messages;
		bool		resumed;
	}		   *made;
	size_t		n_made;
} follow_state;

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void) sig;
	stop = 1;
}

static void
on_session(const char *session_id, int64_t messages, void *arg)
{
	follow_state *fs = arg;
	struct made *grown = realloc(fs->made, (fs->n_made + 1) * sizeof(*grown));

	if (grown == NULL)
		return;
	fs->made = grown;
	snprintf(grown[fs->n_made].id, sizeof(grown[fs->n_made].id), "%s", session_id);
	grown[fs->n_made].messages = messages;
	grown[fs->n_made++].resumed = false;
}

/* Called after on_session for the same session. */
static void
on_updated(const char *session_id, int64_t added, void *arg)
{
	follow_state *fs = arg;

	(void) added;
	if (fs->n_made > 0 && strcmp(fs->made[fs->n_made - 1].id, session_id) == 0)
		fs->made[fs->n_made - 1].resumed = true;
}

static bool
is_log(const char *name)
{
	size_t		n = strlen(name);

	return n > 6 && strcmp(name + n - 6, ".jsonl") == 0;
}

static followed *
find(follow_state *fs, const char *path)
{
	for (size_t i = 0; i < fs->n; i++)
		if (strcmp(fs->files[i].path, path) == 0)
			return &fs->files[i];
	return NULL;
}

static void
add(follow_state *fs, const char *path)
{
	followed   *grown;

	if (find(fs, path) != NULL)
		return;
	if ((grown = realloc(fs->files, (fs->n + 1) * sizeof(*grown))) == NULL)
		return;
	fs->files = grown;
	memset(&grown[fs->n], 0, sizeof(*grown));
	if ((grown[fs->n].path = strdup(path)) != NULL)
		fs->n++;
}

/* The logs under dir (new ones appear as the agent starts sessions). */
static void
walk(follow_state *fs, const char *dir, int depth)
{
	DIR		   *d;
	struct dirent *e;

	if (depth > FOLLOW_DEPTH || (d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL)
	{
		size_t		len = strlen(dir) + strlen(e->d_name) + 2;
		char	   *path;
		struct stat sb;

		if (e->d_name[0] == '.' || strcmp(e->d_name, "subagents") == 0 ||
			(path = malloc(len)) == NULL)
			continue;
		snprintf(path, len, "%s/%s", dir, e->d_name);
		if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
			walk(fs, path, depth + 1);
		else if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && is_log(e->d_name))
			add(fs, path);
		free(path);
	}
	closedir(d);
}

/* Read f again if it changed; its new messages reported. */
static int
pass_file(mnemo_store *st, follow_state *fs, followed *f, const mnemo_import_options *base)
{
	mnemo_import_options io = *base;
	struct stat sb;
	FILE	   *in;
	char		sid[MNEMO_ID_MAX + 1];
	int64_t		imported = 0;
	int			rc;

	if (stat(f->path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return CLI_OK;			/* gone, or between a rotation's steps */
	if (f->read && sb.st_dev == f->dev && sb.st_ino == f->ino && sb.st_size == f->size &&
		sb.st_mtim.tv_sec == f->mtime.tv_sec && sb.st_mtim.tv_nsec == f->mtime.tv_nsec)
		return CLI_OK;
	if ((in = fopen(f->path, "r")) == NULL)
		return CLI_OK;
	f->dev = sb.st_dev;
	f->ino = sb.st_ino;
	f->size = sb.st_size;
	f->mtime = sb.st_mtim;
	f->read = true;
	fs->n_made = 0;
	io.path = f->path;
	io.progress_arg = fs;
	rc = mnemo_import_jsonl(st, in, &io, sid, &imported);
	fclose(in);
	if (rc != MNEMO_OK)
	{
		/* the connection is gone: nothing more can be followed */
		if (rc == MNEMO_ERR_CONNECTION)
			return cli_fail(st);
		/* a log just created, or not a transcript: said once a size */
		if (f->failed_at != sb.st_size + 1)
			fprintf(stderr, "mnemo: %s: %s (read again when it changes)\n", f->path,
					mnemo_errmsg(st));
		f->failed_at = sb.st_size + 1;
		return CLI_OK;
	}
	f->failed_at = 0;
	for (size_t i = 0; i < fs->n_made; i++)
	{
		const struct made *m = &fs->made[i];

		if (!m->resumed)
			printf("%s\n", m->id);
		if (!m->resumed || m->messages > 0)
			fprintf(stderr, "mnemo: %s: %s: %" PRId64 " new\n", f->path, m->id, m->messages);
	}
	fflush(stdout);
	return CLI_OK;
}

int
cli_import_follow(mnemo_store *st, const char *path, const mnemo_import_options *base,
				  int interval_ms)
{
	follow_state fs = {0};
	mnemo_import_options io = *base;
	struct sigaction sa;
	struct stat sb;
	struct timespec wait = {interval_ms / 1000, (long) (interval_ms % 1000) * 1000000L};
	bool		dir;
	int			rc = CLI_OK;

	if (stat(path, &sb) != 0)
	{
		fprintf(stderr, "mnemo: %s: %s\n", path, strerror(errno));
		return CLI_ERROR;
	}
	dir = S_ISDIR(sb.st_mode);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	io.update = true;
	io.lenient = true;
	io.session = on_session;
	io.updated = on_updated;
	io.progress = NULL;
	fprintf(stderr, "mnemo: following %s (SIGTERM or ^C stops)\n", path);
	while (!stop && rc == CLI_OK)
	{
		if (dir)
			walk(&fs, path, 0);
		else
			add(&fs, path);
		for (size_t i = 0; i < fs.n && !stop && rc == CLI_OK; i++)
			rc = pass_file(st, &fs, &fs.files[i], &io);
		if (!stop && rc == CLI_OK)
			nanosleep(&wait, NULL);
	}
	if (stop)
		fprintf(stderr, "mnemo: stopped following %s\n", path);
	for (size_t i = 0; i < fs.n; i++)
		free(fs.files[i].path);
	free(fs.files);
	free(fs.made);
	return rc;
}
