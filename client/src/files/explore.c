/*
 * explore.c
 *		Exploration summaries: what a model needs to decide whether and how
 *		to read a file it was not given, in a few lines (seed 002).
 *
 * Every summary starts with "<type>, N lines"; JSON, Markdown, CSV/TSV,
 * YAML and TOML get their structure, source code its outline (outline.c),
 * and anything else, or a file its format's summariser cannot read
 * (invalid JSON), the first five lines.  Lists stop at MN_LIST_MAX names.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "files/files.h"

#define PREVIEW_LINES 5
#define PREVIEW_LINE_MAX 200
#define HEADINGS_MAX 100

static int64_t
count_lines(const char *text, size_t len)
{
	int64_t		n = 0;

	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n + (len > 0 && text[len - 1] != '\n');
}

/* Up to PREVIEW_LINE_MAX bytes of a line, cut at a character boundary. */
static void
put_capped(mn_buf *out, const char *line, size_t len)
{
	if (len > PREVIEW_LINE_MAX)
	{
		len = PREVIEW_LINE_MAX;
		while (len > 0 && ((unsigned char) line[len] & 0xC0) == 0x80)
			len--;
		mn_buf_put(out, line, len);
		mn_buf_puts(out, " ...");
	}
	else
		mn_buf_put(out, line, len);
}

static void
preview(const char *text, size_t len, mn_buf *out)
{
	mn_lines	it = {text, text + len};
	const char *line;
	size_t		n;

	mn_buf_puts(out, "Preview:\n");
	for (int i = 0; i < PREVIEW_LINES && mn_next_line(&it, &line, &n); i++)
	{
		put_capped(out, line, n);
		mn_buf_puts(out, "\n");
	}
}

/* ---- JSON ---- */

/* The keys of an object, as a list. */
static void
object_keys(json_object *o, mn_names *keys)
{
	json_object_object_foreach(o, key, val)
	{
		(void) val;
		mn_names_add(keys, key, strlen(key));
	}
}

static void
array_line(mn_buf *out, const char *name, json_object *a)
{
	size_t		n = json_object_array_length(a);
	json_object *first = n > 0 ? json_object_array_get_idx(a, 0) : NULL;

	mn_buf_puts(out, name);
	mn_buf_puts(out, ": ");
	mn_buf_put_i64(out, (int64_t) n);
	mn_buf_puts(out, " items");
	if (json_object_is_type(first, json_type_object))
	{
		mn_names	keys = {0};

		object_keys(first, &keys);
		mn_names_flush(&keys, "; item keys", out);
	}
	else
		mn_buf_puts(out, "\n");
}

static bool
explore_json(const char *text, mn_buf *out)
{
	json_object *root = json_tokener_parse(text);
	mn_names	keys = {0};
	int			arrays = 0;

	if (root == NULL)
		return false;
	if (json_object_is_type(root, json_type_array))
		array_line(out, "Top-level array", root);
	else if (json_object_is_type(root, json_type_object))
	{
		object_keys(root, &keys);
		mn_names_flush(&keys, "Top-level keys", out);
		json_object_object_foreach(root, key, val)
		{
			if (!json_object_is_type(val, json_type_array) || arrays++ >= MN_LIST_MAX)
				continue;
			if (arrays == 1)
				mn_buf_puts(out, "Array fields:\n");
			mn_buf_puts(out, "  ");
			array_line(out, key, val);
		}
	}
	else
		mn_buf_puts(out, "A single scalar value\n");
	json_object_put(root);
	return true;
}

/* ---- Markdown ---- */

static void
explore_markdown(const char *text, size_t len, mn_buf *out)
{
	mn_lines	it = {text, text + len};
	const char *line;
	size_t		n;
	bool		fenced = false;
	int			headings = 0;

	mn_buf_puts(out, "Headings:\n");
	while (mn_next_line(&it, &line, &n))
	{
		size_t		level = 0;

		if (n >= 3 && (strncmp(line, "```", 3) == 0 || strncmp(line, "~~~", 3) == 0))
			fenced = !fenced;
		if (fenced)
			continue;
		while (level < n && line[level] == '#')
			level++;
		if (level == 0 || level > 6 || level >= n || line[level] != ' ')
			continue;
		if (++headings > HEADINGS_MAX)
			continue;
		for (size_t i = 1; i < level; i++)
			mn_buf_puts(out, "  ");
		mn_buf_puts(out, "- ");
		put_capped(out, line + level + 1, n - level - 1);
		mn_buf_puts(out, "\n");
	}
	if (headings == 0)
		mn_buf_puts(out, "  (none)\n");
	else if (headings > HEADINGS_MAX)
	{
		mn_buf_puts(out, "  ... (+");
		mn_buf_put_i64(out, headings - HEADINGS_MAX);
		mn_buf_puts(out, " more)\n");
	}
}

/* ---- CSV, TSV ---- */

static void
explore_table(const char *text, size_t len, char sep, mn_buf *out)
{
	mn_lines	it = {text, text + len};
	const char *line;
	size_t		n;
	mn_names	cols = {0};
	int64_t		rows = 0;

	if (!mn_next_line(&it, &line, &n))
		return;
	for (size_t i = 0; i <= n;)
	{
		size_t		start = i;
		bool		quoted = i < n && line[i] == '"';

		if (quoted)
		{
			/* a quoted header field: up to the closing quote */
			const char *q = memchr(line + i + 1, '"', n - i - 1);

			start = i + 1;
			i = q ? (size_t) (q - line) : n;
			mn_names_add(&cols, line + start, i - start);
			while (i < n && line[i] != sep)
				i++;
		}
		else
		{
			while (i < n && line[i] != sep)
				i++;
			mn_names_add(&cols, line + start, i - start);
		}
		i++;
	}
	while (mn_next_line(&it, &line, &n))
		rows += n > 0;
	mn_names_flush(&cols, "Columns", out);
	mn_buf_puts(out, "Rows: ");
	mn_buf_put_i64(out, rows);
	mn_buf_puts(out, " (after the header)\n");
}

/* ---- YAML, TOML ---- */

static bool
is_key_char(char c)
{
	return c != ' ' && c != '\t' && c != '#' && c != '-' && c != '[' && c != '"' && c != '\'';
}

static void
explore_yaml(const char *text, size_t len, mn_buf *out)
{
	mn_lines	it = {text, text + len};
	const char *line;
	size_t		n;
	mn_names	keys = {0};

	while (mn_next_line(&it, &line, &n))
	{
		const char *colon;

		if (n == 0 || !is_key_char(line[0]) || (colon = memchr(line, ':', n)) == NULL)
			continue;
		mn_names_add(&keys, line, (size_t) (colon - line));
	}
	mn_names_flush(&keys, "Top-level keys", out);
}

static void
explore_toml(const char *text, size_t len, mn_buf *out)
{
	mn_lines	it = {text, text + len};
	const char *line;
	size_t		n;
	mn_names	keys = {0};
	mn_names	sections = {0};
	bool		in_section = false;

	while (mn_next_line(&it, &line, &n))
	{
		const char *end;

		if (n > 2 && line[0] == '[' && (end = memchr(line, ']', n)) != NULL)
		{
			/* [table] and [[array.of.tables]] alike */
			const char *name = line + 1 + (line[1] == '[');

			in_section = true;
			if (end > name)
				mn_names_add(&sections, name, (size_t) (end - name));
		}
		else if (!in_section && n > 0 && is_key_char(line[0]) &&
				 (end = memchr(line, '=', n)) != NULL)
		{
			while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
				end--;
			mn_names_add(&keys, line, (size_t) (end - line));
		}
	}
	mn_names_flush(&keys, "Top-level keys", out);
	mn_names_flush(&sections, "Sections", out);
}

void
mn_explore(const char *type, const char *text, size_t len, mn_buf *out)
{
	mn_buf_puts(out, type);
	mn_buf_puts(out, ", ");
	mn_buf_put_i64(out, count_lines(text, len));
	mn_buf_puts(out, " lines\n");
	if (strcmp(type, "json") == 0)
	{
		if (!explore_json(text, out))
		{
			mn_buf_puts(out, "Not valid JSON.\n");
			preview(text, len, out);
		}
	}
	else if (strcmp(type, "markdown") == 0)
		explore_markdown(text, len, out);
	else if (strcmp(type, "csv") == 0 || strcmp(type, "tsv") == 0)
		explore_table(text, len, type[0] == 't' ? '\t' : ',', out);
	else if (strcmp(type, "yaml") == 0)
		explore_yaml(text, len, out);
	else if (strcmp(type, "toml") == 0)
		explore_toml(text, len, out);
	else if (!mn_outline(type, text, len, out))
		preview(text, len, out);
	/* no trailing newline: render.c puts "\n[/FILE]" after the summary */
	if (out->len > 0 && out->data[out->len - 1] == '\n')
		out->data[--out->len] = '\0';
}
