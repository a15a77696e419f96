/*
 * checkpoints.c
 *		mnemo checkpoints SESSION [--add LABEL]: a session's checkpoints, or
 *		a new one at its end.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_checkpoints = {
	"checkpoints",
	"a session's checkpoints, or a new one at its end",
	"Usage: mnemo checkpoints SESSION [--add LABEL] [--json]\n"
	"\n"
	"List the session's checkpoints in log order (mnemo.list_checkpoints),\n"
	"one line each, tab-separated, under a header line SEQ LABEL KIND CREATED:\n"
	"  SEQ  LABEL  auto|manual  CREATED\n"
	"SEQ is the session's last message seq when the checkpoint was added;\n"
	"auto marks the ones mnemo chat adds after each completed assistant\n"
	"turn (labelled turn-SEQ).  The checkpoints of turns a resume discarded\n"
	"(at the seq of a discarded message) are not listed; a line on stderr\n"
	"counts them.\n"
	"\n"
	"Options:\n"
	"  --add LABEL  add a checkpoint labelled LABEL at the session's end\n"
	"               (mnemo.add_checkpoint) and print it instead\n"
	"  --json       a JSON array instead, one object a checkpoint: seq, label,\n"
	"               auto (true or false), created_at (ms)\n"
	"\n"
	"Exit status 3 when the session does not exist; 1 when the label is\n"
	"taken in the session.\n",
	run
};

static void
print_header(void)
{
	puts("SEQ\tLABEL\tKIND\tCREATED");
}

static void
print_checkpoint(const mnemo_checkpoint *c)
{
	char		when[64];

	printf("%" PRId64 "\t", c->seq);
	cli_put_line(stdout, c->label);
	printf("\t%s\t%s\n", c->is_auto ? "auto" : "manual", cli_time(when, c->created_at));
}

static void
print_json(const mnemo_checkpoint *items, size_t n)
{
	putchar('[');
	for (size_t i = 0; i < n; i++)
	{
		printf("%s\n {\"seq\": %" PRId64 ", \"label\": ", i ? "," : "", items[i].seq);
		cli_json_string(stdout, items[i].label);
		printf(", \"auto\": %s, \"created_at\": %" PRId64 "}", items[i].is_auto ? "true" : "false",
			   items[i].created_at);
	}
	puts(n ? "\n]" : "]");
}

/* Whether checkpoint c labels a message a resume discarded (a turn it
 * went back from): it stays in the session's list, labelling nothing live. */
static bool
discarded(const mnemo_checkpoint *c, const mnemo_messages *gone)
{
	for (size_t j = 0; gone != NULL && j < gone->count; j++)
		if (gone->items[j].seq == c->seq)
			return true;
	return false;
}

static int
run(const char *db, int argc, char **argv)
{
	const char *label = NULL;
	bool		json = false;
	cli_option	opts[] = {{"add", &label, NULL}, {"json", NULL, &json}};
	const char *pos[1];
	mnemo_checkpoints *list = NULL;
	mnemo_checkpoint *added = NULL;
	mnemo_messages *gone = NULL;
	size_t		kept = 0,
				hidden = 0;
	mnemo_store *st;
	int			rc;

	if ((rc = cli_parse(&cli_checkpoints, argc, argv, opts, 2, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (label != NULL ? mnemo_checkpoint_add(st, pos[0], label, false, &added) != MNEMO_OK
		: mnemo_checkpoints_list(st, pos[0], &list) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_store_close(st);
		return rc;
	}
	if (list != NULL && mnemo_discarded_list(st, pos[0], &gone) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_checkpoints_free(list);
		mnemo_store_close(st);
		return rc;
	}
	/* the live ones first, so --json and the table list the same */
	for (size_t i = 0; list != NULL && i < list->count; i++)
	{
		if (discarded(&list->items[i], gone))
			hidden++;
		else
		{
			mnemo_checkpoint tmp = list->items[kept];

			list->items[kept++] = list->items[i];
			list->items[i] = tmp;
		}
	}
	if (json)
		print_json(added != NULL ? added : list->items, added != NULL ? 1 : kept);
	else
		print_header();
	if (!json && added != NULL)
		print_checkpoint(added);
	for (size_t i = 0; !json && list != NULL && i < kept; i++)
		print_checkpoint(&list->items[i]);
	if (hidden > 0)
		fprintf(stderr, "mnemo: %zu checkpoint%s of turns a resume discarded not listed\n", hidden,
				hidden == 1 ? "" : "s");
	mnemo_checkpoint_free(added);
	mnemo_checkpoints_free(list);
	mnemo_messages_free(gone);
	mnemo_store_close(st);
	return cli_flush_output("the checkpoints");
}
