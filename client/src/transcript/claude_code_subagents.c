/*
 * claude_code_subagents.c
 *		The sub-agents of a Claude Code session, each imported as a child
 *		session of it once it is stored: from the sidechain records of its
 *		log (older logs write sub-agents inline) and from the logs in
 *		SESSION/subagents/ beside it.  A sub-agent's session id is its
 *		parent's and its agent's.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/claude_code.h"

char *
mn_cc_subagent_id(const char *parent, const char *agent_id)
{
	size_t		len;
	char	   *id;

	if (agent_id == NULL)
		return NULL;
	len = strlen(parent) + strlen("-agent-") + strlen(agent_id) + 1;
	if ((id = malloc(len)) != NULL)
		snprintf(id, len, "%s-agent-%s", parent, agent_id);
	return id;
}

/* The sidechains of an older log, one a sub-agent: a record whose parent
 * is in a sidechain before it continues that one, else it begins one. */
static int
sidechains(mn_import *imp, cc_state *cc, const char *parent)
{
	mn_tree    *t = &cc->side;
	size_t	   *chain = t->n > 0 ? malloc(t->n * sizeof(*chain)) : NULL;
	ssize_t    *group = t->n > 0 ? malloc(t->n * sizeof(*group)) : NULL;
	int			rc = MNEMO_OK;

	if (t->n > 0 && (chain == NULL || group == NULL))
		rc = mn_import_oom(imp);
	for (size_t i = 0; rc == MNEMO_OK && i < t->n; i++)
	{
		const char *up = mn_js_str(t->recs[i].obj, "parentUuid", NULL);

		group[i] = (ssize_t) i;
		for (size_t j = i; up != NULL && j-- > 0;)
		{
			const char *uuid = mn_js_str(t->recs[j].obj, "uuid", NULL);

			if (uuid != NULL && strcmp(uuid, up) == 0)
			{
				group[i] = group[j];
				break;
			}
		}
	}
	for (size_t g = 0; rc == MNEMO_OK && g < t->n; g++)
	{
		size_t		n = 0;

		if (group[g] != (ssize_t) g)
			continue;
		for (size_t i = g; i < t->n; i++)
			if (group[i] == (ssize_t) g)
				chain[n++] = i;
		rc = mn_import_child(imp, parent, NULL, t, chain, n);
	}
	free(chain);
	free(group);
	return rc;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The logs of SESSION.jsonl's sub-agents, SESSION/subagents/agent-*.jsonl,
 * in name order. */
static int
subagent_files(mn_import *imp, const char *parent)
{
	const char *path = imp->opts->path;
	size_t		len = path != NULL ? strlen(path) : 0;
	mn_buf		dir = {0};
	char	  **names = NULL;
	size_t		n = 0;
	DIR		   *d;
	struct dirent *e;
	int			rc = MNEMO_OK;

	if (len <= 6 || strcmp(path + len - 6, ".jsonl") != 0)
		return MNEMO_OK;
	mn_buf_put(&dir, path, len - 6);
	mn_buf_puts(&dir, "/subagents");
	if (dir.oom)
	{
		mn_buf_free(&dir);
		return mn_import_oom(imp);
	}
	if ((d = opendir(dir.data)) == NULL)
	{
		mn_buf_free(&dir);
		return MNEMO_OK;
	}
	while (rc == MNEMO_OK && (e = readdir(d)) != NULL)
	{
		size_t		nl = strlen(e->d_name);
		char	  **grown;

		if (strncmp(e->d_name, "agent-", 6) != 0 || nl <= 6 ||
			strcmp(e->d_name + nl - 6, ".jsonl") != 0)
			continue;
		if ((grown = realloc(names, (n + 1) * sizeof(*names))) == NULL)
			rc = mn_import_oom(imp);
		else if ((names = grown, names[n] = malloc(dir.len + 1 + nl + 1)) == NULL)
			rc = mn_import_oom(imp);
		else
			snprintf(names[n++], dir.len + 1 + nl + 1, "%s/%s", dir.data, e->d_name);
	}
	closedir(d);
	mn_buf_free(&dir);
	if (n > 1)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; rc == MNEMO_OK && i < n; i++)
		rc = mn_import_child(imp, parent, names[i], NULL, NULL, 0);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/*
 * After the log's session is stored: each of its sub-agents a child session
 * of it (parent_id), from its sidechain records (older logs) and from the
 * logs in SESSION/subagents/ (options.path).  An import that takes one
 * session (no options.session) leaves them out.
 */
int
mn_cc_children(mn_import *imp, void *state)
{
	cc_state   *cc = state;
	char		parent[MNEMO_ID_MAX + 1];
	int			rc;

	if (cc->sub)
		return MNEMO_OK;
	if (imp->opts->session == NULL)
	{
		for (size_t i = 0; i < cc->side.n; i++)
			mn_import_bookkeeping(imp, cc->side.recs[i].line, "sidechain");
		return MNEMO_OK;
	}
	memcpy(parent, imp->session_id, sizeof(parent));
	if ((rc = sidechains(imp, cc, parent)) != MNEMO_OK)
		return rc;
	return subagent_files(imp, parent);
}
