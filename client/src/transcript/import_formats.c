/*
 * import_formats.c
 *		The transcript formats the import reads: its table of readers, and
 *		which of them reads a transcript (detected from its first value, or
 *		named by options.format).
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

/* The formats, asked in this order whether a first record is theirs (the
 * narrower tests first: an OpenAI message is any object with a "role"). */
static const mn_reader *const readers[] = {
	&mn_mnemo_reader,
	&mn_pi_reader,
	&mn_claude_code_reader,
	&mn_swe_agent_reader,
	&mn_openhands_reader,
	&mn_codex_reader,
	&mn_anthropic_reader,
	&mn_openai_reader,
};


MNEMO_API const char *
mnemo_import_formats(void)
{
	return "mnemo, claude-code, pi, openai, anthropic, swe-agent, openhands, codex";
}

MNEMO_API bool
mnemo_import_format_known(const char *name)
{
	for (size_t i = 0; name != NULL && i < mn_lengthof(readers); i++)
		if (strcmp(readers[i]->name, name) == 0)
			return true;
	return false;
}

static int
choose(mn_import *imp, const mn_reader *r)
{
	imp->reader = r;
	if (r->create != NULL && (imp->rstate = r->create()) == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	return MNEMO_OK;
}

int
mn_import_named_reader(mn_import *imp, const char *name)
{
	for (size_t i = 0; i < mn_lengthof(readers); i++)
		if (strcmp(readers[i]->name, name) == 0)
			return choose(imp, readers[i]);
	return mn_fail(imp->st, MNEMO_ERR_INVALID_ARGUMENT, "unknown transcript format \"%s\" (one of %s)",
				   name, mnemo_import_formats());
}

int
mn_import_detect(mn_import *imp, int64_t lineno, struct json_object *obj)
{
	struct json_object *probe = obj;

	if (json_object_is_type(obj, json_type_array))
	{
		if (json_object_array_length(obj) == 0)
			return MNEMO_OK;	/* nothing yet: the end says so */
		probe = json_object_array_get_idx(obj, 0);
	}
	if (json_object_is_type(probe, json_type_object))
		for (size_t i = 0; i < mn_lengthof(readers); i++)
			if (readers[i]->detect(probe))
				return choose(imp, readers[i]);
	return mn_fail(imp->st, MNEMO_ERR_FORMAT,
				   "line %" PRId64 ": not a transcript format mnemo knows (%s); --format "
				   "names one", lineno, mnemo_import_formats());
}

/*
 * --format named the reader: a first value that it would not detect and
 * another format would (by what only that one has) is read as named, with
 * a warning, since it more likely is the other.
 */
void
mn_import_check_named(mn_import *imp, int64_t lineno, struct json_object *obj)
{
	struct json_object *probe = obj;
	char		msg[256];

	imp->format_checked = true;
	if (json_object_is_type(obj, json_type_array))
		probe = json_object_array_length(obj) > 0 ? json_object_array_get_idx(obj, 0) : NULL;
	if (imp->opts->warning == NULL || !json_object_is_type(probe, json_type_object) ||
		imp->reader->detect(probe))
		return;
	for (size_t i = 0; i < mn_lengthof(readers); i++)
	{
		const mn_reader *r = readers[i];

		if (r == imp->reader || !(r->distinct != NULL ? r->distinct : r->detect) (probe))
			continue;
		snprintf(msg, sizeof(msg), "--format %s, but the content reads as %s (--format %s, "
				 "or none, reads it so); read as %s", imp->reader->name, r->name, r->name,
				 imp->reader->name);
		imp->opts->warning(lineno, msg, imp->opts->progress_arg);
		return;
	}
}
