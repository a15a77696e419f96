/*
 * outline.c
 *		The outline of a source file: its imports, types or classes, and
 *		functions, by a scan of its lines (no parser: an outline, not a
 *		proof).  Only top-level declarations count: a line at column 0,
 *		or, in JavaScript and TypeScript, one that starts with "export".
 *
 *	C			#include lines; struct/union/enum definitions and typedef
 *				names (one line, or the "} name;" that closes one); function definitions (a column-0 line with a name
 *				and "(" that does not end in ";", the name the word before
 *				the "(", as in "static int\nname(args)" or one line)
 *	Python		import and from lines; classes with their method counts;
 *				functions
 *	JavaScript,	import lines and require() calls; classes, and in
 *	TypeScript	TypeScript interfaces, type aliases and enums; functions,
 *				and consts bound to an arrow function
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "files/files.h"

typedef struct outline
{
	mn_names	imports;
	mn_names	types;
	mn_names	functions;
} outline;

static bool
is_ident(char c)
{
	return isalnum((unsigned char) c) || c == '_' || c == '$';
}

/* Whether line[0..n) starts with word followed by a non-identifier byte;
 * *rest is then what follows the word and its blanks. */
static bool
starts_word(const char *line, size_t n, const char *word, const char **rest)
{
	size_t		w = strlen(word);

	if (n < w || strncmp(line, word, w) != 0 || (n > w && is_ident(line[w])))
		return false;
	while (w < n && (line[w] == ' ' || line[w] == '\t'))
		w++;
	*rest = line + w;
	return true;
}

/* The identifier at p (before end), added to names. */
static void
add_ident(mn_names *names, const char *p, const char *end)
{
	const char *q = p;

	while (q < end && is_ident(*q))
		q++;
	if (q > p)
		mn_names_add(names, p, (size_t) (q - p));
}

static void
trimmed_add(mn_names *names, const char *line, size_t n)
{
	while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == ';'))
		n--;
	mn_names_add(names, line, n);
}

/* ---- C ---- */

static bool
c_keyword(const char *p, size_t n)
{
	static const char *const kw[] = {"if", "for", "while", "switch", "return", "sizeof"};

	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (strlen(kw[i]) == n && strncmp(p, kw[i], n) == 0)
			return true;
	return false;
}

static void
c_line(outline *o, const char *line, size_t n)
{
	const char *end = line + n;
	const char *rest;
	const char *paren;

	if (starts_word(line, n, "#include", &rest))
	{
		mn_names_add(&o->imports, rest, (size_t) (end - rest));
		return;
	}
	if (n > 2 && line[0] == '}' && line[n - 1] == ';')
	{
		/* the name that closes "typedef struct ... {" */
		const char *p = line + 1;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (is_ident(*p))
			add_ident(&o->types, p, end);
		return;
	}
	if (n == 0 || !(is_ident(line[0])))
		return;
	if (starts_word(line, n, "typedef", &rest))
	{
		/* typedef struct name {  or  typedef int name; */
		const char *semi = memchr(line, ';', n);

		if (semi != NULL && memchr(line, '(', n) == NULL)
		{
			const char *p = semi;

			while (p > rest && is_ident(p[-1]))
				p--;
			add_ident(&o->types, p, semi);
		}
		return;
	}
	if ((starts_word(line, n, "struct", &rest) || starts_word(line, n, "union", &rest) ||
		 starts_word(line, n, "enum", &rest)) && memchr(line, ';', n) == NULL &&
		memchr(line, '(', n) == NULL)
	{
		add_ident(&o->types, rest, end);
		return;
	}
	if ((paren = memchr(line, '(', n)) != NULL && line[n - 1] != ';' &&
		memchr(line, '=', (size_t) (paren - line)) == NULL)
	{
		const char *p = paren;

		while (p > line && (p[-1] == ' ' || p[-1] == '\t'))
			p--;
		paren = p;
		while (p > line && is_ident(p[-1]))
			p--;
		if (paren > p && !c_keyword(p, (size_t) (paren - p)))
			mn_names_add(&o->functions, p, (size_t) (paren - p));
	}
}

/* ---- Python ---- */

typedef struct py_class
{
	mn_buf		names;			/* "A (3 methods), B (0 methods)" */
	int			count;
	int			methods;		/* of the class being read */
	const char *name;
	size_t		name_len;
} py_class;

static void
py_class_close(py_class *c, outline *o)
{
	char		label[64];
	int			len;

	if (c->name == NULL)
		return;
	len = snprintf(label, sizeof(label), " (%d methods)", c->methods);
	mn_buf_put(&c->names, c->name, c->name_len);
	mn_buf_put(&c->names, label, (size_t) len);
	mn_names_add(&o->types, c->names.data, c->names.len);
	mn_buf_reset(&c->names);
	c->name = NULL;
}

static void
python_scan(outline *o, const char *text, size_t len)
{
	mn_lines	it = {text, text + len};
	const char *line;
	const char *rest;
	size_t		n;
	py_class	c = {0};

	while (mn_next_line(&it, &line, &n))
	{
		const char *end = line + n;

		if (n == 0)
			continue;
		if (line[0] == ' ' || line[0] == '\t')
		{
			const char *p = line;

			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			if (c.name != NULL && (starts_word(p, (size_t) (end - p), "def", &rest) ||
								   starts_word(p, (size_t) (end - p), "async", &rest)))
				c.methods++;
			continue;
		}
		if (line[0] == '#' || line[0] == ')' || line[0] == ']' || line[0] == '}')
			continue;
		py_class_close(&c, o);
		if (starts_word(line, n, "import", &rest) || starts_word(line, n, "from", &rest))
			trimmed_add(&o->imports, line, n);
		else if (starts_word(line, n, "class", &rest))
		{
			const char *p = rest;

			while (p < end && is_ident(*p))
				p++;
			c.name = rest;
			c.name_len = (size_t) (p - rest);
			c.methods = 0;
		}
		else if (starts_word(line, n, "def", &rest) ||
				 (starts_word(line, n, "async", &rest) &&
				  starts_word(rest, (size_t) (end - rest), "def", &rest)))
			add_ident(&o->functions, rest, end);
	}
	py_class_close(&c, o);
	mn_buf_free(&c.names);
}

/* ---- JavaScript, TypeScript ---- */

static void
js_line(outline *o, const char *line, size_t n, bool typescript)
{
	const char *end = line + n;
	const char *p = line;
	const char *rest;
	const char *req;

	if (starts_word(line, n, "import", &rest))
	{
		trimmed_add(&o->imports, line, n);
		return;
	}
	if (n > 0 && is_ident(line[0]) && (req = strstr(line, "require(")) != NULL && req < end)
	{
		trimmed_add(&o->imports, line, n);
		return;
	}
	if (starts_word(p, (size_t) (end - p), "export", &rest))
	{
		p = rest;
		if (starts_word(p, (size_t) (end - p), "default", &rest))
			p = rest;
	}
	else if (n == 0 || !is_ident(line[0]))
		return;
	if (starts_word(p, (size_t) (end - p), "declare", &rest))
		p = rest;
	if (starts_word(p, (size_t) (end - p), "abstract", &rest))
		p = rest;
	if (starts_word(p, (size_t) (end - p), "async", &rest))
		p = rest;
	if (starts_word(p, (size_t) (end - p), "class", &rest))
		add_ident(&o->types, rest, end);
	else if (typescript && (starts_word(p, (size_t) (end - p), "interface", &rest) ||
							starts_word(p, (size_t) (end - p), "type", &rest) ||
							starts_word(p, (size_t) (end - p), "enum", &rest)))
		add_ident(&o->types, rest, end);
	else if (starts_word(p, (size_t) (end - p), "function", &rest) ||
			 starts_word(p, (size_t) (end - p), "function*", &rest))
		add_ident(&o->functions, rest + (*rest == '*'), end);
	else if ((starts_word(p, (size_t) (end - p), "const", &rest) ||
			  starts_word(p, (size_t) (end - p), "let", &rest)) &&
			 ((req = strstr(rest, "=>")) != NULL && req < end))
		add_ident(&o->functions, rest, end);
}

bool
mn_outline(const char *type, const char *text, size_t len, mn_buf *out)
{
	outline		o;
	bool		c = strcmp(type, "c") == 0;
	bool		ts = strcmp(type, "typescript") == 0;

	memset(&o, 0, sizeof(o));
	if (strcmp(type, "python") == 0)
		python_scan(&o, text, len);
	else if (c || ts || strcmp(type, "javascript") == 0)
	{
		mn_lines	it = {text, text + len};
		const char *line;
		size_t		n;

		while (mn_next_line(&it, &line, &n))
		{
			if (c)
				c_line(&o, line, n);
			else
				js_line(&o, line, n, ts);
		}
	}
	else
		return false;
	mn_names_flush(&o.imports, "Imports", out);
	mn_names_flush(&o.types, c ? "Types" : "Classes and types", out);
	mn_names_flush(&o.functions, "Functions", out);
	return true;
}
