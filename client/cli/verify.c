/*
 * verify.c
 *		mnemo verify SESSION: the losslessness check.  Every message ever
 *		appended (but summaries) is reachable from the context view, as an
 *		item of its own or through the summary DAG, and what the DAG gives
 *		back is the stored message, byte for byte.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_verify = {
	"verify",
	"check that compaction lost nothing: every message reachable, unchanged",
	"Usage: mnemo verify SESSION [--strict] [--json]\n"
	"\n"
	"Check the session's losslessness: every message ever appended (summaries\n"
	"aside) is reachable from the context view, as an item itself or through\n"
	"the summary DAG (mnemo.expand_summary, recursively), and each message the\n"
	"DAG gives back has the parts of the stored message, byte for byte.  Prints\n"
	"one line per message that fails, then\n"
	"  verify: M messages, R reachable (D in context, S through S summaries), F failed\n"
	"A tool call with no result (pending or running) that the log goes on\n"
	"after, which a replay would send the model without its result, is a\n"
	"warning line (\"warning: message ID (seq N): tool call CALL (NAME) has no\n"
	"result, and the log goes on after it\"), counted on the last line; a call\n"
	"in the last message is the agent still at work.\n"
	"\n"
	"Options:\n"
	"  --strict  the calls without a result fail the check too\n"
	"  --json    one JSON object instead: messages, reachable, in_context,\n"
	"            through_summaries, summaries, failed, unanswered (each\n"
	"            {message_id, seq, tool_call_id, tool_name}), problems (each\n"
	"            {message_id, seq, problem}; a summary in context without its\n"
	"            DAG node: its id, seq 0), ok\n"
	"\n"
	"Exit status 0 only when every message passes (and, with --strict, every\n"
	"call has its result); 1 when one does not; 3 when the session does not\n"
	"exist.\n",
	run
};

static const mnemo_message *
find(const mnemo_messages *msgs, const char *id)
{
	for (size_t i = 0; i < msgs->count; i++)
		if (strcmp(msgs->items[i].id, id) == 0)
			return &msgs->items[i];
	return NULL;
}

static bool
same_parts(const mnemo_message *m, const mnemo_part *parts, size_t n)
{
	if (m->n_parts != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(m->parts[i].id, parts[i].id) != 0 ||
			strcmp(m->parts[i].type, parts[i].type) != 0 ||
			strcmp(m->parts[i].content, parts[i].content) != 0)
			return false;
	return true;
}

/* A problem found, kept for --json (or printed at once without it). */
typedef struct problem
{
	const mnemo_message *m;
	const char *what;			/* a constant, or the item id of a summary */
	char	   *detail;			/* malloc'd, or NULL */
	const mnemo_part *call;		/* an unanswered call */
} problem;

typedef struct report
{
	bool		json;
	problem    *items;
	size_t		n;
	bool		oom;
} report;

static void
note(report *r, const mnemo_message *m, const char *what, const char *detail,
	 const mnemo_part *call)
{
	problem    *grown;

	if (!r->json)
	{
		if (call != NULL)
			printf("warning: message %s (seq %lld): tool call %s (%s) has no result, and the "
				   "log goes on after it\n", m->id, (long long) m->seq,
				   call->tool_call_id ? call->tool_call_id : "?",
				   call->tool_name ? call->tool_name : "?");
		else if (m != NULL)
			printf("message %s (seq %lld): %s\n", m->id, (long long) m->seq, what);
		else
			printf("summary %s in context: %s\n", what, detail ? detail : "");
		return;
	}
	if ((grown = realloc(r->items, (r->n + 1) * sizeof(*grown))) == NULL)
	{
		r->oom = true;
		return;
	}
	r->items = grown;
	grown[r->n].m = m;
	grown[r->n].what = what;
	grown[r->n].detail = detail ? strdup(detail) : NULL;
	grown[r->n++].call = call;
}

static void
print_json(const report *r, size_t total, size_t direct, size_t via_dag, size_t summaries,
		   size_t failed, size_t unanswered, bool ok)
{
	bool		first = true;

	printf("{\"messages\": %zu, \"reachable\": %zu, \"in_context\": %zu, "
		   "\"through_summaries\": %zu, \"summaries\": %zu, \"failed\": %zu, "
		   "\"unanswered\": [", total, direct + via_dag, direct, via_dag, summaries, failed);
	(void) unanswered;
	for (size_t i = 0; i < r->n; i++)
	{
		const problem *p = &r->items[i];

		if (p->call == NULL)
			continue;
		printf("%s{\"message_id\": ", first ? "" : ", ");
		cli_json_string(stdout, p->m->id);
		printf(", \"seq\": %lld, \"tool_call_id\": ", (long long) p->m->seq);
		cli_json_string(stdout, p->call->tool_call_id);
		fputs(", \"tool_name\": ", stdout);
		cli_json_string(stdout, p->call->tool_name);
		putchar('}');
		first = false;
	}
	fputs("], \"problems\": [", stdout);
	first = true;
	for (size_t i = 0; i < r->n; i++)
	{
		const problem *p = &r->items[i];

		if (p->call != NULL)
			continue;
		printf("%s{\"message_id\": ", first ? "" : ", ");
		cli_json_string(stdout, p->m != NULL ? p->m->id : p->what);
		printf(", \"seq\": %lld, \"problem\": ", p->m != NULL ? (long long) p->m->seq : 0LL);
		cli_json_string(stdout, p->m != NULL ? p->what : p->detail);
		putchar('}');
		first = false;
	}
	printf("], \"ok\": %s}\n", ok ? "true" : "false");
}

static int
run(const char *db, int argc, char **argv)
{
	bool		strict = false;
	bool		json = false;
	cli_option	opts[] = {{"strict", NULL, &strict}, {"json", NULL, &json}};
	report		rep = {0};
	size_t		unanswered = 0;
	int64_t		last_seq = 0;
	const char *pos[1];
	mnemo_store *st;
	mnemo_messages *msgs = NULL;
	mnemo_context_items *items = NULL;
	char	   *reached = NULL;
	size_t		direct = 0,
				via_dag = 0,
				summaries = 0,
				total = 0,
				failed = 0;
	int			rc;

	if ((rc = cli_parse(&cli_verify, argc, argv, opts, 2, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_messages_get(st, pos[0], NULL, true, &msgs) != MNEMO_OK ||
		mnemo_context_items_get(st, pos[0], &items) != MNEMO_OK)
		goto fail;
	rep.json = json;
	if ((reached = calloc(msgs->count + 1, 1)) == NULL)
	{
		fputs("mnemo: out of memory\n", stderr);
		rc = CLI_ERROR;
		goto done;
	}
	for (size_t i = 0; i < items->count; i++)
	{
		const mnemo_context_item *it = &items->items[i];
		mnemo_expansion *e = NULL;
		const mnemo_message *m;

		if (strcmp(it->item_type, "message") == 0)
		{
			if ((m = find(msgs, it->item_id)) != NULL && !reached[m - msgs->items])
			{
				reached[m - msgs->items] = 1;
				direct++;
			}
			continue;
		}
		summaries++;
		if (mnemo_summary_expand(st, pos[0], it->item_id, true, &e) != MNEMO_OK)
		{
			/* a summary with no node: what it replaced cannot be reached */
			note(&rep, NULL, it->item_id, mnemo_errmsg(st), NULL);
			continue;
		}
		for (size_t j = 0; j < e->count; j++)
		{
			const mnemo_expansion_row *r = &e->items[j];

			if (strcmp(r->item_type, "message") != 0 || (m = find(msgs, r->item_id)) == NULL ||
				reached[m - msgs->items])
				continue;
			if (!same_parts(m, r->parts, r->n_parts))
			{
				note(&rep, m, "the DAG gives back different parts", NULL, NULL);
				reached[m - msgs->items] = 2;
				continue;
			}
			reached[m - msgs->items] = 1;
			via_dag++;
		}
		mnemo_expansion_free(e);
	}
	for (size_t i = 0; i < msgs->count; i++)
	{
		const mnemo_message *m = &msgs->items[i];

		if (m->is_summary)
			continue;
		total++;
		if (reached[i] == 1)
			continue;
		failed++;
		if (reached[i] == 0)
			note(&rep, m, "not reachable from the context view", NULL, NULL);
	}
	/* calls left without a result in the middle of the log */
	for (size_t i = 0; i < msgs->count; i++)
		if (msgs->items[i].seq > last_seq)
			last_seq = msgs->items[i].seq;
	for (size_t i = 0; i < msgs->count; i++)
	{
		const mnemo_message *m = &msgs->items[i];

		if (m->seq == last_seq)
			continue;
		for (size_t k = 0; k < m->n_parts; k++)
		{
			const mnemo_part *p = &m->parts[k];

			if (strcmp(p->type, "tool") != 0 || p->tool_state == NULL ||
				(strcmp(p->tool_state, "pending") != 0 && strcmp(p->tool_state, "running") != 0))
				continue;
			unanswered++;
			note(&rep, m, NULL, NULL, p);
		}
	}
	if (rep.oom)
	{
		fputs("mnemo: out of memory\n", stderr);
		rc = CLI_ERROR;
		goto done;
	}
	rc = failed == 0 && (!strict || unanswered == 0) ? CLI_OK : CLI_ERROR;
	if (json)
		print_json(&rep, total, direct, via_dag, summaries, failed, unanswered, rc == CLI_OK);
	else
	{
		printf("verify: %zu message%s, %zu reachable (%zu in context, %zu through %zu %s), "
			   "%zu failed", total, cli_s((int64_t) total), direct + via_dag, direct, via_dag,
			   summaries, summaries == 1 ? "summary" : "summaries", failed);
		if (unanswered > 0)
			printf("; %zu tool call%s without a result%s", unanswered,
				   cli_s((int64_t) unanswered), strict ? " (--strict: failed)" : "");
		putchar('\n');
	}
	goto done;

fail:
	rc = cli_fail(st);
done:
	for (size_t i = 0; i < rep.n; i++)
		free(rep.items[i].detail);
	free(rep.items);
	free(reached);
	mnemo_messages_free(msgs);
	mnemo_context_items_free(items);
	mnemo_store_close(st);
	/* a verdict nobody could read is no pass */
	if (cli_flush_output("the verdict") != CLI_OK && rc == CLI_OK)
		rc = CLI_ERROR;
	return rc;
}
