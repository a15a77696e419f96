/*
 * common.c
 *		What the commands of `mnemo` share: argument parsing, errors and
 *		exit codes, opening the store, printing a message.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int
cli_usage_error(const cli_command *cmd, const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "mnemo %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'mnemo %s --help'.\n", cmd->name);
	return CLI_USAGE;
}

static const cli_option *
find_option(const cli_option *opts, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

int
cli_parse(const cli_command *cmd, int argc, char **argv, const cli_option *opts, size_t n_opts,
		  const char **pos, size_t min_pos, size_t max_pos, size_t *n_pos)
{
	bool		options_done = false;
	size_t		n = 0;

	for (int i = 1; i < argc; i++)
	{
		const char *arg = argv[i];

		if (!options_done && strcmp(arg, "--") == 0)
		{
			options_done = true;
			continue;
		}
		if (!options_done && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0))
		{
			fputs(cmd->usage, stdout);
			return CLI_HELP_SHOWN;
		}
		if (!options_done && arg[0] == '-' && arg[1] == '-')
		{
			const char *name = arg + 2;
			const char *eq = strchr(name, '=');
			size_t		len = eq ? (size_t) (eq - name) : strlen(name);
			const cli_option *o = find_option(opts, n_opts, name, len);

			if (o == NULL)
				return cli_usage_error(cmd, "unknown option --%.*s", (int) len, name);
			if (o->flag != NULL)
			{
				if (eq != NULL)
					return cli_usage_error(cmd, "--%s takes no value", o->name);
				*o->flag = true;
			}
			else if (eq != NULL)
				*o->value = eq + 1;
			else if (i + 1 < argc)
				*o->value = argv[++i];
			else
				return cli_usage_error(cmd, "--%s needs a value", o->name);
			continue;
		}
		if (!options_done && arg[0] == '-' && arg[1] != '\0')
			return cli_usage_error(cmd, "unknown option %s", arg);
		if (n == max_pos)
			return cli_usage_error(cmd, "unexpected argument '%s'", arg);
		pos[n++] = arg;
	}
	if (n < min_pos)
		return cli_usage_error(cmd, "missing argument");
	if (n_pos != NULL)
		*n_pos = n;
	return CLI_OK;
}

bool
cli_parse_count(const cli_command *cmd, const char *option, const char *text, int64_t min,
				int64_t max, int64_t *out)
{
	char	   *end;
	long long	v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || text[0] == '+' ||
		text[0] == ' ' || v > max || v < min)
	{
		cli_usage_error(cmd, "%s must be an integer from %" PRId64 " to %" PRId64 ", not '%s'",
						option, min, max, text);
		return false;
	}
	*out = v;
	return true;
}

const char *
cli_s(int64_t n)
{
	return n == 1 ? "" : "s";
}

void
cli_json_string(FILE *out, const char *s)
{
	if (s == NULL)
	{
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (; *s; s++)
	{
		unsigned char c = (unsigned char) *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c == '\r')
			fputs("\\r", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

int
cli_flush_output(const char *what)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return CLI_OK;
	fprintf(stderr, "mnemo: writing %s: %s\n", what, errno != 0 ? strerror(errno) : "write error");
	return CLI_ERROR;
}

int
cli_exit_code(int err)
{
	switch (err)
	{
		case MNEMO_OK:
			return CLI_OK;
		case MNEMO_ERR_SESSION_NOT_FOUND:
		case MNEMO_ERR_MESSAGE_NOT_FOUND:
		case MNEMO_ERR_PART_NOT_FOUND:
		case MNEMO_ERR_CHECKPOINT_NOT_FOUND:
		case MNEMO_ERR_NOT_FOUND:
			return CLI_NOT_FOUND;
		case MNEMO_ERR_CONNECTION:
		case MNEMO_ERR_UNINITIALIZED:
		case MNEMO_ERR_VERSION_MISMATCH:
			return CLI_CONNECTION;
		case MNEMO_ERR_OVER_BUDGET:
			return CLI_OVER_BUDGET;
		default:
			return CLI_ERROR;
	}
}

int
cli_fail(mnemo_store *st)
{
	int			code = mnemo_errcode(st);
	const char *msg = mnemo_errmsg(st);

	fputs("mnemo: ", stderr);
	cli_put_line(stderr, *msg ? msg : mnemo_strerror(code));
	fputc('\n', stderr);
	return cli_exit_code(code);
}

mnemo_store *
cli_open(const char *db, int *exit_code)
{
	mnemo_store *st = mnemo_store_open(db);

	if (st == NULL)
	{
		fprintf(stderr, "mnemo: out of memory\n");
		*exit_code = CLI_ERROR;
		return NULL;
	}
	if (mnemo_errcode(st) != MNEMO_OK)
	{
		*exit_code = cli_fail(st);
		mnemo_store_close(st);
		return NULL;
	}
	*exit_code = CLI_OK;
	return st;
}

const char *
cli_time(char buf[64], int64_t ms)
{
	time_t		secs = (time_t) (ms / 1000);
	struct tm	tm;

	if (ms <= 0 || gmtime_r(&secs, &tm) == NULL)
	{
		strcpy(buf, "-");
		return buf;
	}
	snprintf(buf, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (ms % 1000));
	return buf;
}

void
cli_put_text(FILE *out, const char *s, size_t len, bool one_line)
{
	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c == '\n' || c == '\t')
			fputc(one_line ? ' ' : c, out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\x%02x", c);
		else if (c == 0xc2 && i + 1 < len &&
				 (unsigned char) s[i + 1] >= 0x80 && (unsigned char) s[i + 1] <= 0x9f)
			fprintf(out, "\\u%04x", (unsigned char) s[++i]);
		else
			fputc(c, out);
	}
}

void
cli_put(FILE *out, const char *s)
{
	cli_put_text(out, s, strlen(s), false);
}

void
cli_put_line(FILE *out, const char *s)
{
	cli_put_text(out, s, strlen(s), true);
}

bool
cli_color(FILE *out)
{
	const char *no_color = getenv("NO_COLOR");

	return isatty(fileno(out)) && (no_color == NULL || no_color[0] == '\0');
}

/* Text, every line indented by two spaces; a final newline added. */
static void
print_block(FILE *out, const char *label, const char *text)
{
	const char *p = text;

	if (label != NULL)
		fprintf(out, "  %s:\n", label);
	while (*p != '\0')
	{
		const char *nl = strchr(p, '\n');
		size_t		len = nl ? (size_t) (nl - p) : strlen(p);

		fputs(label != NULL ? "    " : "  ", out);
		cli_put_text(out, p, len, false);
		fputc('\n', out);
		p += len;
		if (*p == '\n')
			p++;
	}
}

/* The base64 bytes of an image shown before its size (print_image). */
#define IMAGE_DATA_SHOWN 16

/*
 * An image part's content with a long base64 "data" shortened to its first
 * bytes and its size: show is read on a terminal, and a pasted screenshot
 * is hundreds of KB of base64 on one line (show --json and export keep it
 * whole).  jsonb prints shorter keys first, so the first "data" is the
 * part's own (one in its metadata comes later); base64 holds no quote or
 * backslash, so the value ends at the next quote.  Anything else is shown
 * as it is.
 */
static void
print_image(FILE *out, const char *content)
{
	static const char key[] = "\"data\": \"";
	const char *from = strstr(content, key);
	const char *end;
	char	   *text;
	size_t		len;

	if (from == NULL)
	{
		print_block(out, NULL, content);
		return;
	}
	from += strlen(key);
	len = strspn(from, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=");
	end = from + len;
	if (*end != '"' || len <= 4 * IMAGE_DATA_SHOWN ||
		(text = malloc(strlen(content) + 128)) == NULL)
	{
		print_block(out, NULL, content);
		return;
	}
	snprintf(text, strlen(content) + 128, "%.*s... (%zu bytes of base64: mnemo show --json has them)%s",
			 (int) (from - content) + IMAGE_DATA_SHOWN, content, len, end);
	print_block(out, NULL, text);
	free(text);
}

static void
print_part(FILE *out, const mnemo_part *p)
{
	char		when[64];

	fputc('[', out);
	cli_put_line(out, p->type);
	if (p->tool_name != NULL)
	{
		fputc(' ', out);
		cli_put_line(out, p->tool_name);
	}
	if (p->tool_call_id != NULL)
	{
		fputc(' ', out);
		cli_put_line(out, p->tool_call_id);
	}
	if (p->tool_state != NULL)
		fprintf(out, " %s", p->tool_state);
	fputs("] ", out);
	cli_put_line(out, p->id);
	if (p->compacted_at != 0)
		fprintf(out, "  COMPACTED %s", cli_time(when, p->compacted_at));
	fprintf(out, "  (%d token%s)\n", p->token_estimate, cli_s(p->token_estimate));

	if (strcmp(p->type, "tool") == 0)
	{
		if (p->tool_input != NULL)
			print_block(out, "input", p->tool_input);
		if (p->tool_output != NULL)
			print_block(out, "output", p->tool_output);
		if (p->error_message != NULL)
			print_block(out, "error", p->error_message);
	}
	else if (p->text != NULL)
		print_block(out, NULL, p->text);
	else if (strcmp(p->type, "image") == 0)
		print_image(out, p->content);
	else
		print_block(out, NULL, p->content);
}

void
cli_print_message(FILE *out, const mnemo_message *m)
{
	char		when[64];
	const mnemo_tokens *t = &m->tokens;

	fprintf(out, "--- #%" PRId64 " %s%s ", m->seq, m->role, m->is_summary ? " (summary)" : "");
	cli_put_line(out, m->id);
	fprintf(out, "  %s", cli_time(when, m->created_at));
	if (m->model_id[0] != '\0')
	{
		fputs("  model ", out);
		cli_put_line(out, m->model_id);
	}
	if (t->input || t->output || t->cache_read || t->cache_write || t->reasoning)
		fprintf(out, "  tokens in %" PRId64 " out %" PRId64 " cache_read %" PRId64
				" cache_write %" PRId64 " reasoning %" PRId64,
				t->input, t->output, t->cache_read, t->cache_write, t->reasoning);
	if (m->cost != 0)
		fprintf(out, "  cost %g", m->cost);
	if (m->finish_reason != NULL)
	{
		fputs("  finish ", out);
		cli_put_line(out, m->finish_reason);
	}
	fprintf(out, "\n");
	for (size_t i = 0; i < m->n_parts; i++)
		print_part(out, &m->parts[i]);
}

/*
 * The length of the mark at p that ts_headline puts around each matched
 * word (its defaults, <b> and </b>: mnemo.search asks for no others), or 0.
 */
static size_t
mark_length(const char *p)
{
	if (strncmp(p, "<b>", 3) == 0)
		return 3;
	if (strncmp(p, "</b>", 4) == 0)
		return 4;
	return 0;
}

/*
 * A snippet made of a tool's input or output reads as text, not as the JSON
 * it is stored as: {"thought": "I'll count", "n": 2} shows as
 * thought: I'll count, n: 2, escapes (\n, \", ...) as what they stand
 * for, a line break as a space.  Malloc'd; NULL when out of memory.
 */
static char *
tidy(const char *s)
{
	static const struct
	{
		const char *json;
		const char *text;
	}			seq[] = {
		{"\": \"", ": "}, {"\", \"", ", "}, {"\":", ":"}, {", \"", ", "}, {"{\"", ""},
		{"\"}", ""}, {"[\"", ""}, {"\"]", ""}, {"\\n", " "}, {"\\t", " "}, {"\\r", " "},
		{"\\\"", "\""}, {"\\\\", "\\"}, {"\\/", "/"}
	};
	char	   *out = malloc(strlen(s) + 1);
	char	   *o = out;

	if (out == NULL)
		return NULL;
	while (*s != '\0')
	{
		size_t		i;

		for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
			if (strncmp(s, seq[i].json, strlen(seq[i].json)) == 0)
				break;
		if (i == sizeof(seq) / sizeof(seq[0]))
		{
			*o++ = *s == '\n' || *s == '\t' ? ' ' : *s;
			s++;
			continue;
		}
		memcpy(o, seq[i].text, strlen(seq[i].text));
		o += strlen(seq[i].text);
		s += strlen(seq[i].json);
	}
	*o = '\0';
	return out;
}

/*
 * The snippet on one line without its marks, which read as part of the
 * message: the matched words bold instead when bold is set.  The text
 * between the marks goes through cli_put_text, so a stored escape sequence
 * stays visible and only ours reach the terminal.
 */
void
cli_put_snippet(const char *snippet, bool bold)
{
	char	   *text = tidy(snippet);
	const char *s = text != NULL ? text : snippet;
	const char *run = s;
	bool		in_mark = false;
	size_t		n;

	for (const char *p = s; *p != '\0'; p += n ? n : 1)
	{
		if ((n = mark_length(p)) == 0)
			continue;
		cli_put_text(stdout, run, (size_t) (p - run), true);
		in_mark = p[1] != '/';
		if (bold)
			fputs(in_mark ? "\033[1m" : "\033[0m", stdout);
		run = p + n;
	}
	cli_put_line(stdout, run);
	/* a snippet cut inside a mark must not leave the terminal bold */
	if (bold && in_mark)
		fputs("\033[0m", stdout);
	free(text);
}
