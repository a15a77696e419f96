/*
 * parts.c
 *		Validation of one message part, shared by append_message,
 *		append_messages and append_part (log_rows.c stores it).
 *
 * A part is a JSON object with a "type":
 *		text, reasoning		{"text": string}
 *		tool				{"tool_name", "tool_call_id": string, "tool_state":
 *							 pending|running|completed|error, "input": object,
 *							 "output": any, "error_message": string}
 *		file_ref			{"content_id", "path": string, "file_type", "summary"}
 *		image				{"media_type": string, and "data" (base64) or "url":
 *							 string}; estimated at MNEMO_IMAGE_TOKENS, what a
 *							 provider charges for an image of about a megapixel
 *		compaction_marker, step_start, step_finish, patch: free-form
 * Any part may carry "id" (else its id is derived from its place,
 * reads/part_ids.c) and "token_estimate" (else the
 * server estimates its rendering, see render.c).  The object is stored as
 * given, so it reads back unchanged; the columns beside it are copies used for
 * indexing and status.  Every check happens before the first row is written.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "mnemo.h"
#include "log/log.h"
#include "reads/reads.h"

static const char *const part_types[] = {
	"text", "reasoning", "tool", "file_ref", "image", "compaction_marker",
	"step_start", "step_finish", "patch", NULL
};

static const char *const tool_states[] = {
	"pending", "running", "completed", "error", NULL
};


static bool
InList(const char *value, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(value, *list) == 0)
			return true;
	return false;
}

/* The tool_state values mnemo accepts; 22023 otherwise. */
void
MnemoCheckToolState(const char *state, const char *where)
{
	if (!InList(state, tool_states))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: invalid tool_state \"%s\"", where, state),
				 errhint("tool_state is one of pending, running, completed, error.")));
}

/*
 * The string at key of obj, palloc'd; NULL when absent (or JSON null) and not
 * required.  22023 when it has another type or is required and missing.
 */
char *
MnemoJsonbString(JsonbContainer *obj, const char *key, const char *where, bool required)
{
	JsonbValue	buf;
	JsonbValue *v = getKeyJsonValueFromContainer(obj, key, strlen(key), &buf);

	if (v == NULL || v->type == jbvNull)
	{
		if (required)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: \"%s\" is required", where, key)));
		return NULL;
	}
	if (v->type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: \"%s\" must be a string", where, key)));
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* A non-negative integer up to max at key, or -1 when absent. */
int64
MnemoJsonbCount(JsonbContainer *obj, const char *key, const char *where, int64 max)
{
	JsonbValue	buf;
	JsonbValue *v = getKeyJsonValueFromContainer(obj, key, strlen(key), &buf);
	const char *digit;
	int64		count = 0;

	if (v == NULL || v->type == jbvNull)
		return -1;
	if (v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: \"%s\" must be a number", where, key)));

	/*
	 * numeric_normalize writes an integral value as plain digits (1e3 as
	 * 1000, 22.0 as 22): one conversion per value on the append path, where
	 * comparisons in numeric would allocate a numeric each.
	 */
	if (numeric_is_nan(v->val.numeric) || numeric_is_inf(v->val.numeric))
		digit = "-";
	else
		digit = numeric_normalize(v->val.numeric);
	for (; *digit >= '0' && *digit <= '9'; digit++)
	{
		if (count > (max - (*digit - '0')) / 10)
		{
			digit = "-";
			break;
		}
		count = count * 10 + (*digit - '0');
	}
	if (*digit == '-')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: \"%s\" must be an integer from 0 to " INT64_FORMAT, where, key, max)));
	if (*digit != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: \"%s\" must be an integer", where, key)));
	return count;
}

/*
 * Validate one element of a parts array and fill *out.  v is an element as
 * returned by getIthJsonbValueFromContainer.  where names the element in
 * errors ("parts[2]").  Allocates in the current memory context.
 */
void
MnemoParsePart(JsonbValue *v, const char *where, MnemoPart *out)
{
	JsonbContainer *obj;
	JsonbValue	buf;
	JsonbValue *input;
	int32		estimate;

	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object", where)));
	if (v->val.binary.len > mnemo_max_part_bytes)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s is %d bytes, more than mnemo.max_part_bytes (%d)",
						where, v->val.binary.len, mnemo_max_part_bytes)));
	obj = v->val.binary.data;
	memset(out, 0, sizeof(*out));

	out->part_type = MnemoJsonbString(obj, "type", where, true);
	if (!InList(out->part_type, part_types))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: unknown part type \"%s\"", where, out->part_type),
				 errhint("Part types are text, reasoning, tool, file_ref, image, compaction_marker, "
						 "step_start, step_finish and patch.")));
	out->id = MnemoJsonbString(obj, "id", where, false);
	if (out->id)
		MnemoCheckId(out->id, "part id");

	if (strcmp(out->part_type, "text") == 0 || strcmp(out->part_type, "reasoning") == 0)
		(void) MnemoJsonbString(obj, "text", where, true);
	else if (strcmp(out->part_type, "tool") == 0)
	{
		out->tool_name = MnemoJsonbString(obj, "tool_name", where, true);
		out->tool_call_id = MnemoJsonbString(obj, "tool_call_id", where, true);
		out->tool_state = MnemoJsonbString(obj, "tool_state", where, false);
		if (out->tool_state == NULL)
			out->tool_state = "pending";
		MnemoCheckToolState(out->tool_state, where);
		input = getKeyJsonValueFromContainer(obj, "input", 5, &buf);
		if (input != NULL && input->type != jbvNull &&
			!(input->type == jbvBinary && JsonContainerIsObject(input->val.binary.data)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: \"input\" must be a JSON object", where)));
		(void) MnemoJsonbString(obj, "error_message", where, false);
	}
	else if (strcmp(out->part_type, "image") == 0)
	{
		char	   *data = MnemoJsonbString(obj, "data", where, false);
		char	   *url = MnemoJsonbString(obj, "url", where, false);

		(void) MnemoJsonbString(obj, "media_type", where, false);
		if ((data == NULL) == (url == NULL))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: an image has either \"data\" (base64) or \"url\"", where)));
	}
	else if (strcmp(out->part_type, "file_ref") == 0)
	{
		(void) MnemoJsonbString(obj, "content_id", where, true);
		(void) MnemoJsonbString(obj, "path", where, true);
		(void) MnemoJsonbString(obj, "file_type", where, false);
		(void) MnemoJsonbString(obj, "summary", where, false);
	}

	out->content = JsonbValueToJsonb(v);
	MnemoCheckJsonDepth(out->content, where);
	estimate = (int32) MnemoJsonbCount(obj, "token_estimate", where, PG_INT32_MAX);
	if (estimate < 0 && strcmp(out->part_type, "image") == 0)
		estimate = MNEMO_IMAGE_TOKENS;
	if (estimate < 0)
	{
		char	   *rendered = MnemoRenderPart(out->part_type, out->content, 0, false);

		estimate = MnemoEstimateTokens(rendered, strlen(rendered));
		pfree(rendered);
	}
	out->token_estimate = estimate;
}
