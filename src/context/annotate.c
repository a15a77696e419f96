/*
 * annotate.c
 *		A summary's annotation: the two lines commit_summary(...,
 *		annotate_tokens => N) puts before a summary's text, so that the
 *		model reading its context knows what each summary is and what it
 *		can ask to expand.
 *
 *	[Summary ID: leaf, depth 0, 36 messages (seq 12-47), 2026-12-02 06:00 to 06:10 UTC]
 *	[Expand for details about: file ids F; paths P, Q, and 3 more; tools Bash, Read]
 *	TEXT, as given (its file-id footer last)
 *
 * (a condensation's span reads "3 summaries of 140 messages").  LCM renders
 * its <summary id kind depth ...> wrapper at assembly; mnemo stores the
 * annotation as part of the text, so that the node's token_count counts
 * exactly what build_context, turn_context, the recall tools, the export
 * and the CLI show, with no second renderer to keep in step with the
 * estimate.  It is a prefix: the text keeps its file-id footer last (so
 * file_id_footer stays idempotent on it), and a condensation's transcript
 * leaves its children's annotations out by skipping it (MnemoSummaryBody),
 * since the condensation's own unions them.
 *
 * What a summary is about is gathered once, at commit, and kept in its
 * compaction_marker part ("about"): for a leaf, from the parts of the
 * messages it covers (the names of the tools called; paths, named by a tool
 * input's file_path, path or notebook_path, or written in a text or a tool
 * input; file ids, as file_ids.c finds them, in texts, tool inputs and
 * outputs, and file references); for a condensation, the union of its
 * children's lists, so that no condensation reads the messages under it
 * again.  Each list keeps its first ABOUT_KEEP names, in order of first
 * appearance, and counts the others ("more"; once a child's list was cut,
 * an upper bound, and the line says "up to").  The line shows fewer, by
 * count and by characters (AboutShow), so that it costs at most about 120
 * tokens; file ids the text names already (its footer) are not repeated.
 *
 * The annotation costs tokens in every context the summary is in, so the
 * caller bounds it (annotate_tokens): names are left out first, then the
 * header's times, then the whole annotation.  The engine gives it a share
 * of its budget, so that the summaries of a tight budget are not outgrown
 * by their annotations and a session's floor stays what it was; what the
 * marker keeps does not depend on it.
 *
 * The span: the seq range of the original messages underneath, how many
 * they are (a condensation sums its children's) and when they were
 * written (a leaf's messages' first and last times; a condensation's
 * children's).  A count or time that a child committed without annotation
 * does not know is left out, as are the names it would have given.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "log/log.h"
#include "reads/reads.h"
#include "context/context.h"

#define HEADER_START "[Summary "
#define ABOUT_START "[Expand for details about: "

/* names kept in the marker, per list */
#define ABOUT_KEEP 32
/* a path: at most this long */
#define PATH_MAX_LEN 200

enum
{
	ABOUT_FILE_IDS,
	ABOUT_PATHS,
	ABOUT_TOOLS,
	ABOUT_LISTS
};

/* each list: its key in the marker, its label in the line, what it shows */
static const struct
{
	const char *key;
	const char *label;
	int			show;			/* names at most */
	int			chars;			/* of names, at most (past the first) */
}			about_lists[ABOUT_LISTS] = {
	{"file_ids", "file ids", 3, 140},
	{"paths", "paths", 6, 200},
	{"tools", "tools", 8, 100},
};

typedef struct AboutList
{
	MnemoFileIds names;			/* the one ordered set of names (file_ids.c) */
	int64		more;			/* names beyond the kept ones */
	bool		exact;			/* more is a count, not an upper bound */
} AboutList;

typedef struct Annotation
{
	AboutList	lists[ABOUT_LISTS];
	int64		messages;		/* -1: not known */
	int64		earliest_at;	/* -1: not known */
	int64		latest_at;
} Annotation;

static SPIPlanPtr leaf_plan;
static SPIPlanPtr children_plan;

static void
AnnotationInit(Annotation *a)
{
	int			k;

	for (k = 0; k < ABOUT_LISTS; k++)
	{
		MnemoFileIdsInit(&a->lists[k].names);
		a->lists[k].more = 0;
		a->lists[k].exact = true;
	}
	a->messages = 0;
	a->earliest_at = -1;
	a->latest_at = -1;
}

/* A name a list can hold: the line separates lists with "; ", one a line. */
static void
AddName(Annotation *a, int list, const char *s, int len)
{
	if (len > 0 && memchr(s, ';', len) == NULL && memchr(s, '\n', len) == NULL)
		MnemoFileIdsAdd(&a->lists[list].names, s, len);
}

static bool
IsPathChar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '_' || c == '.' || c == '-' || c == '/' || c == '~' || c == '+';
}

/*
 * Whether a run of path characters is a path: rooted ("/", "~/", "./",
 * "../") with two components or more, as the recall sweep's distinctive
 * paths are (/[A-Za-z0-9_.-]+){2,}; or relative with a directory and a file
 * extension (src/reads/recall.c), which "and/or" and "2024/12" are not.
 */
static bool
LooksLikePath(const char *p, int len)
{
	int			components = 0;
	int			last = 0;		/* where the last component starts */
	int			i;

	if (len < 4 || len > PATH_MAX_LEN || (p[0] == '/' && p[1] == '/'))
		return false;
	for (i = 0; i < len; i++)
		if (p[i] != '/' && (i == 0 || p[i - 1] == '/'))
		{
			components++;
			last = i;
		}
	if (p[0] == '/' || strncmp(p, "~/", 2) == 0 || strncmp(p, "./", 2) == 0 ||
		strncmp(p, "../", 3) == 0)
		return components >= 2;
	if (components < 2 || p[len - 1] == '/')
		return false;
	/* a relative one: its last component has an extension with a letter */
	for (i = len - 1; i > last && p[i] != '.'; i--)
		;
	if (i <= last || len - i - 1 < 1 || len - i - 1 > 8)
		return false;
	for (i++; i < len; i++)
		if ((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z'))
			return true;
	return false;
}

/* The paths written in s, in order. */
static void
PathsIn(Annotation *a, const char *s, int len)
{
	int			i = 0;

	while (i < len)
	{
		int			start;
		int			end;

		if (!IsPathChar(s[i]))
		{
			i++;
			continue;
		}
		start = i;
		while (i < len && IsPathChar(s[i]))
			i++;
		/* a sentence's full stop is not the path's, nor is a directory's
		 * last slash (src/ and src are one) */
		for (end = i; end > start && (s[end - 1] == '.' || s[end - 1] == '/'); end--)
			;
		/* a URL's path ("https://host/a/b") is not a file's */
		if (start > 0 && s[start - 1] == ':')
			continue;
		if (LooksLikePath(s + start, end - start))
			AddName(a, ABOUT_PATHS, s + start, end - start);
	}
}

/* Every string of a JSON value: its paths (when paths) and file ids. */
static void
ScanStrings(Annotation *a, JsonbValue *v, bool paths)
{
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken t;

	if (v->type == jbvString)
	{
		if (paths)
			PathsIn(a, v->val.string.val, v->val.string.len);
		MnemoFileIdsIn(v->val.string.val, v->val.string.len, &a->lists[ABOUT_FILE_IDS].names);
		return;
	}
	if (v->type != jbvBinary)
		return;
	it = JsonbIteratorInit(v->val.binary.data);
	while ((t = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
		if ((t == WJB_VALUE || t == WJB_ELEM) && (e.type == jbvString || e.type == jbvBinary))
			ScanStrings(a, &e, paths);
}

static JsonbValue *
Member(JsonbContainer *obj, const char *key, JsonbValue *buf)
{
	return getKeyJsonValueFromContainer(obj, key, strlen(key), buf);
}

/* A path a tool input names by its key: the file the tool touched. */
static void
InputPath(Annotation *a, JsonbValue *input, const char *key)
{
	JsonbValue	buf;
	JsonbValue *v;

	if (input->type != jbvBinary || !JsonContainerIsObject(input->val.binary.data))
		return;
	v = Member(input->val.binary.data, key, &buf);
	if (v != NULL && v->type == jbvString && v->val.string.len <= PATH_MAX_LEN)
		AddName(a, ABOUT_PATHS, v->val.string.val, v->val.string.len);
}

/* What one part of a covered message is about. */
static void
PartAbout(Annotation *a, const char *part_type, const char *tool_name, Jsonb *content)
{
	JsonbContainer *obj = &content->root;
	JsonbValue	buf;
	JsonbValue *v;

	if (strcmp(part_type, "text") == 0)
	{
		if ((v = Member(obj, "text", &buf)) != NULL)
			ScanStrings(a, v, true);
	}
	else if (strcmp(part_type, "tool") == 0)
	{
		if (tool_name != NULL)
			AddName(a, ABOUT_TOOLS, tool_name, strlen(tool_name));
		if ((v = Member(obj, "input", &buf)) != NULL)
		{
			InputPath(a, v, "file_path");
			InputPath(a, v, "path");
			InputPath(a, v, "notebook_path");
			ScanStrings(a, v, true);
		}
		/* outputs are full of paths (listings, traces): only their file ids */
		if ((v = Member(obj, "output", &buf)) != NULL)
			ScanStrings(a, v, false);
		if ((v = Member(obj, "error_message", &buf)) != NULL)
			ScanStrings(a, v, false);
	}
	else if (strcmp(part_type, "file_ref") == 0)
	{
		if ((v = Member(obj, "content_id", &buf)) != NULL && v->type == jbvString)
			MnemoFileIdsAdd(&a->lists[ABOUT_FILE_IDS].names, v->val.string.val,
							v->val.string.len);
		if ((v = Member(obj, "path", &buf)) != NULL && v->type == jbvString &&
			v->val.string.len <= PATH_MAX_LEN)
			AddName(a, ABOUT_PATHS, v->val.string.val, v->val.string.len);
	}
}

static int
CompareSeq(const void *x, const void *y)
{
	int64		a = *(const int64 *) x;
	int64		b = *(const int64 *) y;

	return a < b ? -1 : a > b ? 1 : 0;
}

/*
 * A leaf: the parts of the messages it covers, in seq order.  A fork's leaf
 * may cover messages it inherited: each run of them is read in the ancestor
 * that holds it (lineage.c), one statement per run.  The ancestors are of
 * the session's tenant, lock->tenant.
 */
static void
GatherLeaf(Annotation *a, const char *session_id, MnemoSessionLock *lock,
		   MnemoSwapItem *items, int n)
{
	int64	   *seqs = palloc(sizeof(int64) * Max(n, 1));
	const char **owners = palloc(sizeof(char *) * Max(n, 1));
	MnemoLine	line;
	int			i;
	int			j;

	for (i = 0; i < n; i++)
		seqs[i] = items[i].seq;
	qsort(seqs, n, sizeof(int64), CompareSeq);
	if (lock->is_fork)
		MnemoReadLine(session_id, PG_INT64_MAX, true, false, &line);
	for (i = 0; i < n; i++)
	{
		MnemoSegment *seg = lock->is_fork ? MnemoLineSegment(&line, seqs[i]) : NULL;

		owners[i] = seg != NULL ? seg->owner : session_id;
	}
	a->messages = n;
	MnemoPrepare(&leaf_plan,
				 "SELECT m.created_at, p.part_type, p.tool_name, p.content "
				 "FROM unnest($2) AS s(seq) "
				 "JOIN LATERAL (SELECT m.id, m.created_at FROM mnemo.messages m "
				 "         WHERE m.session_id = $1 AND m.tenant = $3 AND m.seq = s.seq "
				 "         OFFSET 0) m ON true "
				 "LEFT JOIN LATERAL (SELECT p.part_index, p.part_type, p.tool_name, p.content "
				 "         FROM mnemo.message_parts p "
				 "         WHERE p.session_id = $1 AND p.tenant = $3 AND p.seq = s.seq "
				 "         OFFSET 0) p ON true "
				 "ORDER BY s.seq, p.part_index",
				 3, (Oid[]) {TEXTOID, INT8ARRAYOID, TEXTOID});
	for (i = 0; i < n; i = j)
	{
		Datum	   *run;
		uint64		rows;
		uint64		r;

		for (j = i; j < n && strcmp(owners[j], owners[i]) == 0; j++)
			;
		run = palloc(sizeof(Datum) * (j - i));
		for (int k = i; k < j; k++)
			run[k - i] = Int64GetDatum(seqs[k]);
		rows = MnemoExecute(leaf_plan,
							(Datum[]) {CStringGetTextDatum(owners[i]),
							PointerGetDatum(construct_array(run, j - i, INT8OID, 8,
															FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
							CStringGetTextDatum(lock->tenant)},
							NULL, true, 0);
		for (r = 0; r < rows; r++)
		{
			int64		at = MnemoGetInt64(r, 1, NULL);
			bool		no_part;
			bool		isnull;
			Datum		content;
			char	   *type = MnemoGetText(r, 2, &no_part);

			if (a->earliest_at < 0 || at < a->earliest_at)
				a->earliest_at = at;
			a->latest_at = Max(a->latest_at, at);
			if (no_part)
				continue;
			content = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 4, &isnull);
			PartAbout(a, type, MnemoGetText(r, 3, &isnull), DatumGetJsonbP(content));
		}
		SPI_freetuptable(SPI_tuptable);
	}
}

/*
 * A child's list into the union: its names, then what it counted beyond
 * them (which may repeat names seen: the count becomes an upper bound).
 */
static void
UnionList(AboutList *l, JsonbValue *v)
{
	JsonbValue	buf;
	JsonbValue *names;
	JsonbValue *x;
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken t;
	int64		more;

	if (v == NULL || v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		return;
	names = Member(v->val.binary.data, "names", &buf);
	if (names != NULL && names->type == jbvBinary)
	{
		it = JsonbIteratorInit(names->val.binary.data);
		while ((t = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
			if (t == WJB_ELEM && e.type == jbvString)
				MnemoFileIdsAdd(&l->names, e.val.string.val, e.val.string.len);
	}
	more = MnemoJsonbCount(v->val.binary.data, "more", "compaction_marker", PG_INT64_MAX);
	if (more > 0)
	{
		l->more += more;
		l->exact = false;
	}
	x = Member(v->val.binary.data, "exact", &buf);
	if (x != NULL && x->type == jbvBool && !x->val.boolean)
		l->exact = false;
}

/*
 * A condensation: the union of its children's annotations, read from their
 * compaction markers, in the order of their spans.  Its children are nodes
 * of tenant's session_id itself (a fork condenses none it inherited).
 */
static void
GatherCondensed(Annotation *a, const char *session_id, const char *tenant,
				MnemoSwapItem *items, int n)
{
	Datum	   *ids = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *seqs = palloc(sizeof(Datum) * Max(n, 1));
	uint64		rows;
	uint64		r;
	int			i;

	for (i = 0; i < n; i++)
	{
		ids[i] = CStringGetTextDatum(items[i].id);
		seqs[i] = Int64GetDatum(items[i].seq);
	}
	MnemoPrepare(&children_plan,
				 "SELECT p.content FROM unnest($2, $4) AS c(id, seq) "
				 "JOIN LATERAL (SELECT n.seq_start FROM mnemo.summary_nodes n "
				 "         WHERE n.session_id = $1 AND n.tenant = $3 AND n.id = c.id "
				 "         OFFSET 0) n ON true "
				 "JOIN LATERAL (SELECT p.content FROM mnemo.message_parts p "
				 "         WHERE p.session_id = $1 AND p.tenant = $3 AND p.seq = c.seq "
				 "         AND p.part_type = 'compaction_marker' OFFSET 0) p ON true "
				 "ORDER BY n.seq_start, c.id",
				 4, (Oid[]) {TEXTOID, TEXTARRAYOID, TEXTOID, INT8ARRAYOID});
	rows = MnemoExecute(children_plan,
						(Datum[]) {CStringGetTextDatum(session_id),
							PointerGetDatum(construct_array(ids, n, TEXTOID, -1, false, TYPALIGN_INT)),
							CStringGetTextDatum(tenant),
							PointerGetDatum(construct_array(seqs, n, INT8OID, sizeof(int64),
															FLOAT8PASSBYVAL, TYPALIGN_DOUBLE))},
						NULL, true, 0);
	if (rows != n)
		a->messages = a->earliest_at = a->latest_at = -1;
	for (r = 0; r < rows; r++)
	{
		bool		isnull;
		Jsonb	   *marker = DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[r],
														  SPI_tuptable->tupdesc, 1, &isnull));
		JsonbContainer *obj = &marker->root;
		JsonbValue	buf;
		JsonbValue *about = Member(obj, "about", &buf);
		JsonbValue *kind;
		JsonbValue	kind_buf;
		int64		messages = MnemoJsonbCount(obj, "messages", "compaction_marker", PG_INT64_MAX);
		int64		earliest = MnemoJsonbCount(obj, "earliest_at", "compaction_marker", PG_INT64_MAX);
		int64		latest = MnemoJsonbCount(obj, "latest_at", "compaction_marker", PG_INT64_MAX);

		/* a leaf committed without annotation still says how many it covers */
		kind = Member(obj, "kind", &kind_buf);
		if (messages < 0 && kind != NULL && kind->type == jbvString &&
			kind->val.string.len == 4 && strncmp(kind->val.string.val, "leaf", 4) == 0)
			messages = MnemoJsonbCount(obj, "compacted_item_count", "compaction_marker",
									   PG_INT64_MAX);
		if (messages < 0 || a->messages < 0)
			a->messages = -1;
		else
			a->messages += messages;
		if (earliest < 0 || latest < 0 || rows != n || (r > 0 && a->earliest_at < 0))
			a->earliest_at = a->latest_at = -1;
		else
		{
			if (r == 0 || earliest < a->earliest_at)
				a->earliest_at = earliest;
			a->latest_at = Max(a->latest_at, latest);
		}
		if (about != NULL && about->type == jbvBinary && JsonContainerIsObject(about->val.binary.data))
			for (i = 0; i < ABOUT_LISTS; i++)
			{
				JsonbValue	list_buf;

				UnionList(&a->lists[i], Member(about->val.binary.data, about_lists[i].key,
											   &list_buf));
			}
	}
	SPI_freetuptable(SPI_tuptable);
}

/* "2026-12-02 06:00", or just "06:00" when the day is day's; false if out of range */
static bool
AppendMinute(StringInfo out, int64 ms, const struct pg_tm *day)
{
	pg_time_t	t = (pg_time_t) (ms / 1000);
	struct pg_tm *tm = pg_gmtime(&t);

	if (tm == NULL)
		return false;
	if (day == NULL || tm->tm_year != day->tm_year || tm->tm_yday != day->tm_yday)
		appendStringInfo(out, "%04d-%02d-%02d ", tm->tm_year + 1900, tm->tm_mon + 1,
						 tm->tm_mday);
	appendStringInfo(out, "%02d:%02d", tm->tm_hour, tm->tm_min);
	return true;
}

/* ", FROM to TO UTC", when the time range is known and printable */
static void
AppendTimes(StringInfo out, const Annotation *a)
{
	pg_time_t	t = (pg_time_t) (a->earliest_at / 1000);
	struct pg_tm *tm;
	struct pg_tm first;
	int			mark = out->len;

	if (a->earliest_at < 0 || (tm = pg_gmtime(&t)) == NULL)
		return;
	first = *tm;
	appendStringInfoString(out, ", ");
	(void) AppendMinute(out, a->earliest_at, NULL);
	if (a->latest_at / 60000 != a->earliest_at / 60000)
	{
		appendStringInfoString(out, " to ");
		if (!AppendMinute(out, a->latest_at, &first))
		{
			out->len = mark;
			out->data[mark] = '\0';
			return;
		}
	}
	appendStringInfoString(out, " UTC");
}

static bool
Named(List *names, const char *name)
{
	ListCell   *lc;

	foreach(lc, names)
		if (strcmp(lfirst(lc), name) == 0)
			return true;
	return false;
}

/* what ", and up to K more" may take */
#define MORE_ROOM 24

/*
 * One list in the line: its first names, while within the list's count and
 * characters and within *room bytes (less MORE_ROOM), then how many more;
 * skip (may be NIL) names left out.  False when it shows nothing.
 */
static bool
AboutShow(StringInfo out, int k, const AboutList *l, List *skip, bool first, int *room)
{
	int			shown = 0;
	int			chars = 0;
	int64		rest = l->more;
	int			start = out->len;
	ListCell   *lc;

	foreach(lc, l->names.list)
	{
		const char *name = lfirst(lc);
		int			len = strlen(name);
		int			cost = len + 2 + (shown > 0 ? 0 : strlen(about_lists[k].label) + 1);

		if (Named(skip, name))
			continue;
		if (shown == about_lists[k].show || (shown > 0 && chars + len > about_lists[k].chars) ||
			cost + MORE_ROOM > *room - (out->len - start))
		{
			rest++;
			continue;
		}
		appendStringInfoString(out, shown > 0 ? ", " : first ? "" : "; ");
		if (shown == 0)
			appendStringInfo(out, "%s ", about_lists[k].label);
		appendStringInfoString(out, name);
		chars += len;
		shown++;
	}
	if (shown > 0 && rest > 0)
		appendStringInfo(out, ", and %s" INT64_FORMAT " more", l->exact ? "" : "up to ", rest);
	*room -= out->len - start;
	return shown > 0;
}

/* The span in the header: "leaf, depth 0, 36 messages (seq 12-47)[, TIMES]" */
static void
AppendHeader(StringInfo out, const Annotation *a, const char *summary_id, bool condensed,
			 int32 depth, int nitems, int64 seq_start, int64 seq_end, bool times)
{
	appendStringInfo(out, HEADER_START "%s: %s, depth %d, ", summary_id,
					 condensed ? "condensed" : "leaf", depth);
	if (condensed)
		appendStringInfo(out, "%d %s", nitems, nitems == 1 ? "summary" : "summaries");
	if (a->messages >= 0)
		appendStringInfo(out, "%s" INT64_FORMAT " %s", condensed ? " of " : "", a->messages,
						 a->messages == 1 ? "message" : "messages");
	appendStringInfo(out, " (seq " INT64_FORMAT "-" INT64_FORMAT ")", seq_start, seq_end);
	if (times)
		AppendTimes(out, a);
	appendStringInfoString(out, "]\n");
}

/* The list as the marker keeps it: its first ABOUT_KEEP names. */
static void
AboutJson(StringInfo out, const AboutList *l)
{
	int64		more = l->more;
	int			kept = 0;
	ListCell   *lc;

	appendStringInfoString(out, "{\"names\": [");
	foreach(lc, l->names.list)
	{
		if (kept == ABOUT_KEEP)
		{
			more++;
			continue;
		}
		if (kept++ > 0)
			appendStringInfoString(out, ", ");
		escape_json(out, lfirst(lc));
	}
	appendStringInfo(out, "], \"more\": " INT64_FORMAT ", \"exact\": %s}", more,
					 l->exact ? "true" : "false");
}

/*
 * content with its annotation before it, for summary_id, of kind (condensed
 * or leaf) and depth, over items (the nitems it replaces, under the session
 * lock) spanning seq_start .. seq_end, in at most max_tokens: the about
 * line's names go first, then the header's times, then the header itself
 * (content is returned as it is).  marker gets what the summary's
 * compaction_marker part keeps of it, as JSON members, each after ", ",
 * whatever the text shows.  Inside SPI.
 */
char *
MnemoAnnotateSummary(const char *session_id, MnemoSessionLock *lock, const char *summary_id,
					 bool condensed, int32 depth, MnemoSwapItem *items, int nitems,
					 int64 seq_start, int64 seq_end, const char *content, int32 max_tokens,
					 StringInfo marker)
{
	Annotation	a;
	MnemoFileIds named;
	StringInfoData out;
	/* estimate_tokens is characters / 4, and a character at least a byte */
	int64		room = (int64) Max(max_tokens, 0) * 4 + 3;
	int			line_room;
	int			mark;
	bool		first = true;
	int			k;

	AnnotationInit(&a);
	if (condensed)
		GatherCondensed(&a, session_id, lock->tenant, items, nitems);
	else
		GatherLeaf(&a, session_id, lock, items, nitems);

	initStringInfo(&out);
	AppendHeader(&out, &a, summary_id, condensed, depth, nitems, seq_start, seq_end, true);
	if (out.len > room)
	{
		resetStringInfo(&out);
		AppendHeader(&out, &a, summary_id, condensed, depth, nitems, seq_start, seq_end, false);
	}
	if (out.len > room)
		resetStringInfo(&out);
	else
	{
		/* the file ids the text names already, its footer's: not repeated */
		MnemoFileIdsInit(&named);
		MnemoFileIdsIn(content, strlen(content), &named);
		mark = out.len;
		line_room = (int) Min(room - out.len - (int) (sizeof(ABOUT_START) - 1) - 2, PG_INT32_MAX);
		appendStringInfoString(&out, ABOUT_START);
		for (k = 0; k < ABOUT_LISTS; k++)
			if (AboutShow(&out, k, &a.lists[k], k == ABOUT_FILE_IDS ? named.list : NIL, first,
						  &line_room))
				first = false;
		if (first)
		{
			/* nothing to name, or no room to: no line */
			out.len = mark;
			out.data[mark] = '\0';
		}
		else
			appendStringInfoString(&out, "]\n");
	}
	appendStringInfoString(&out, content);

	appendStringInfo(marker, ", \"depth\": %d", depth);
	if (a.messages >= 0)
		appendStringInfo(marker, ", \"messages\": " INT64_FORMAT, a.messages);
	if (a.earliest_at >= 0)
		appendStringInfo(marker, ", \"earliest_at\": " INT64_FORMAT ", \"latest_at\": " INT64_FORMAT,
						 a.earliest_at, a.latest_at);
	appendStringInfoString(marker, ", \"about\": {");
	for (k = 0; k < ABOUT_LISTS; k++)
	{
		appendStringInfo(marker, "%s\"%s\": ", k > 0 ? ", " : "", about_lists[k].key);
		AboutJson(marker, &a.lists[k]);
	}
	appendStringInfoChar(marker, '}');
	return out.data;
}

/*
 * Where the text of summary_id starts after its annotation, in text (len
 * bytes): 0 when it has none.  Only the lines MnemoAnnotateSummary writes
 * for that id count: a header naming another id is text.
 */
int
MnemoSummaryBody(const char *summary_id, const char *text, int len)
{
	int			id_len = strlen(summary_id);
	int			start = sizeof(HEADER_START) - 1;
	const char *nl;
	int			body;

	if (len < start + id_len + 2 || strncmp(text, HEADER_START, start) != 0 ||
		strncmp(text + start, summary_id, id_len) != 0 ||
		strncmp(text + start + id_len, ": ", 2) != 0 ||
		(nl = memchr(text + start + id_len, '\n', len - start - id_len)) == NULL ||
		nl[-1] != ']')
		return 0;
	body = nl + 1 - text;
	if (len - body > (int) sizeof(ABOUT_START) - 1 &&
		strncmp(text + body, ABOUT_START, sizeof(ABOUT_START) - 1) == 0 &&
		(nl = memchr(text + body, '\n', len - body)) != NULL && nl[-1] == ']')
		body = nl + 1 - text;
	return body;
}
