/*
 * bench/context_load.c
 *		bench/context's load: sessions filled by append_messages, BATCH
 *		messages a call, each batch followed by the compaction that keeps the
 *		view near VIEW items (bench/context.c says why).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "common.h"
#include "context.h"

const char user_text[] =
	"The parser test still fails on a trailing comment at end of input; can you "
	"look at next_line() and check whether the lookahead is reset before it returns?";

const char assistant_text[] =
	"I looked at the failing test: the parser keeps the last token of the previous "
	"line when a comment ends the buffer, so the next statement starts one token "
	"late. I will read the function and the callers that depend on it.";

const char tool_output[] =
	"src/parser.c:212: static int next_line(Parser *p)\\n"
	"src/parser.c:213: {\\n"
	"src/parser.c:214:     if (p->pos >= p->len)\\n"
	"src/parser.c:215:         return 0;\\n"
	"src/parser.c:216:     p->line++;\\n"
	"src/parser.c:217:     p->col = 0;\\n"
	"src/parser.c:218:     skip_comment(p);\\n"
	"src/parser.c:219:     return 1;\\n"
	"src/parser.c:220: }\\n"
	"src/lexer.c:88: if (next_line(p)) continue;\\n";

const char summary_text[] =
	"The user asked why the parser test fails on a trailing comment at end of input. "
	"The assistant found that next_line() keeps a stale lookahead token, read the "
	"function and its callers with grep and cat, and proposed resetting the lookahead "
	"before returning, plus a regression test with a trailing comment.";

PGresult *
run_prepared(PGconn *conn, const char *name, int nparams, const char *const *params)
{
	PGresult   *res = PQexecPrepared(conn, name, nparams, params, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("%s: %s", name, PQerrorMessage(conn));
	return res;
}

/* The context view of a session, in position order. */
void
read_view(PGconn *conn, const char *session, View *view)
{
	const char *params[1] = {session};
	PGresult   *res = run_prepared(conn, "view", 1, params);
	int			i;

	view->n = PQntuples(res);
	view->items = realloc(view->items, sizeof(Item) * (view->n + 1));
	if (!view->items)
		die("out of memory");
	for (i = 0; i < view->n; i++)
	{
		Item	   *it = &view->items[i];

		snprintf(it->id, sizeof(it->id), "%s", PQgetvalue(res, i, 0));
		it->is_summary = strcmp(PQgetvalue(res, i, 1), "summary") == 0;
		it->seq = atoll(PQgetvalue(res, i, 2));
	}
	PQclear(res);
}

/* '{a,b,c}' of items [from, from + n) of the view. */
char *
id_array(const View *view, int from, int n)
{
	size_t		cap = (size_t) n * 66 + 3;
	char	   *buf = malloc(cap);
	size_t		len = 0;
	int			i;

	if (!buf)
		die("out of memory");
	buf[len++] = '{';
	for (i = 0; i < n; i++)
		len += snprintf(buf + len, cap - len, "%s%s", i ? "," : "", view->items[from + i].id);
	buf[len++] = '}';
	buf[len] = '\0';
	return buf;
}

/*
 * One commit_summary named sid over items [from, from + n) of the view, a
 * leaf or a condensation; returns the milliseconds it took.
 */
double
summarise(PGconn *conn, const char *session, const char *sid, const View *view, int from,
		  int n, int condensed)
{
	char		tokens[16];
	char	   *ids = id_array(view, from, n);
	const char *params[6];
	double		t0;
	PGresult   *res;

	snprintf(tokens, sizeof(tokens), "%d", (int) strlen(summary_text) / 4);
	params[0] = session;
	params[1] = sid;
	params[2] = summary_text;
	params[3] = tokens;
	params[4] = ids;
	params[5] = condensed ? "condensed" : "leaf";
	t0 = now_s();
	res = PQexecPrepared(conn, condensed ? "condense" : "leaf", 6, params, NULL, NULL, 0);
	t0 = (now_s() - t0) * 1000;
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("commit_summary (%s, %d items): %s", params[5], n, PQerrorMessage(conn));
	PQclear(res);
	free(ids);
	return t0;
}

/* The next summary of the load's compaction over items [from, from + n). */
static void
commit(PGconn *conn, SizeResult *r, const View *view, int from, int n, int condensed)
{
	char		sid[96];

	snprintf(sid, sizeof(sid), "%s_s%ld", r->session, r->leaves + r->condensations + 1);
	summarise(conn, r->session, sid, view, from, n, condensed);
	if (condensed)
		r->condensations++;
	else
		r->leaves++;
}

/*
 * Compact the view back to VIEW items: leaves over the oldest messages (the
 * summaries are all at the front, the messages after them), then one
 * condensation if too many summaries piled up.
 */
static void
compact(PGconn *conn, SizeResult *r, View *view)
{
	int			stale = 0;		/* view edited locally: leaf ids unknown */

	read_view(conn, r->session, view);
	for (;;)
	{
		int			nsum = 0;
		int			n;

		while (nsum < view->n && view->items[nsum].is_summary)
			nsum++;
		if (nsum > MAX_SUMMARIES)
		{
			if (stale)
			{
				read_view(conn, r->session, view);
				stale = 0;
				continue;
			}
			commit(conn, r, view, 0, nsum, 1);
			read_view(conn, r->session, view);
			continue;
		}
		if (view->n <= VIEW)
			return;
		n = view->n - VIEW + 1;	/* the leaf itself takes one item */
		if (n > LEAF)
			n = LEAF;
		if (n < 2)
			n = 2;
		commit(conn, r, view, nsum, n, 0);
		/* the view now has the leaf at nsum in place of those n messages */
		view->items[nsum].is_summary = 1;
		memmove(&view->items[nsum + 1], &view->items[nsum + n],
				sizeof(Item) * (view->n - nsum - n));
		view->n -= n - 1;
		stale = 1;
	}
}

/* The JSON array of one batch of messages, starting at message number first. */
static size_t
make_batch(char *buf, size_t cap, long first, int n)
{
	size_t		len = 0;
	int			i;

	buf[len++] = '[';
	for (i = 0; i < n; i++)
	{
		long		no = first + i;
		const char *sep = i ? "," : "";

		if (no % 2 == 0)
			len += snprintf(buf + len, cap - len,
							"%s{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"%s\"}]}",
							sep, user_text);
		else if (no % 4 == 1)
			len += snprintf(buf + len, cap - len,
							"%s{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"%s\"},"
							"{\"type\":\"tool\",\"tool_name\":\"grep\",\"tool_call_id\":\"call_%ld\","
							"\"tool_state\":\"completed\",\"input\":{\"pattern\":\"next_line\"},"
							"\"output\":\"%s\"}]}",
							sep, assistant_text, no, tool_output);
		else
			len += snprintf(buf + len, cap - len,
							"%s{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"%s\"}]}",
							sep, assistant_text);
		if (len >= cap - 2)
			die("batch buffer too small");
	}
	buf[len++] = ']';
	buf[len] = '\0';
	return len;
}

/* A new session of that id. */
void
create_session(PGconn *conn, const char *session)
{
	const char *params[1] = {session};
	PGresult   *res = PQexecParams(conn, "SELECT id FROM mnemo.create_session($1)", 1, NULL,
								   params, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("create_session: %s", PQerrorMessage(conn));
	PQclear(res);
}

/* Messages first .. first + n - 1 (n <= BATCH) appended in one call. */
void
append_batch(PGconn *conn, const char *session, long first, int n)
{
	static char batch[BATCH * 1200];
	const char *params[2] = {session, batch};
	PGresult   *res;

	make_batch(batch, sizeof(batch), first, n);
	res = run_prepared(conn, "append", 2, params);
	if (PQntuples(res) != n)
		die("append_messages: %d rows for %d messages", PQntuples(res), n);
	PQclear(res);
}

void
load(PGconn *conn, SizeResult *r)
{
	View		view = {0};
	long		done = 0;
	double		t0 = now_s();
	double		last = t0;

	create_session(conn, r->session);
	while (done < r->size)
	{
		int			n = r->size - done < BATCH ? (int) (r->size - done) : BATCH;

		append_batch(conn, r->session, done, n);
		done += n;
		compact(conn, r, &view);
		if (now_s() - last >= 5 || done == r->size)
		{
			last = now_s();
			fprintf(stderr, "bench/context: %s: %ld/%ld messages, %ld leaves, %ld condensations, "
					"view %d items, %.0f msg/s\n", r->session, done, r->size, r->leaves,
					r->condensations, view.n, done / (last - t0));
		}
	}
	r->load_s = now_s() - t0;
	free(view.items);
}
