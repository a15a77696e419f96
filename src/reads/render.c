/*
 * render.c
 *		The one textual rendering of a part, as the seed's ContextBuilder
 *		renders it.  Token estimates made at append time and context assembly
 *		both use it, so an estimate always describes what the model will see.
 *
 *		text, reasoning		the text, verbatim
 *		tool, tombstoned	[Tool 'NAME' output compacted at MS]
 *		tool, live			[Tool: NAME]\nInput: JSON\nOutput: ...\nError: ...\n[/Tool]
 *							(Output and Error lines only when present)
 *		file_ref			[FILE: PATH]\nContent-ID: ID\nType: T\nTokens: N\n
 *							Exploration Summary:\nSUMMARY\n[/FILE]
 *		image				[Image: MEDIA_TYPE, N bytes of base64 | URL, ~T tokens]
 *							(the model gets the image itself from the client;
 *							the placeholder keeps the context readable)
 *		others				their "text" if they have one, else nothing
 *
 * Rendering costs time and memory linear in the content: JSON renders
 * compactly (indenting it cost the square of its depth: a 24 KB tool input
 * nested 12,000 deep rendered to 576 MB), and a tool's input, output and
 * error each render at most MNEMO_RENDER_VALUE_MAX bytes, then a marker
 * saying how much was cut.  The part is stored whole; the read functions
 * return it as it was appended.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/jsonb.h"

#include "mnemo.h"
#include "reads/reads.h"

/* The value at key as text: strings verbatim, other JSON as JSON; NULL if absent. */
static char *
ValueText(JsonbContainer *obj, const char *key)
{
	JsonbValue	buf;
	JsonbValue *v = getKeyJsonValueFromContainer(obj, key, strlen(key), &buf);
	Jsonb	   *jb;

	if (v == NULL || v->type == jbvNull)
		return NULL;
	if (v->type == jbvString)
		return pnstrdup(v->val.string.val, v->val.string.len);
	jb = JsonbValueToJsonb(v);
	return JsonbToCString(NULL, &jb->root, VARSIZE(jb));
}

/*
 * Append label and s, or s's first MNEMO_RENDER_VALUE_MAX bytes (whole
 * characters) and a marker of the rest.
 */
static void
AppendCapped(StringInfo out, const char *label, const char *s)
{
	int			len = strlen(s);
	int			shown;

	appendStringInfoString(out, label);
	if (len <= MNEMO_RENDER_VALUE_MAX)
	{
		appendBinaryStringInfo(out, s, len);
		return;
	}
	shown = pg_mbcliplen(s, len, MNEMO_RENDER_VALUE_MAX);
	appendBinaryStringInfo(out, s, shown);
	appendStringInfo(out, "\n[... %d more bytes not shown; the full part is in mnemo.get_parts]",
					 len - shown);
}

static char *
ValueTextOr(JsonbContainer *obj, const char *key, const char *otherwise)
{
	char	   *s = ValueText(obj, key);

	return s ? s : pstrdup(otherwise);
}

/*
 * The length of an image's base64 data: the string's, or for data stored as
 * a blob (blobs.c), that of the exact base64 of its bytes, what the append
 * gave.
 */
static int64
ImageBase64Length(JsonbContainer *obj)
{
	JsonbValue	buf;
	JsonbValue *v = getKeyJsonValueFromContainer(obj, "data", 4, &buf);
	char	   *bytes;

	if (v == NULL)
		return 0;
	if (v->type == jbvString)
		return v->val.string.len;
	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data) ||
		(bytes = ValueText(v->val.binary.data, "bytes")) == NULL)
		return 0;
	return (strtoi64(bytes, NULL, 10) + 2) / 3 * 4;
}

/*
 * Render a part whose content has been validated by MnemoParsePart.  A tool
 * part with has_compacted_at renders as its tombstone.  Result palloc'd in the
 * current memory context.
 */
char *
MnemoRenderPart(const char *part_type, Jsonb *content, int64 compacted_at,
				bool has_compacted_at)
{
	JsonbContainer *obj = &content->root;
	StringInfoData out;
	char	   *s;

	if (strcmp(part_type, "text") == 0 || strcmp(part_type, "reasoning") == 0)
		return ValueTextOr(obj, "text", "");

	initStringInfo(&out);
	if (strcmp(part_type, "tool") == 0)
	{
		char	   *name = ValueTextOr(obj, "tool_name", "");

		if (has_compacted_at)
		{
			appendStringInfo(&out, "[Tool '%s' output compacted at " INT64_FORMAT "]",
							 name, compacted_at);
			return out.data;
		}
		appendStringInfo(&out, "[Tool: %s]", name);
		AppendCapped(&out, "\nInput: ", ValueTextOr(obj, "input", "{}"));
		if ((s = ValueText(obj, "output")) != NULL)
			AppendCapped(&out, "\nOutput: ", s);
		if ((s = ValueText(obj, "error_message")) != NULL)
			AppendCapped(&out, "\nError: ", s);
		appendStringInfoString(&out, "\n[/Tool]");
	}
	else if (strcmp(part_type, "image") == 0)
	{
		char	   *url = ValueText(obj, "url");

		appendStringInfo(&out, "[Image: %s, ", ValueTextOr(obj, "media_type", "unknown type"));
		if (url != NULL)
			AppendCapped(&out, "", url);
		else
			appendStringInfo(&out, INT64_FORMAT " bytes of base64", ImageBase64Length(obj));
		appendStringInfo(&out, ", ~%s tokens]", ValueTextOr(obj, "token_estimate", CppAsString2(MNEMO_IMAGE_TOKENS)));
	}
	else if (strcmp(part_type, "file_ref") == 0)
	{
		appendStringInfo(&out, "[FILE: %s]\nContent-ID: %s\nType: %s\nTokens: %s\n"
						 "Exploration Summary:\n%s\n[/FILE]",
						 ValueTextOr(obj, "path", ""),
						 ValueTextOr(obj, "content_id", ""),
						 ValueTextOr(obj, "file_type", "unknown"),
						 ValueTextOr(obj, "token_count", "0"),
						 ValueTextOr(obj, "summary", ""));
	}
	else if ((s = ValueText(obj, "text")) != NULL)
		return s;
	return out.data;
}
