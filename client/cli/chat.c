/*
 * chat.c
 *		mnemo chat: an interactive chat on a stored session, one line of
 *		standard input a turn, the reply streamed to standard output.
 *
 * Everything a turn writes is persisted by mnemo_session_send(); this file
 * only reads lines, prints what streams and reports what the turn did.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_chat = {
	"chat",
	"an interactive chat with a model, streamed and stored as it goes",
	"Usage: mnemo chat [--session ID] [--provider openai|anthropic] [--model M]\n"
	"                  [--system PROMPT] [--base-url URL] [--api-key KEY]\n"
	"                  [--context-limit N]\n"
	"\n"
	"Read one user message per line of standard input (a terminal or a pipe),\n"
	"send it with mnemo_session_send() and print the reply on standard output\n"
	"as it streams.  Every turn is stored as it happens: the user message before\n"
	"the provider is called, the reply's parts as they complete, then the usage,\n"
	"cost and finish reason.  An empty line is skipped; end of input or a line\n"
	"'/quit' ends the chat.  Ctrl-C stops the reply streaming (what arrived is\n"
	"kept, finish reason 'cancelled'); at the prompt it ends the chat.\n"
	"\n"
	"Without --session a new session is created with the provider, model and\n"
	"system prompt given, and its id is printed on standard error.  With\n"
	"--session ID the chat resumes that session: its system prompt, provider\n"
	"and model are kept (--provider and --model override them for this run),\n"
	"and a reply a dead turn left unfinished is marked 'interrupted'.\n"
	"\n"
	"Each tool call the model makes is printed on standard output on a line of\n"
	"its own, '[tool NAME INPUT]'; mnemo chat runs no tools, so each is answered\n"
	"with an error result that the model sees on the next turn.  On standard\n"
	"error: the session line, a line when a turn triggers compaction (the\n"
	"context over its soft threshold: the compaction engine then summarises),\n"
	"and one per failed turn.\n"
	"\n"
	"Options:\n"
	"  --session ID       resume this session (exit 3 if it does not exist)\n"
	"  --provider P       openai or anthropic (default: the session's, else the\n"
	"                     one whose key is set: OPENAI_API_KEY, ANTHROPIC_API_KEY)\n"
	"  --model M          default for a new session: gpt-4o-mini (openai),\n"
	"                     claude-sonnet-4-5 (anthropic)\n"
	"  --system PROMPT    a new session's system prompt\n"
	"  --base-url URL     the provider's API (default OPENAI_BASE_URL or\n"
	"                     ANTHROPIC_BASE_URL, else the public API); a server of\n"
	"                     one's own (llama.cpp, vLLM, Ollama) needs no key\n"
	"  --api-key KEY      the key (default OPENAI_API_KEY or ANTHROPIC_API_KEY);\n"
	"                     beware that other users may see a command line\n"
	"  --context-limit N  the model's context window in tokens (default 128000)\n"
	"\n"
	"Exit status: 0 at the end of input; 1 if a turn failed (the chat goes on\n"
	"after a provider error and exits 1 at the end) or no provider key is set;\n"
	"2 usage error; 3 the session does not exist; 4 no connection.\n",
	run
};

/* What a turn's callbacks share. */
typedef struct chat_state
{
	bool		at_line_start;	/* stdout ends with a newline */
	bool		write_failed;
} chat_state;

/*
 * Ctrl-C: a thread waits for SIGINT (blocked everywhere else) so that it
 * may call mnemo_turn_cancel(), which is not async-signal-safe but is
 * the one call allowed from another thread while a turn runs.
 */
static mnemo_store *chat_store;
static atomic_bool in_turn;

static void *
sigint_thread(void *arg)
{
	sigset_t   *set = arg;
	int			sig;

	for (;;)
	{
		if (sigwait(set, &sig) != 0)
			continue;
		if (atomic_load(&in_turn))
			mnemo_turn_cancel(chat_store);
		else
		{
			/* at the prompt: every turn is committed already */
			static const char msg[] = "\n";

			if (write(STDERR_FILENO, msg, 1) < 0)
				_exit(130);
			_exit(130);
		}
	}
	return NULL;
}

static int
on_part(mnemo_store *st, const mnemo_stream_part *p, void *arg)
{
	chat_state *cs = arg;

	(void) st;
	if (strcmp(p->type, "text") == 0)
	{
		if (p->len > 0)
		{
			cli_put_text(stdout, p->delta, p->len, false);
			if (ferror(stdout))
				cs->write_failed = true;
		}
		if (p->len > 0)
			cs->at_line_start = p->delta[p->len - 1] == '\n';
		/* the point of streaming: each delta shows as it arrives */
		fflush(stdout);
	}
	else if (strcmp(p->type, "reasoning") == 0)
		cli_put_text(stderr, p->delta, p->len, false);
	else if (strcmp(p->type, "tool") == 0)
	{
		if (!cs->at_line_start)
			fputc('\n', stdout);
		fputs("[tool ", stdout);
		cli_put_line(stdout, p->tool_name ? p->tool_name : "?");
		fputc(' ', stdout);
		cli_put_line(stdout, p->tool_input ? p->tool_input : "{}");
		fputs("]\n", stdout);
		fflush(stdout);
		cs->at_line_start = true;
	}
	return 0;
}

/* The compaction the turn runs (the engine): announced on stderr. */
static int
on_compaction(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	(void) st;
	(void) arg;
	if (ev->remote)
		return 0;
	if (ev->type == MNEMO_EVENT_COMPACTION_TRIGGERED)
		fputs("mnemo chat: compaction triggered (context over the soft threshold)\n", stderr);
	else if (ev->type == MNEMO_EVENT_COMPACTION_COMPLETED)
		fprintf(stderr, "mnemo chat: compaction: %s\n", ev->data ? ev->data : "done");
	else if (ev->type == MNEMO_EVENT_COMPACTION_FAILED)
		fputs("mnemo chat: compaction failed\n", stderr);
	return 0;
}

static bool
provider_error(int code)
{
	switch (code)
	{
		case MNEMO_ERR_HTTP:
		case MNEMO_ERR_RATE_LIMITED:
		case MNEMO_ERR_NETWORK:
		case MNEMO_ERR_TIMEOUT:
		case MNEMO_ERR_STREAM:
		case MNEMO_ERR_CANCELLED:
			return true;
		default:
			return false;
	}
}

/* A new session, or the one named, loaded (marking dead turns). */
static int
open_session(mnemo_store *st, const char *id, const char *provider, const char *model,
			 const char *system, mnemo_session **s)
{
	mnemo_new_session spec = MNEMO_NEW_SESSION_INIT;

	if (id != NULL)
	{
		if (mnemo_session_load(st, id, s) != MNEMO_OK)
			return cli_fail(st);
		if (system != NULL && strcmp(system, (*s)->system_prompt) != 0)
			fputs("mnemo chat: --system ignored: a session keeps the system prompt it was created with\n",
				  stderr);
		fputs("session ", stderr);
		cli_put_line(stderr, (*s)->id);
		fprintf(stderr, " resumed: %" PRId64 " messages, provider ", (*s)->last_seq);
		cli_put_line(stderr, *(*s)->provider_id ? (*s)->provider_id : "-");
		fputs(", model ", stderr);
		cli_put_line(stderr, *(*s)->model_id ? (*s)->model_id : "-");
		fputc('\n', stderr);
		return CLI_OK;
	}
	spec.provider_id = provider;
	spec.model_id = model != NULL ? model
		: strcmp(provider, "anthropic") == 0 ? "claude-sonnet-4-5" : "gpt-4o-mini";
	spec.system_prompt = system;
	spec.agent = "chat";
	if (mnemo_session_create(st, &spec, s) != MNEMO_OK)
		return cli_fail(st);
	fprintf(stderr, "session %s created: provider %s, model %s\n", (*s)->id, (*s)->provider_id,
			(*s)->model_id);
	return CLI_OK;
}

/* Answer the tool calls of a turn: mnemo chat runs no tools, and a call left
 * without a result would make the provider refuse the next request. */
static int
answer_tools(mnemo_store *st, const char *session_id, const mnemo_turn *turn)
{
	for (size_t i = 0; i < turn->n_tool_calls; i++)
		if (mnemo_session_tool_result(st, session_id, turn->tool_calls[i].part_id,
									  "mnemo chat runs no tools", true) != MNEMO_OK)
			return cli_fail(st);
	return CLI_OK;
}

static int
chat_loop(mnemo_store *st, const char *sid, const mnemo_turn_options *opts, bool tty)
{
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		len;
	int			rc = CLI_OK;

	for (;;)
	{
		chat_state cs = {.at_line_start = true};
		mnemo_turn *turn = NULL;
		int			err;

		if (tty)
		{
			fputs("> ", stderr);
			fflush(stderr);
		}
		if ((len = getline(&line, &cap, stdin)) < 0)
			break;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		if (strcmp(line, "/quit") == 0)
			break;

		atomic_store(&in_turn, true);
		err = mnemo_session_send(st, sid, opts, line, NULL, 0, on_part, &cs, &turn);
		atomic_store(&in_turn, false);
		if (!cs.at_line_start)
			fputc('\n', stdout);
		if (fflush(stdout) != 0 || cs.write_failed)
		{
			perror("mnemo chat: writing the reply");
			mnemo_turn_free(turn);
			rc = CLI_ERROR;
			break;
		}
		if (turn != NULL && turn->doom_loop)
			fputs("mnemo chat: the model repeats the same tool call (doom loop)\n", stderr);
		if (turn != NULL && answer_tools(st, sid, turn) != CLI_OK)
		{
			mnemo_turn_free(turn);
			rc = CLI_ERROR;
			break;
		}
		mnemo_turn_free(turn);
		if (err != MNEMO_OK)
		{
			int			code = cli_fail(st);

			/* a provider's bad moment: the next line may work */
			if (!provider_error(err))
			{
				rc = code;
				break;
			}
			rc = CLI_ERROR;
		}
	}
	free(line);
	return rc;
}

static int
run(const char *db, int argc, char **argv)
{
	const char *session_id = NULL,
			   *provider = NULL,
			   *model = NULL,
			   *system = NULL,
			   *base_url = NULL,
			   *api_key = NULL,
			   *limit_text = NULL;
	cli_option	opts[] = {
		{"session", &session_id, NULL}, {"provider", &provider, NULL},
		{"model", &model, NULL}, {"system", &system, NULL},
		{"base-url", &base_url, NULL}, {"context-limit", &limit_text, NULL},
		{"api-key", &api_key, NULL}
	};
	mnemo_turn_options to = MNEMO_TURN_OPTIONS_INIT;
	mnemo_session *s = NULL;
	mnemo_store *st;
	static sigset_t set;		/* the thread's, for as long as it lives */
	pthread_t	thread;
	int64_t		limit = 0;
	int			rc;

	if ((rc = cli_parse(&cli_chat, argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
						NULL, 0, 0, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if (provider != NULL && strcmp(provider, "openai") != 0 && strcmp(provider, "anthropic") != 0)
		return cli_usage_error(&cli_chat, "--provider must be openai or anthropic, not '%s'", provider);
	if (limit_text != NULL &&
		!cli_parse_count(&cli_chat, "--context-limit", limit_text, 1, INT32_MAX, &limit))
		return CLI_USAGE;
	/* a new session needs a provider now: it is stored with the session */
	if (session_id == NULL && provider == NULL)
	{
		const char *o = getenv("OPENAI_API_KEY"),
				   *a = getenv("ANTHROPIC_API_KEY");

		provider = o != NULL && *o ? "openai" : a != NULL && *a ? "anthropic" : NULL;
		/* a key or a server of one's own: most speak OpenAI's API */
		if (provider == NULL && (api_key != NULL || base_url != NULL ||
								 (getenv("OPENAI_BASE_URL") && *getenv("OPENAI_BASE_URL"))))
			provider = "openai";
		if (provider == NULL)
		{
			fputs("mnemo chat: no provider: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or --provider\n",
				  stderr);
			return CLI_ERROR;
		}
	}
	if (mnemo_global_init() != MNEMO_OK)
	{
		fputs("mnemo chat: could not initialise libcurl\n", stderr);
		return CLI_ERROR;
	}
	if ((st = cli_open(db, &rc)) == NULL)
	{
		mnemo_global_cleanup();
		return rc;
	}
	if ((rc = open_session(st, session_id, provider, model, system, &s)) == CLI_OK)
	{
		to.provider = provider;
		to.model = model;
		to.base_url = base_url;
		to.api_key = api_key;
		to.context_limit = (int) limit;
		mnemo_event_subscribe(st, MNEMO_EVENT_ANY, on_compaction, NULL);

		chat_store = st;
		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		if (pthread_create(&thread, NULL, sigint_thread, &set) == 0)
			pthread_detach(thread);
		rc = chat_loop(st, s->id, &to, isatty(STDIN_FILENO));
	}
	mnemo_session_free(s);
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return rc;
}
