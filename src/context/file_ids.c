/*
 * file_ids.c
 *		The file ids a text names, and the footer "[LCM File IDs: ...]" that
 *		carries them through every summary (seed 002, invariant 4), with
 *		mnemo.file_id_footer(), its SQL face.
 *
 * The seed's pattern, \bfile_[0-9a-fA-F]{8,32}\b, never matches mnemo's own
 * file ids: a file reference's content_id is whatever the caller keyed the
 * content by (a sha256, "sha256:<hex>" by convention), and context renders
 * a file_ref part with a "Content-ID: <id>" line.  So a file id here is, in
 * order of appearance:
 *	- the rest of a line that starts "Content-ID: " (mnemo's own references,
 *	  whatever their form);
 *	- each id listed in a footer line "[LCM File IDs: a, b]" (summaries being
 *	  condensed carry theirs in the middle of the transcript);
 *	- a word (letters, digits, underscores) that is "file_" and 8 to 32 hex
 *	  digits (the seed's form) or 64 hex digits, or "sha256:" and 8 to 64 hex
 *	  digits: ids a model or a user wrote in prose.
 * Each id is kept once, in first-seen order.  A hash of the ids seen keeps
 * the each-once test constant-time: a text can name a million ids (a 16 MB
 * part of them), and a compaction block gathers the ids of all its items.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "context/context.h"

#define FOOTER_START "\n\n[LCM File IDs: "
#define FOOTER "[LCM File IDs: "
#define FOOTER_LEN ((int) sizeof(FOOTER) - 1)
#define CONTENT_ID "Content-ID: "
#define CONTENT_ID_LEN ((int) sizeof(CONTENT_ID) - 1)

static bool
IsWordChar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool
AllHex(const char *s, int len)
{
	int			i;

	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
			  (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

static bool
IsFileId(const char *w, int len)
{
	if (len == 64)
		return AllHex(w, len);
	return len >= 5 + 8 && len <= 5 + 32 && strncmp(w, "file_", 5) == 0 &&
		AllHex(w + 5, len - 5);
}

/* an id in the hash of those seen: the key points at the list's copy */
typedef struct SeenId
{
	const char *id;
	int			len;
} SeenId;

static uint32
SeenIdHash(const void *key, Size keysize)
{
	const SeenId *k = key;

	return hash_bytes((const unsigned char *) k->id, k->len);
}

static int
SeenIdMatch(const void *key1, const void *key2, Size keysize)
{
	const SeenId *a = key1;
	const SeenId *b = key2;

	return a->len == b->len && memcmp(a->id, b->id, a->len) == 0 ? 0 : 1;
}

void
MnemoFileIdsInit(MnemoFileIds *ids)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(SeenId);
	ctl.entrysize = sizeof(SeenId);
	ctl.hash = SeenIdHash;
	ctl.match = SeenIdMatch;
	ctl.hcxt = CurrentMemoryContext;
	ids->list = NIL;
	ids->seen = hash_create("mnemo file ids", 64, &ctl,
							HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
}

/*
 * Whether an id can be listed in a footer and read back as itself: the
 * list separates ids with ", " and ends at "]", on one line.  So, besides
 * MnemoCheckId's rules, no comma, no "]", no space at either end.
 */
static bool
Listable(const char *id, int len)
{
	int			i;

	if (len == 0 || len > MNEMO_ID_MAX || id[0] == ' ' || id[len - 1] == ' ')
		return false;
	for (i = 0; i < len; i++)
		if (id[i] == ',' || id[i] == ']' || (unsigned char) id[i] < 0x20 || id[i] == 0x7f)
			return false;
	return true;
}

/*
 * 22023 unless id is a file id a footer can carry: for the ids a caller
 * gives (file_id_footer's file_ids, store_file_reference's content_id), so
 * that a summary never loses one.  what names it in the error.
 */
void
MnemoCheckFileId(const char *id, const char *what)
{
	MnemoCheckId(id, what);
	if (!Listable(id, strlen(id)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s \"%s\" cannot be listed in a file-id footer", what, id),
				 errdetail("A footer lists ids separated by \", \" and ends with \"]\": an id cannot hold a comma or a \"]\", nor start or end with a space.")));
}

/*
 * Add id to ids unless it is there already.  An id found in a text that a
 * footer could not carry (a "Content-ID: " line of a comma list, say) is
 * not an id: left out, so that the footer reads back as written.  Also the
 * one ordered set of the other names a list of a summary carries
 * (annotate.c), for the same reason.
 */
void
MnemoFileIdsAdd(MnemoFileIds *ids, const char *id, int len)
{
	SeenId		key;
	SeenId	   *entry;
	bool		found;

	CHECK_FOR_INTERRUPTS();
	while (len > 0 && id[0] == ' ')
		id++, len--;
	while (len > 0 && (id[len - 1] == ' ' || id[len - 1] == '\r'))
		len--;
	if (!Listable(id, len))
		return;
	key.id = id;
	key.len = len;
	if (hash_search(ids->seen, &key, HASH_FIND, NULL) != NULL)
		return;
	key.id = pnstrdup(id, len);
	entry = hash_search(ids->seen, &key, HASH_ENTER, &found);
	entry->id = key.id;
	entry->len = len;
	ids->list = lappend(ids->list, (char *) key.id);
}

static int
LineEnd(const char *text, int len, int i)
{
	const char *nl = memchr(text + i, '\n', len - i);

	return nl != NULL ? nl - text : len;
}

/* The index of the last ']' in text[from, to), or -1. */
static int
LastClose(const char *text, int from, int to)
{
	while (to-- > from)
		if (text[to] == ']')
			return to;
	return -1;
}

/*
 * The last ']' of the line i is on, when it comes after i, else -1.  The
 * line's end and last ']' are looked up once per line (kept in *line_end,
 * *line_close): a line of many "[LCM File IDs: " without a ']' would
 * otherwise be scanned again from each.
 */
static int
FooterClose(const char *text, int len, int i, int *line_end, int *line_close)
{
	if (i >= *line_end)
	{
		*line_end = LineEnd(text, len, i);
		*line_close = LastClose(text, i, *line_end);
	}
	return *line_close > i ? *line_close : -1;
}

/* Add to ids each file id in text not already there. */
void
MnemoFileIdsIn(const char *text, int len, MnemoFileIds *ids)
{
	int			i = 0;
	int			line_end = -1;	/* the end of the line i is on, once looked up */
	int			line_close = -1;	/* its last ']', or -1 */
	uint32		steps = 0;

	while (i < len)
	{
		int			start = i;
		int			end;

		if (++steps % 4096 == 0)
			CHECK_FOR_INTERRUPTS();
		if ((i == 0 || text[i - 1] == '\n') && len - i > CONTENT_ID_LEN &&
			strncmp(text + i, CONTENT_ID, CONTENT_ID_LEN) == 0)
		{
			end = LineEnd(text, len, i);
			MnemoFileIdsAdd(ids, text + i + CONTENT_ID_LEN, end - i - CONTENT_ID_LEN);
			i = end;
		}
		else if (len - i > FOOTER_LEN && strncmp(text + i, FOOTER, FOOTER_LEN) == 0 &&
				 (end = FooterClose(text, len, i, &line_end, &line_close)) > i)
		{
			int			p = i + FOOTER_LEN;

			while (p < end)
			{
				int			q = p;

				while (q < end && text[q] != ',')
					q++;
				MnemoFileIdsAdd(ids, text + p, q - p);
				p = q + 1;
				while (p < end && text[p] == ' ')
					p++;
			}
			i = end + 1;
		}
		else if (IsWordChar(text[i]) && (i == 0 || !IsWordChar(text[i - 1])))
		{
			while (i < len && IsWordChar(text[i]))
				i++;
			if (IsFileId(text + start, i - start))
				MnemoFileIdsAdd(ids, text + start, i - start);
			else if (i - start == 6 && strncmp(text + start, "sha256", 6) == 0 &&
					 i < len && text[i] == ':')
			{
				end = i + 1;
				while (end < len && IsWordChar(text[end]))
					end++;
				if (end - i - 1 >= 8 && end - i - 1 <= 64 && AllHex(text + i + 1, end - i - 1))
				{
					MnemoFileIdsAdd(ids, text + start, end - start);
					i = end;
				}
			}
		}
		else
			i++;
	}
}

/*
 * content without a file-id footer at its end, as a length: a footer is
 * FOOTER_START, then a single line ending in "]" at the very end.
 */
static int
BodyLength(const char *content, int len)
{
	const char *p = NULL;
	const char *q = content;

	while ((q = strstr(q, FOOTER_START)) != NULL)
		p = q++;
	if (p == NULL || len == 0 || content[len - 1] != ']' ||
		memchr(p + strlen(FOOTER_START), '\n', content + len - (p + strlen(FOOTER_START))) != NULL)
		return len;
	return p - content;
}

/*
 * content with its footer, if any, replaced by one listing the file ids
 * found in content (the old footer's included), then those of extra.  No
 * footer when there are none.  Idempotent.  *body_len (may be NULL) gets
 * the length of the result before its footer.
 */
char *
MnemoFileIdFooter(const char *content, List *extra, int *body_len)
{
	int			len = strlen(content);
	MnemoFileIds ids;
	ListCell   *lc;
	StringInfoData out;
	bool		first = true;

	MnemoFileIdsInit(&ids);
	MnemoFileIdsIn(content, len, &ids);
	foreach(lc, extra)
		MnemoFileIdsAdd(&ids, lfirst(lc), strlen(lfirst(lc)));
	initStringInfo(&out);
	appendBinaryStringInfo(&out, content, BodyLength(content, len));
	if (body_len != NULL)
		*body_len = out.len;
	hash_destroy(ids.seen);
	if (ids.list == NIL)
		return out.data;
	appendStringInfoString(&out, FOOTER_START);
	foreach(lc, ids.list)
	{
		if (!first)
			appendStringInfoString(&out, ", ");
		appendStringInfoString(&out, lfirst(lc));
		first = false;
	}
	appendStringInfoChar(&out, ']');
	return out.data;
}

PG_FUNCTION_INFO_V1(mnemo_file_id_footer);
Datum
mnemo_file_id_footer(PG_FUNCTION_ARGS)
{
	char	   *content = MnemoRequireTextArg(fcinfo, 0, "content");
	List	   *extra = NIL;

	if (!PG_ARGISNULL(1))
	{
		ArrayType  *arr = MnemoTextListArg(fcinfo, 1, "file_ids");
		Datum	   *elems;
		int			n;
		int			i;

		deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
		for (i = 0; i < n; i++)
		{
			char	   *id = TextDatumGetCString(elems[i]);

			MnemoCheckFileId(id, "file id");
			extra = lappend(extra, id);
		}
	}
	PG_RETURN_TEXT_P(cstring_to_text(MnemoFileIdFooter(content, extra, NULL)));
}
