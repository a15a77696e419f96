/*
 * lines.c
 *		What the exploration summaries (explore.c) and the source outlines
 *		(outline.c) share: a line iterator and lists of names capped at
 *		MN_LIST_MAX entries.  Apart from both, so neither calls the other's
 *		helpers and the one calls the other only for an outline.
 */
#include <string.h>

#include "files/files.h"

bool
mn_next_line(mn_lines *it, const char **line, size_t *len)
{
	const char *nl;

	if (it->p >= it->end)
		return false;
	nl = memchr(it->p, '\n', (size_t) (it->end - it->p));
	*line = it->p;
	*len = (size_t) ((nl ? nl : it->end) - it->p);
	it->p = nl ? nl + 1 : it->end;
	if (*len > 0 && (*line)[*len - 1] == '\r')
		(*len)--;
	return true;
}

void
mn_names_add(mn_names *n, const char *s, size_t len)
{
	if (n->count++ >= MN_LIST_MAX)
		return;
	if (n->buf.len > 0)
		mn_buf_puts(&n->buf, ", ");
	mn_buf_put(&n->buf, s, len);
}

void
mn_names_flush(mn_names *n, const char *label, mn_buf *out)
{
	if (n->count > 0)
	{
		mn_buf_puts(out, label);
		mn_buf_puts(out, " (");
		mn_buf_put_i64(out, n->count);
		mn_buf_puts(out, "): ");
		mn_buf_put(out, n->buf.data, n->buf.len);
		if (n->count > MN_LIST_MAX)
		{
			mn_buf_puts(out, ", ... (+");
			mn_buf_put_i64(out, n->count - MN_LIST_MAX);
			mn_buf_puts(out, " more)");
		}
		mn_buf_puts(out, "\n");
	}
	mn_buf_free(&n->buf);
	n->count = 0;
}
