/*
 * cli.h
 *		What the commands of `mnemo` share (common.c).
 *
 * The command uses libmnemo's public API only.  Exit codes, which scripts
 * may rely on:
 *	0 success; 1 a runtime or database error; 2 a usage error; 3 the session
 *	or message named does not exist; 4 no connection, or no usable mnemo
 *	extension in the database.
 */
#ifndef MNEMO_CLI_H
#define MNEMO_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mnemo.h"

#define CLI_OK 0
#define CLI_ERROR 1
#define CLI_USAGE 2
#define CLI_NOT_FOUND 3
#define CLI_CONNECTION 4
#define CLI_OVER_BUDGET 5

/* cli_parse's answer when --help was asked for and printed: exit 0. */
#define CLI_HELP_SHOWN (-1)

typedef struct cli_command
{
	const char *name;
	const char *summary;		/* one line, for `mnemo --help` */
	const char *usage;			/* the full text of `mnemo NAME --help` */
	int			(*run) (const char *db, int argc, char **argv);
} cli_command;

/* An option of a command: "--name VALUE" (or --name=VALUE) or a flag. */
typedef struct cli_option
{
	const char *name;			/* without the dashes */
	const char **value;			/* for options with a value */
	bool	   *flag;			/* for flags */
} cli_option;

/*
 * Parse argv (argv[0] is the command's name) into the options and the
 * positional arguments, of which there must be min_pos to max_pos.
 * Returns CLI_OK, CLI_HELP_SHOWN, or CLI_USAGE after printing the error.
 */
int			cli_parse(const cli_command *cmd, int argc, char **argv,
					  const cli_option *opts, size_t n_opts,
					  const char **pos, size_t min_pos, size_t max_pos, size_t *n_pos);

/* Print "mnemo CMD: message" and the --help hint to stderr; CLI_USAGE. */
int			cli_usage_error(const cli_command *cmd, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/* An integer argument from min to max; false (after a usage error naming
 * the range and the text) if not. */
bool		cli_parse_count(const cli_command *cmd, const char *option, const char *text,
							int64_t min, int64_t max, int64_t *out);

/* "s" unless n is 1: "%d item%s" */
const char *cli_s(int64_t n);

/* s as a JSON string (NULL: null), for --json output. */
void		cli_json_string(FILE *out, const char *s);

/*
 * The end of a command's output: stdout flushed and checked, as a full disk
 * or a closed pipe shows only then (or in an earlier flush, which left the
 * stream's error flag set).  CLI_OK, or CLI_ERROR after printing
 * "mnemo: writing WHAT: reason"; a command whose output is its answer
 * must not exit 0 without it.
 */
int			cli_flush_output(const char *what);

/* mnemo import --follow (import_follow.c): base is the import's options;
 * runs until SIGTERM or SIGINT (CLI_OK) or a lost connection. */
int			cli_import_follow(mnemo_store *st, const char *path, const mnemo_import_options *base,
							  int interval_ms);

/* The exit code of a libmnemo error. */
int			cli_exit_code(int err);

/* Print "mnemo: <message>" for the handle's last error; its exit code. */
int			cli_fail(mnemo_store *st);

/* Open the store (db NULL: the PG* environment); NULL after printing the
 * error, with *exit_code set. */
mnemo_store *cli_open(const char *db, int *exit_code);

/* A time as 2026-03-02T08:50:29.123Z (UTC) in buf. */
const char *cli_time(char buf[64], int64_t ms);

/*
 * Stored text for a terminal: every control character that is not a newline
 * or a tab (C0, DEL, and C1 as UTF-8) is written as a visible escape (\x1b,
 * \u009b), so a message cannot move the cursor, retitle the window or
 * write to the clipboard.  cli_put_text keeps newlines and tabs;
 * cli_put_line (one line: a title, an error) turns them into spaces.
 */
void		cli_put_text(FILE *out, const char *s, size_t len, bool one_line);
void		cli_put(FILE *out, const char *s);
void		cli_put_line(FILE *out, const char *s);

/*
 * Whether to write colour and bold (ANSI escapes) to out: only to a
 * terminal, and not when NO_COLOR is set and not empty (https://no-color.org),
 * so that pipes, files and people who asked for none get plain text.
 */
bool		cli_color(FILE *out);

/* A message with its parts, as `show` and `tail` print it. */
void		cli_print_message(FILE *out, const mnemo_message *m);

/* A search snippet on one line of stdout, a tool's JSON input or output read
 * as text, without the <b> </b> marks ts_headline put around the matched
 * words: those bold when bold is set. */
void		cli_put_snippet(const char *s, bool bold);

extern const cli_command cli_sessions;
extern const cli_command cli_show;
extern const cli_command cli_context;
extern const cli_command cli_export;
extern const cli_command cli_import;
extern const cli_command cli_tail;
extern const cli_command cli_chat;
extern const cli_command cli_compact;
extern const cli_command cli_verify;
extern const cli_command cli_search;
extern const cli_command cli_grep;
extern const cli_command cli_describe;
extern const cli_command cli_expand;
extern const cli_command cli_delete;
extern const cli_command cli_purge;
extern const cli_command cli_checkpoints;
extern const cli_command cli_fork;
extern const cli_command cli_resume;
extern const cli_command cli_file;
extern const cli_command cli_map;

#endif							/* MNEMO_CLI_H */
