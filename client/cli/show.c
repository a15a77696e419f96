/*
 * show.c
 *		mnemo show SESSION: the session and every message with its parts.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_show = {
	"show",
	"a session's messages with their parts, tombstones marked",
	"Usage: mnemo show SESSION [--json]\n"
	"\n"
	"Print the session (id, times, agent, model, title, message count), then\n"
	"every message in seq order: a line\n"
	"  --- #SEQ ROLE ID CREATED  [model M] [tokens ...] [cost C] [finish F]\n"
	"followed by its parts, each a line\n"
	"  [TYPE [TOOL CALL_ID STATE]] PART_ID  [COMPACTED TIME]  (N tokens)\n"
	"and its content indented by two spaces: the text, or for a tool part its\n"
	"input, output and error; an image's base64 data is shortened to its size\n"
	"(--json has it whole).  A tombstoned part (pruned from the context) is\n"
	"marked COMPACTED with the time; its content is still shown, since mnemo\n"
	"never deletes it.  Times are UTC.\n"
	"\n"
	"Options:\n"
	"  --json  the session as JSON Lines instead: the export format of 'mnemo\n"
	"          export' (a session header line, then one message a line,\n"
	"          and a line for each checkpoint)\n"
	"\n"
	"Exit status 3 when the session does not exist.\n",
	run
};

static int
run(const char *db, int argc, char **argv)
{
	bool		json = false;
	cli_option	opts[] = {{"json", NULL, &json}};
	const char *pos[1];
	mnemo_session *s = NULL;
	mnemo_messages *list = NULL;
	mnemo_store *st;
	char		created[64],
				updated[64];
	int			rc;

	if ((rc = cli_parse(&cli_show, argc, argv, opts, 1, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (json)
	{
		rc = mnemo_export_jsonl(st, pos[0], stdout) == MNEMO_OK ? CLI_OK : cli_fail(st);
		mnemo_store_close(st);
		return rc;
	}
	if (mnemo_session_get(st, pos[0], &s) != MNEMO_OK ||
		mnemo_messages_get(st, pos[0], NULL, true, &list) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_session_free(s);
		mnemo_store_close(st);
		return rc;
	}
	fputs("session   ", stdout);
	cli_put_line(stdout, s->id);
	printf("%s\n", s->is_active ? "" : " (inactive)");
	if (s->parent_id != NULL)
	{
		fputs("parent    ", stdout);
		cli_put_line(stdout, s->parent_id);
		putchar('\n');
	}
	printf("created   %s\nupdated   %s\n", cli_time(created, s->created_at),
		   cli_time(updated, s->updated_at));
	fputs("agent     ", stdout);
	cli_put_line(stdout, s->agent);
	fputs("\nmodel     ", stdout);
	cli_put_line(stdout, s->model_id);
	fputs("\nprovider  ", stdout);
	cli_put_line(stdout, s->provider_id);
	putchar('\n');
	if (s->title != NULL)
	{
		printf("title     ");
		cli_put_line(stdout, s->title);
		printf("\n");
	}
	printf("messages  %zu\n", list->count);
	for (size_t i = 0; i < list->count; i++)
	{
		printf("\n");
		cli_print_message(stdout, &list->items[i]);
	}
	mnemo_messages_free(list);
	mnemo_session_free(s);
	mnemo_store_close(st);
	return cli_flush_output("the session");
}
