/*
 * main.c
 *		mnemo [CONNECTION OPTIONS] COMMAND ...: the connection options, which
 *		psql's manners allow anywhere on the line, and the dispatch to one
 *		file per command through the table below.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The commands, in the order `mnemo --help` lists them. */
static const cli_command *const commands[] = {
	&cli_sessions, &cli_show, &cli_context, &cli_search, &cli_grep, &cli_describe, &cli_expand,
	&cli_export, &cli_import, &cli_tail,
	&cli_chat, &cli_compact, &cli_verify, &cli_checkpoints, &cli_fork, &cli_resume, &cli_delete, &cli_purge, &cli_file,
	&cli_map
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void
usage(FILE *out)
{
	int			width = 0;

	/* the summaries in one column, after the longest name */
	for (size_t i = 0; i < N_COMMANDS; i++)
		if ((int) strlen(commands[i]->name) > width)
			width = (int) strlen(commands[i]->name);
	fputs("Usage: mnemo [-d DB] [-h HOST] [-p PORT] [-U USER] COMMAND [ARGS...]\n"
		  "\n"
		  "Sessions stored by the mnemo PostgreSQL extension, from the command line.\n"
		  "\n"
		  "Commands:\n", out);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-*s  %s\n", width, commands[i]->name, commands[i]->summary);
	fputs("\n"
		  "Connection options (anywhere on the line, as psql takes them):\n"
		  "  -d, --dbname, --db DB  a database name, a libpq connection string or a\n"
		  "                         URI (default: $DATABASE_URL, else the PG* variables)\n"
		  "  -h, --host HOST        the server's host or socket directory (PGHOST)\n"
		  "  -p, --port PORT        the server's port (PGPORT)\n"
		  "  -U, --username USER    the user to connect as (PGUSER)\n"
		  "\n"
		  "Options:\n"
		  "  --help         this help; 'mnemo COMMAND --help' for a command\n"
		  "  --version      the version of mnemo\n"
		  "\n"
		  "Exit status: 0 success, 1 error, 2 usage error, 3 session or message not\n"
		  "found, 4 cannot connect or no usable mnemo extension in the database,\n"
		  "5 compact: the budget is below the session's floor.\n", out);
}

static const cli_command *
find(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

/* The connection options: short form, long form, and where the value goes
 * (NULL: the database; else the libpq variable it sets). */
static const struct
{
	const char *short_name;
	const char *long_name;
	const char *env;
}			conn_options[] = {
	{"-d", "--dbname", NULL}, {NULL, "--db", NULL}, {"-h", "--host", "PGHOST"},
	{"-p", "--port", "PGPORT"}, {"-U", "--username", "PGUSER"}
};

#define N_CONN (sizeof(conn_options) / sizeof(conn_options[0]))

/*
 * Take the connection options out of argv, wherever they are (up to "--"),
 * as -d DB, -dDB, --dbname DB or --dbname=DB: *db gets the database, and -h/-p/-U set PGHOST/PGPORT/PGUSER, which
 * libpq reads for what the connection string leaves out.  A "-h" with
 * nothing after it is the old spelling of --help, left in place.  Returns
 * the new argc, or -1 after a usage error.
 */
static int
take_connection_options(int argc, char **argv, const char **db)
{
	int			out = 1;

	for (int i = 1; i < argc; i++)
	{
		const char *arg = argv[i];
		const char *value = NULL;
		size_t		k;

		if (strcmp(arg, "--") == 0)
		{
			while (i < argc)
				argv[out++] = argv[i++];
			break;
		}
		for (k = 0; k < N_CONN; k++)
		{
			size_t		len = strlen(conn_options[k].long_name);

			if (strncmp(arg, conn_options[k].long_name, len) == 0 && arg[len] == '=')
			{
				value = arg + len + 1;
				break;
			}
			/* -dDB, as psql (getopt) takes it */
			if (conn_options[k].short_name != NULL && strncmp(arg, conn_options[k].short_name, 2) == 0 &&
				arg[2] != '\0')
			{
				value = arg + 2;
				break;
			}
			if (strcmp(arg, conn_options[k].long_name) == 0 ||
				(conn_options[k].short_name != NULL && strcmp(arg, conn_options[k].short_name) == 0))
			{
				if (i + 1 >= argc)
				{
					if (strcmp(arg, "-h") == 0)
						k = N_CONN;		/* help */
					else
					{
						fprintf(stderr, "mnemo: %s needs a value\nTry 'mnemo --help'.\n", arg);
						return -1;
					}
					break;
				}
				value = argv[++i];
				break;
			}
		}
		if (k == N_CONN)
		{
			argv[out++] = argv[i];
			continue;
		}
		if (conn_options[k].env == NULL)
			*db = value;
		else if (setenv(conn_options[k].env, value, 1) != 0)
		{
			perror("mnemo");
			return -1;
		}
	}
	argv[out] = NULL;
	return out;
}

/* A bare database name as a connection string (libpq wants key=value or a
 * URI); malloc'd, or NULL for "use it as it is". */
static char *
conninfo_of(const char *db)
{
	size_t		len = strlen(db);
	char	   *s;
	char	   *o;

	if (strchr(db, '=') != NULL || strncmp(db, "postgres://", 11) == 0 ||
		strncmp(db, "postgresql://", 13) == 0)
		return NULL;
	if ((s = malloc(2 * len + 16)) == NULL)
		return NULL;
	o = s + sprintf(s, "dbname='");
	for (size_t i = 0; i < len; i++)
	{
		if (db[i] == '\'' || db[i] == '\\')
			*o++ = '\\';
		*o++ = db[i];
	}
	strcpy(o, "'");
	return s;
}

int
main(int argc, char **argv)
{
	const char *db = NULL;
	char	   *made = NULL;
	const cli_command *cmd;
	int			i = 1;
	int			rc;

	if ((argc = take_connection_options(argc, argv, &db)) < 0)
		return CLI_USAGE;
	if (db == NULL && getenv("DATABASE_URL") != NULL && *getenv("DATABASE_URL") != '\0')
		db = getenv("DATABASE_URL");
	if (db != NULL && (made = conninfo_of(db)) != NULL)
		db = made;

	while (i < argc && argv[i][0] == '-')
	{
		const char *arg = argv[i];

		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 || strcmp(arg, "-?") == 0)
		{
			usage(stdout);
			free(made);
			return CLI_OK;
		}
		if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0)
		{
			printf("mnemo %d.%d.%d\n", MNEMO_VERSION_MAJOR, MNEMO_VERSION_MINOR,
				   MNEMO_VERSION_PATCH);
			free(made);
			return CLI_OK;
		}
		fprintf(stderr, "mnemo: unknown option %s\nTry 'mnemo --help'.\n", arg);
		free(made);
		return CLI_USAGE;
	}
	if (i >= argc)
	{
		usage(stderr);
		free(made);
		return CLI_USAGE;
	}
	if (strcmp(argv[i], "help") == 0)
	{
		if (i + 1 < argc && (cmd = find(argv[i + 1])) != NULL)
			fputs(cmd->usage, stdout);
		else
			usage(stdout);
		free(made);
		return CLI_OK;
	}
	if ((cmd = find(argv[i])) == NULL)
	{
		fprintf(stderr, "mnemo: unknown command '%s'\nTry 'mnemo --help'.\n", argv[i]);
		free(made);
		return CLI_USAGE;
	}
	rc = cmd->run(db, argc - i, argv + i);
	free(made);
	return rc;
}
