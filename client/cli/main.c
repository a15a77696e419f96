/*
 * main.c
 *		mnemo [--db CONNINFO] COMMAND ...: the global options and the
 *		dispatch to one file per command.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_command *const commands[] = {
	&cli_sessions, &cli_show, &cli_context, &cli_export, &cli_import, &cli_tail,
	&cli_chat, &cli_compact, &cli_verify, &cli_checkpoints, &cli_file
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void
usage(FILE *out)
{
	fputs("Usage: mnemo [--db CONNINFO] COMMAND [ARGS...]\n"
		  "\n"
		  "Sessions stored by the mnemo PostgreSQL extension, from the command line.\n"
		  "\n"
		  "Commands:\n", out);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fputs("\n"
		  "Options:\n"
		  "  --db CONNINFO  libpq connection string or URI; without it the PG*\n"
		  "                 environment variables (PGHOST, PGDATABASE, ...) are used\n"
		  "  --help         this help; 'mnemo COMMAND --help' for a command\n"
		  "  --version      the version of mnemo\n"
		  "\n"
		  "Exit status: 0 success, 1 error, 2 usage error, 3 session or message not\n"
		  "found, 4 cannot connect or no usable mnemo extension in the database.\n", out);
}

static const cli_command *
find(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

int
main(int argc, char **argv)
{
	const char *db = NULL;
	const cli_command *cmd;
	int			i = 1;

	while (i < argc && argv[i][0] == '-')
	{
		const char *arg = argv[i];

		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
		{
			usage(stdout);
			return CLI_OK;
		}
		if (strcmp(arg, "--version") == 0)
		{
			printf("mnemo %d.%d.%d\n", MNEMO_VERSION_MAJOR, MNEMO_VERSION_MINOR,
				   MNEMO_VERSION_PATCH);
			return CLI_OK;
		}
		if (strcmp(arg, "--db") == 0)
		{
			if (i + 1 >= argc)
			{
				fputs("mnemo: --db needs a value\nTry 'mnemo --help'.\n", stderr);
				return CLI_USAGE;
			}
			db = argv[i + 1];
			i += 2;
			continue;
		}
		if (strncmp(arg, "--db=", 5) == 0)
		{
			db = arg + 5;
			i++;
			continue;
		}
		fprintf(stderr, "mnemo: unknown option %s\nTry 'mnemo --help'.\n", arg);
		return CLI_USAGE;
	}
	if (i >= argc)
	{
		usage(stderr);
		return CLI_USAGE;
	}
	if (strcmp(argv[i], "help") == 0)
	{
		if (i + 1 < argc && (cmd = find(argv[i + 1])) != NULL)
			fputs(cmd->usage, stdout);
		else
			usage(stdout);
		return CLI_OK;
	}
	if ((cmd = find(argv[i])) == NULL)
	{
		fprintf(stderr, "mnemo: unknown command '%s'\nTry 'mnemo --help'.\n", argv[i]);
		return CLI_USAGE;
	}
	return cmd->run(db, argc - i, argv + i);
}
