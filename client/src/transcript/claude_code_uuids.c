/*
 * claude_code_uuids.c
 *		The uuids of the user and assistant records a Claude Code log has
 *		shown, so that a record written again (a resumed log repeats its
 *		history) is read once: a set of strings, open addressing.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transcript/claude_code.h"

/* FNV-1a */
static size_t
uuid_hash(const char *s)
{
	uint64_t	h = 14695981039346656037u;

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 1099511628211u;
	return (size_t) h;
}

/* Kept at most half full, so a probe ends at an empty slot. */
int
mn_cc_uuid_add(mn_import *imp, cc_uuid_set *set, const char *uuid, bool *added)
{
	size_t		i;

	if (2 * (set->n + 1) > set->cap)
	{
		size_t		cap = set->cap ? set->cap * 2 : 256;
		char	  **slots = calloc(cap, sizeof(*slots));

		if (slots == NULL)
			return mn_import_oom(imp);
		for (size_t j = 0; j < set->cap; j++)
			if (set->slots[j] != NULL)
			{
				for (i = uuid_hash(set->slots[j]) & (cap - 1); slots[i] != NULL; i = (i + 1) & (cap - 1))
					;
				slots[i] = set->slots[j];
			}
		free(set->slots);
		set->slots = slots;
		set->cap = cap;
	}
	for (i = uuid_hash(uuid) & (set->cap - 1); set->slots[i] != NULL; i = (i + 1) & (set->cap - 1))
		if (strcmp(set->slots[i], uuid) == 0)
		{
			*added = false;
			return MNEMO_OK;
		}
	if ((set->slots[i] = strdup(uuid)) == NULL)
		return mn_import_oom(imp);
	set->n++;
	*added = true;
	return MNEMO_OK;
}

void
mn_cc_uuids_free(cc_uuid_set *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slots[i]);
	free(set->slots);
}
