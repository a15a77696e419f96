/*
 * verify.c
 *		mnemo verify SESSION: the losslessness check.  Every message ever
 *		appended (but summaries) is reachable from the context view, as an
 *		item of its own or through the summary DAG, and what the DAG gives
 *		back is the stored message, byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_verify = {
	"verify",
	"check that compaction lost nothing: every message reachable, unchanged",
	"Usage: mnemo verify SESSION\n"
	"\n"
	"Check the session's losslessness: every message ever appended (summaries\n"
	"aside) is reachable from the context view, as an item itself or through\n"
	"the summary DAG (mnemo.expand_summary, recursively), and each message the\n"
	"DAG gives back has the parts of the stored message, byte for byte.  Prints\n"
	"one line per message that fails, then\n"
	"  verify: M messages, R reachable (D in context, S through S summaries), F failed\n"
	"\n"
	"Exit status 0 only when every message passes; 1 when one does not; 3 when\n"
	"the session does not exist.\n",
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

static int
run(const char *db, int argc, char **argv)
{
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

	if ((rc = cli_parse(&cli_verify, argc, argv, NULL, 0, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_messages_get(st, pos[0], NULL, true, &msgs) != MNEMO_OK ||
		mnemo_context_items_get(st, pos[0], &items) != MNEMO_OK)
		goto fail;
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
			printf("summary %s in context: %s\n", it->item_id, mnemo_errmsg(st));
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
				printf("message %s (seq %lld): the DAG gives back different parts\n", m->id,
					   (long long) m->seq);
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
			printf("message %s (seq %lld): not reachable from the context view\n", m->id,
				   (long long) m->seq);
	}
	printf("verify: %zu message%s, %zu reachable (%zu in context, %zu through %zu %s), "
		   "%zu failed\n", total, cli_s((int64_t) total), direct + via_dag, direct, via_dag,
		   summaries, summaries == 1 ? "summary" : "summaries", failed);
	rc = failed == 0 ? CLI_OK : CLI_ERROR;
	goto done;

fail:
	rc = cli_fail(st);
done:
	free(reached);
	mnemo_messages_free(msgs);
	mnemo_context_items_free(items);
	mnemo_store_close(st);
	/* a verdict nobody could read is no pass */
	if (cli_flush_output("the verdict") != CLI_OK && rc == CLI_OK)
		rc = CLI_ERROR;
	return rc;
}
