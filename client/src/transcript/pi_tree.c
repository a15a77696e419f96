/*
 * pi_tree.c
 *		pi's session tree: the records of a log held until its end, and
 *		which of them are the active branch.
 *
 * From version 2 on, every entry of a pi log has an id and the id of its
 * parent; /tree (and /branch) go back to an earlier entry, and what is
 * written next hangs from it, so a log is a tree written in time order.
 * pi continues a session from its last entry: the path from the root to
 * it is the active branch, and every other leaf ends a branch left behind.
 * A log without ids (version 1) is one line, all of it active.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

int
mn_tree_hold(mn_import *imp, mn_tree *t, int64_t line, const char *text, size_t len,
			 struct json_object *obj)
{
	mn_tree_rec *r;
	const char *id = mn_js_str(obj, "id", NULL);
	const char *parent = mn_js_str(obj, "parentId", NULL);

	if (t->n == t->cap)
	{
		size_t		cap = t->cap ? t->cap * 2 : 64;
		mn_tree_rec *grown = realloc(t->recs, cap * sizeof(*grown));

		if (grown == NULL)
			return mn_import_oom(imp);
		t->recs = grown;
		t->cap = cap;
	}
	r = &t->recs[t->n];
	memset(r, 0, sizeof(*r));
	r->line = line;
	r->parent_of = -1;
	if ((r->text = malloc(len + 1)) == NULL)
		return mn_import_oom(imp);
	memcpy(r->text, text, len);
	r->text[len] = '\0';
	r->len = len;
	t->n++;
	r->obj = json_object_get(obj);
	if ((id != NULL && (r->id = strdup(id)) == NULL) ||
		(parent != NULL && (r->parent = strdup(parent)) == NULL))
		return mn_import_oom(imp);
	return MNEMO_OK;
}

void
mn_tree_free(mn_tree *t)
{
	for (size_t i = 0; i < t->n; i++)
	{
		free(t->recs[i].text);
		free(t->recs[i].id);
		free(t->recs[i].parent);
		json_object_put(t->recs[i].obj);
	}
	free(t->recs);
	memset(t, 0, sizeof(*t));
}

/* The index of the record of id at or before index before; -1: none. */
static ssize_t
find(const mn_tree *t, const char *id, size_t before)
{
	for (size_t i = before + 1; i-- > 0;)
		if (t->recs[i].id != NULL && strcmp(t->recs[i].id, id) == 0)
			return (ssize_t) i;
	return -1;
}

void
mn_tree_mark(mn_tree *t)
{
	ssize_t		leaf = -1;

	/* each record's parent (written before it, as pi appends) */
	for (size_t i = 0; i < t->n; i++)
	{
		mn_tree_rec *r = &t->recs[i];

		if (r->parent != NULL && i > 0)
			r->parent_of = find(t, r->parent, i - 1);
		if (r->parent_of >= 0)
			t->recs[r->parent_of].children++;
		if (r->id != NULL)
			leaf = (ssize_t) i;
	}
	if (leaf < 0)
	{
		for (size_t i = 0; i < t->n; i++)
			t->recs[i].active = true;
		return;
	}
	/* records without an id (the session record) belong to every branch */
	for (size_t i = 0; i < t->n; i++)
		t->recs[i].active = t->recs[i].id == NULL;
	for (ssize_t i = leaf; i >= 0; i = t->recs[i].parent_of)
		t->recs[i].active = true;
}

size_t
mn_tree_branch(const mn_tree *t, size_t leaf, size_t *out, ssize_t *from)
{
	size_t		n = 0;
	ssize_t		i;

	/* up from the leaf to the first active record: the branch point */
	for (i = (ssize_t) leaf; i >= 0 && !t->recs[i].active; i = t->recs[i].parent_of)
		out[n++] = (size_t) i;
	*from = i;
	/* root first */
	for (size_t a = 0, b = n; a + 1 < b; a++, b--)
	{
		size_t		tmp = out[a];

		out[a] = out[b - 1];
		out[b - 1] = tmp;
	}
	return n;
}
