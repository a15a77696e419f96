/*
 * provider-server: a scripted fake of the OpenAI Chat Completions and
 * Anthropic Messages streaming APIs, for mnemo's client tests, demo and
 * send benchmark.
 *
 * The server is a handful of files sharing this header:
 *   main.c    command line, listening socket, port file, signals
 *   http.c    one thread per connection: HTTP/1.1 requests in, responses out
 *             (chunked framing, wire chunking, delays, stalls, drops), the
 *             request log
 *   http_read.c  reading one request: head, Content-Length or chunked body
 *   script.c  the script file: one reply per `reply` line and its directives
 *   script_line.c  a line of it: tokens, typed arguments, file:line errors
 *   render.c  a reply and a request turned into the provider's bytes: SSE
 *             events and non-streaming messages (render_stream.c: the two
 *             providers' streams; render.h: what the two share)
 *   errors.c  the providers' HTTP error bodies and status lines
 *   json.c    the little JSON the server needs: a growable buffer, string
 *             escaping and decoding, validation, minifying, key lookup
 *
 * Everything a reply needs is decided when the script is loaded; a reply is
 * immutable afterwards, so connection threads read it without locks.  The
 * only shared mutable state (which reply comes next, counters, the log) is
 * behind one mutex in http.c.
 */
#ifndef PROVIDER_SERVER_PS_H
#define PROVIDER_SERVER_PS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- json.c ------------------------------------------------------------ */

typedef struct buf
{
	char	   *p;
	size_t		len;
	size_t		cap;
} buf;

void		buf_put(buf *b, const void *data, size_t n);
void		buf_puts(buf *b, const char *s);
void		buf_printf(buf *b, const char *fmt,...) __attribute__((format(printf, 2, 3)));
void		buf_free(buf *b);
/* append s[0..n) as a quoted JSON string (UTF-8 passes through as is) */
void		buf_json_str(buf *b, const char *s, size_t n);
void		buf_json_cstr(buf *b, const char *s);

void	   *xmalloc(size_t n);
void	   *xrealloc(void *p, size_t n);
char	   *xstrdup(const char *s);
char	   *xmemdup(const char *s, size_t n);
_Noreturn void die(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/*
 * Parse a JSON string literal starting at *p (which must point at '"'),
 * decoding escapes into out (NUL-terminated, may contain NULs from \u0000).
 * Advances *p past the closing quote.  Returns false on a malformed literal.
 */
bool		json_decode_string(const char **p, const char *end, buf *out);

/* true when [s, s+n) is exactly one JSON value (RFC 8259), blanks around */
bool		json_valid(const char *s, size_t n);
/* append [s, s+n), which must be valid JSON, without insignificant blanks */
void		json_minify(buf *out, const char *s, size_t n);

/*
 * Look up a member of the object [s, s+n) by a path of keys (NULL-ended).
 * On success sets *vs and *vn to the member's raw value and returns true.
 */
bool		json_lookup(const char *s, size_t n, const char *const *path,
						const char **vs, size_t *vn);
/* decoded string value at path, or NULL (caller frees) */
char	   *json_get_string(const char *s, size_t n, const char *const *path);
/* 1 true, 0 false, -1 absent or not a boolean */
int			json_get_bool(const char *s, size_t n, const char *const *path);
/* number of elements of the array at path, -1 if not an array */
long		json_array_length(const char *s, size_t n, const char *const *path);

/* ---- script.c ---------------------------------------------------------- */

typedef enum dialect
{
	DIALECT_NONE = 0,
	DIALECT_OPENAI,
	DIALECT_ANTHROPIC
} dialect;

typedef enum item_kind
{
	ITEM_TEXT,
	ITEM_THINKING,
	ITEM_TOOL
} item_kind;

/* one content block of a reply: its full text and how it is cut in deltas */
typedef struct item
{
	item_kind	kind;
	char	   *text;			/* text, thinking, or the tool's arguments */
	size_t		len;
	size_t	   *cuts;			/* piece i is text[cuts[i] .. cuts[i+1]) */
	size_t		npieces;		/* cuts has npieces + 1 entries */
	char	   *name;			/* tool name */
	char	   *id;				/* tool call id, NULL = generated */
	char	   *signature;		/* thinking signature, NULL = none */
	long		index;			/* OpenAI tool index, -1 = automatic */
} item;

/* bytes put in the event list before content event `at` */
typedef enum insert_kind
{
	INSERT_PING,				/* Anthropic ping event / OpenAI ": ping" */
	INSERT_KEEPALIVE,			/* ": keep-alive" comment */
	INSERT_RAW					/* given bytes, as is */
} insert_kind;

typedef struct insert
{
	insert_kind kind;
	long		at;
	char	   *bytes;
	size_t		len;
} insert;

typedef struct header
{
	char	   *line;			/* "name: value" */
} header;

typedef struct extra_field
{
	char	   *name;
	char	   *json;			/* raw JSON value */
} extra_field;

/* where a cut (stall, drop) happens: after `at` events or `byte` bytes */
typedef struct cutpoint
{
	bool		set;
	long		at;				/* -1 unless given */
	long		byte;			/* -1 unless given */
} cutpoint;

enum usage_field
{
	U_INPUT = 1 << 0,
	U_OUTPUT = 1 << 1,
	U_CACHE_READ = 1 << 2,
	U_CACHE_WRITE = 1 << 3,
	U_REASONING = 1 << 4,
	U_START_OUTPUT = 1 << 5
};

enum chunk_mode
{
	CHUNK_EVENT = 0,			/* one write per SSE event (what servers do) */
	CHUNK_ALL,					/* the whole body in one write */
	CHUNK_SIZES,				/* the given sizes, cycled */
	CHUNK_RANDOM				/* random sizes 1..max from a seed */
};

enum include_usage_mode
{
	INCLUDE_USAGE_REQUEST = 0,	/* as the real API: only when asked */
	INCLUDE_USAGE_ALWAYS,
	INCLUDE_USAGE_NEVER
};

typedef struct reply
{
	int			line;			/* line of its `reply` directive */
	long		repeat;			/* times served; 0 = forever */
	char	   *label;

	/* content */
	item	   *items;
	size_t		nitems;
	buf		   *raws;			/* `raw` lines: the whole body, verbatim */
	size_t		nraws;

	/* metadata */
	char	   *id;
	char	   *model;
	bool		model_none;
	long long	created;
	bool		created_set;
	bool		created_none;
	char	   *fingerprint;
	char	   *service_tier;
	bool		logprobs;
	bool		refusal;
	bool		usage_null;
	extra_field *extras;
	size_t		nextras;
	long long	usage[6];		/* input, output, cache_read, cache_write,
								 * reasoning, start_output */
	unsigned	usage_given;	/* U_* bits */
	bool		usage_directive;
	bool		usage_none;
	bool		delta_usage_full;
	char	   *finish;
	char	   *stop_sequence;
	char	   *reasoning_field;

	/* deviations */
	bool		no_done;
	bool		whole_tools;
	bool		interleave_tools;
	long		tool_index_base;
	int			include_usage;	/* enum include_usage_mode */
	bool		pings_set;		/* `ping` given: no default ping */
	insert	   *inserts;
	size_t		ninserts;
	int			line_ending;	/* 0 LF, 1 CRLF, 2 CR */

	/* failures */
	int			status;			/* 0 = 200 stream; else an HTTP error */
	char	   *err_type;
	char	   *err_message;
	char	   *err_code;		/* raw JSON */
	char	   *err_param;		/* raw JSON */
	char	   *err_body;		/* whole body, verbatim */
	header	   *headers;
	size_t		nheaders;
	bool		mid_error;
	long		mid_error_at;
	char	   *mid_type;
	char	   *mid_message;
	char	   *mid_code;		/* raw JSON */
	bool		mid_done;
	long		truncate_at;	/* -1 = no */
	cutpoint	drop;
	bool		drop_rst;
	cutpoint	stall;
	double		stall_seconds;
	bool		stall_close;
	long		stall_keepalive_ms;
	long		wait_ms;

	/* wire */
	int			chunk_mode;
	long	   *chunk_sizes;
	size_t		nchunk_sizes;
	uint64_t	chunk_seed;
	long		chunk_max;
	long		delay_ms;
	bool		framing_close;
} reply;

typedef struct script
{
	reply	   *replies;
	size_t		nreplies;
} script;

/* load and check a script; on an error prints file:line: ... and exits 2 */
void		script_load(script *s, const char *path);
void		script_free(script *s);

/* ---- script_line.c ----------------------------------------------------- */

typedef enum tok_kind
{
	TOK_WORD,
	TOK_STRING,
	TOK_KV
} tok_kind;

typedef struct token
{
	tok_kind	kind;
	char	   *key;			/* TOK_KV */
	char	   *val;			/* word, decoded string, or value */
	size_t		len;			/* of val (strings may hold NULs) */
	bool		quoted;			/* val came from a string literal */
} token;

typedef struct line_ctx
{
	const char *path;
	int			lineno;
	token	   *tok;
	size_t		ntok;
	bool	   *used;			/* which tokens a directive consumed */
} line_ctx;

/* file:line, the message, and exit(2): a script is checked whole at load */
_Noreturn void line_fail(const line_ctx *lc, const char *fmt,...) __attribute__((format(printf, 2, 3)));
/* the line's tokens into lc (none used yet) */
void		line_tokenize(line_ctx *lc, const char *s);
void		line_tokens_free(line_ctx *lc);
/* the value of key=..., or NULL; marks it used */
const token *line_kv(line_ctx *lc, const char *key);
/* positional argument n (1-based among non-KV tokens), or NULL; marks it used */
const token *line_pos(line_ctx *lc, size_t n);
const token *line_need_pos(line_ctx *lc, size_t n, const char *what);
size_t		line_npos(const line_ctx *lc);
/* fails naming the first token no directive used */
void		line_all_used(line_ctx *lc);
long long	line_to_ll(line_ctx *lc, const token *t, const char *what, long long min, long long max);
double		line_to_double(line_ctx *lc, const token *t, const char *what);
/* a comma-separated list of integers >= min */
long	   *line_to_list(line_ctx *lc, const token *t, const char *what, long min, size_t *n);
/* a raw JSON value for an error field (a bare null, true, false or number is itself) */
char	   *line_to_json_value(const token *t);

/* ---- render.c ---------------------------------------------------------- */

/* what the renderer needs to know about the request it answers */
typedef struct request_info
{
	dialect		dialect;
	bool		stream;
	bool		include_usage;	/* stream_options.include_usage was true */
	const char *model;			/* from the body, may be NULL */
	size_t		body_len;
	long		number;			/* request number, from 1 */
	long		first_tool_id;	/* ids for tools without one */
} request_info;

/* a rendered body: bytes and where each event starts (for at=K cuts) */
typedef struct rendered
{
	buf			body;
	size_t	   *event_offsets;	/* nevents + 1 entries, last = body.len */
	size_t		nevents;
	const char *content_type;
} rendered;

/* the number of tool calls a reply makes (to reserve generated ids) */
size_t		reply_tool_count(const reply *r);
/* the SSE stream, or the non-streaming JSON when !ri->stream */
void		render_reply(const reply *r, const request_info *ri, rendered *out);
/* an HTTP error body in the dialect's shape (status from r or given) */
/* type, message, code (raw JSON) NULL = the reply's or the default */
void		render_error(const reply *r, const request_info *ri, int status,
						 const char *type, const char *message, const char *code,
						 rendered *out);
/* the keep-alive the dialect sends while stalling */
void		render_keepalive(const request_info *ri, buf *out);
void		rendered_free(rendered *rd);
const char *status_reason(int status);

/* ---- http.c ------------------------------------------------------------ */

typedef struct server_config
{
	const script *script;
	int			log_fd;			/* -1 = no log */
	const char *key;			/* accepted key; NULL = any key */
	bool		keyless;		/* a request without a key is served (a
								 * local server's manners) */
	bool		lenient;		/* do not enforce the APIs' request checks */
	bool		quiet;
} server_config;

void		server_init(const server_config *cfg);
/* serve one accepted connection on its own detached thread */
void		serve_connection(int fd);
/* requests served, replies used */
void		server_stats(long *requests, long *replies_used);
/*
 * End every open connection and wait (up to timeout_ms) for their threads.
 * True when all have ended, so the script may be freed.
 */
bool		server_shutdown(long timeout_ms);

/* ---- http_read.c ------------------------------------------------------- */

typedef struct hdr
{
	char	   *name;			/* lower case */
	char	   *value;
} hdr;

typedef struct request
{
	char	   *method;
	char	   *path;			/* without the query */
	bool		http10;
	hdr		   *h;
	size_t		nh;
	buf			body;
} request;

/* a connection's input: what was read and how much of it requests used */
typedef struct conn
{
	int			fd;
	long		id;
	buf			in;
	size_t		off;			/* start of unread input */
} conn;

/*
 * Read one request.  Returns 1 with *rq filled, 0 on a clean EOF between
 * requests, or an HTTP status to answer before closing (400, 413, 431).
 */
int			read_request(conn *c, request *rq);
void		request_free(request *rq);
/* a header's value by its lower-case name, or NULL */
const char *header_get(const request *rq, const char *name);
/* all of p written to fd; false when the peer is gone */
bool		send_all(int fd, const void *p, size_t n);

#endif							/* PROVIDER_SERVER_PS_H */
