/*
 * detect.c
 *		The type of a file, from its name's extension (the seed's map, with
 *		C).  Content that is not text is refused before this (handle.c);
 *		libmagic is not used: a type it names has no summary of its own
 *		here, so it would change nothing but a dependency.
 */
#include <string.h>
#include <strings.h>

#include "files/files.h"

static const struct
{
	const char *ext;
	const char *type;
}			types[] = {
	{"c", "c"}, {"h", "c"},
	{"py", "python"}, {"pyi", "python"},
	{"js", "javascript"}, {"jsx", "javascript"}, {"mjs", "javascript"}, {"cjs", "javascript"},
	{"ts", "typescript"}, {"tsx", "typescript"}, {"mts", "typescript"}, {"cts", "typescript"},
	{"json", "json"}, {"jsonc", "json"},
	{"md", "markdown"}, {"markdown", "markdown"},
	{"csv", "csv"}, {"tsv", "tsv"},
	{"yaml", "yaml"}, {"yml", "yaml"},
	{"toml", "toml"},
	{"txt", "text"}, {"rst", "text"},
	{"rs", "rust"}, {"go", "go"}, {"java", "java"}, {"sql", "sql"}, {"sh", "shell"},
};

const char *
mn_file_type(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (dot == NULL || dot == base)
		return "unknown";
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcasecmp(dot + 1, types[i].ext) == 0)
			return types[i].type;
	return "unknown";
}
