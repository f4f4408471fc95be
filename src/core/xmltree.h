/* xmltree.h - a tiny DOM built with expat for small configuration documents:
 * the project's config.xml, client state files, init_data-like files. Not
 * for the scheduler request, which has its own streaming parser.
 *
 * Ownership: xml_parse() and xml_parse_file() return the root element; the
 * caller owns the whole tree and releases it with one xml_free(root). Every
 * pointer a lookup returns (nodes, texts, attributes) points into the tree
 * and stays valid until then; never free them one by one.
 *
 * Limits: documents larger than XML_MAX_BYTES, nested deeper than
 * XML_MAX_DEPTH elements, with more than XML_MAX_NODES elements, or that
 * declare entities are rejected, so a hostile file cannot exhaust memory.
 *
 * Lookups accept a NULL node and then report "absent", so they chain:
 * xml_child_text(xml_path(root, "config"), "upload_dir"). */
#ifndef LOCUS_XMLTREE_H
#define LOCUS_XMLTREE_H
#include <stddef.h>
#include <stdint.h>

#define XML_MAX_BYTES (16u * 1024 * 1024)
#define XML_MAX_DEPTH 64
#define XML_MAX_NODES (1u << 20)

struct xml_node {
    char *name;
    char *text;                /* the element's own character data, trimmed;
                                * "" when none, never NULL */
    struct xml_node *children; /* first child element, or NULL */
    struct xml_node *next;     /* next sibling, in document order */
    struct xml_node *parent;   /* NULL for the root */
    char **attrs;              /* NULL-terminated name, value pairs, or NULL */
};

/* Parses buf (len bytes, need not be NUL-terminated). NULL on error, with a
 * one-line message in err, naming the line for malformed input. */
struct xml_node *xml_parse(const char *buf, size_t len, char *err, size_t errlen);
/* The same for a file; the message starts with the path. */
struct xml_node *xml_parse_file(const char *path, char *err, size_t errlen);
void xml_free(struct xml_node *root);   /* the whole tree; NULL is fine */

/* The first child element named name, or NULL. */
const struct xml_node *xml_child(const struct xml_node *n, const char *name);
/* The next sibling after n with the same name, or NULL: walks repeated
 * elements, e.g. every <app> of a state file. */
const struct xml_node *xml_next_named(const struct xml_node *n);
/* Its trimmed text ("" for <x/>), or NULL if there is no such child. */
const char *xml_child_text(const struct xml_node *n, const char *name);
/* The value of attribute name of n, or NULL. */
const char *xml_attr(const struct xml_node *n, const char *name);

/* A flag: 1 for <x/>, <x></x>, <x>true</x>, <x>yes</x> or a nonzero integer;
 * 0 for <x>0</x>, <x>false</x>, <x>no</x>, anything else, or when absent. */
int xml_child_bool(const struct xml_node *n, const char *name);
/* Numbers: 0 when found and the whole text parsed (*out set), 1 when absent,
 * -1 when malformed, out of range or (for doubles) not finite; *out is left
 * alone unless 0 is returned. */
int xml_child_double(const struct xml_node *n, const char *name, double *out);
int xml_child_int64(const struct xml_node *n, const char *name, int64_t *out);

/* Follows a slash-separated chain of child names from n (n itself is not
 * matched): xml_path(root, "config/locality_scheduling") on a project's
 * <boinc> root. An empty path gives n. NULL if any step is missing. */
const struct xml_node *xml_path(const struct xml_node *n, const char *path);
#endif
