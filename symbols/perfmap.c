// SPDX-License-Identifier: Apache-2.0
#include "symbols/perfmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "base/proc.h"
#include "base/safe_open.h"
#include "base/text.h"

#define DEFAULT_PROC_ROOT "/proc"
#define READ_CHUNK (64u << 10)
#define STATUS_MAX (64u << 10)

/* One line, in the order fed: a later entry wins over an earlier one it overlaps. */
struct pm_entry {
	uint64_t start, end; /* end exclusive */
	uint32_t name;	     /* offset in strs */
};

/* The lookup table: disjoint, sorted by start. */
struct pm_seg {
	uint64_t start, end;
	uint32_t entry;
};

struct perfmap {
	size_t max_entries;
	uint64_t max_file_bytes;
	char *proc_root;

	struct pm_entry *ents;
	size_t n, cap;
	char *strs;
	size_t strs_len, strs_cap;
	struct pm_seg *segs;
	size_t nsegs;
	bool dirty;

	char line[PERFMAP_MAX_LINE];
	size_t line_len;
	bool skipping; /* inside a line over PERFMAP_MAX_LINE */

	bool have_file;
	uint64_t dev, ino, off;
	struct perfmap_stats st;
};

int perfmap__new(const struct perfmap_opts *opts, struct perfmap **out)
{
	struct perfmap *m;

	if (!out)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->max_entries = opts && opts->max_entries ? opts->max_entries :
						     PERFMAP_DEFAULT_MAX_ENTRIES;
	m->max_file_bytes = opts && opts->max_file_bytes ? opts->max_file_bytes :
							   PERFMAP_DEFAULT_MAX_FILE_BYTES;
	/* Name offsets are 32-bit, and the names come from the file. */
	if (m->max_file_bytes > UINT32_MAX)
		m->max_file_bytes = UINT32_MAX;
	if (m->max_entries > UINT32_MAX)
		m->max_entries = UINT32_MAX;
	m->proc_root = strdup(opts && opts->proc_root ? opts->proc_root : DEFAULT_PROC_ROOT);
	if (!m->proc_root) {
		free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

void perfmap__free(struct perfmap *m)
{
	if (!m)
		return;
	free(m->ents);
	free(m->strs);
	free(m->segs);
	free(m->proc_root);
	free(m);
}

void perfmap__reset(struct perfmap *m)
{
	if (!m)
		return;
	free(m->ents);
	free(m->strs);
	free(m->segs);
	m->ents = NULL;
	m->strs = NULL;
	m->segs = NULL;
	m->n = m->cap = m->strs_len = m->strs_cap = m->nsegs = 0;
	m->dirty = false;
	m->line_len = 0;
	m->skipping = false;
	m->st.entries = 0;
}

/* ---- the parser ---- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A hex number at *@p (before @end), "0x" optional. Returns 0 or -EINVAL (none, overflow). */
static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int d, digits = 0;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hex_digit(s[2]) >= 0)
		s += 2;
	for (; s < end && (d = hex_digit(*s)) >= 0; s++, digits++) {
		if (v > UINT64_MAX >> 4)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

/* Skips one or more blanks. Returns 0, or -EINVAL when there is none. */
static int skip_blanks(const char **p, const char *end)
{
	const char *s = *p;

	while (s < end && is_blank(*s))
		s++;
	if (s == *p)
		return -EINVAL;
	*p = s;
	return 0;
}

static int add_entry(struct perfmap *m, uint64_t start, uint64_t end, const char *name, size_t len)
{
	struct pm_entry *e;
	int err;

	if (m->n >= m->max_entries || m->strs_len + len + 1 > m->max_file_bytes) {
		m->st.dropped++;
		return 0;
	}
	err = array_ensure((void **)&m->ents, &m->cap, sizeof(*m->ents), m->n + 1);
	if (!err)
		err = array_ensure((void **)&m->strs, &m->strs_cap, 1, m->strs_len + len + 1);
	if (err)
		return err;
	e = &m->ents[m->n++];
	*e = (struct pm_entry){ .start = start, .end = end, .name = (uint32_t)m->strs_len };
	m->strs_len += text_utf8_sanitize_copy(m->strs + m->strs_len, len + 1, name, len) + 1;
	m->dirty = true;
	m->st.entries = m->n;
	return 0;
}

/* Parses one line (@len bytes, no newline). Returns 0 (also for a bad line) or -ENOMEM. */
static int parse_line(struct perfmap *m, const char *s, size_t len)
{
	const char *p = s, *end = s + len;
	uint64_t start, size;

	m->st.lines++;
	while (end > p && (end[-1] == '\r' || is_blank(end[-1])))
		end--;
	if (parse_hex(&p, end, &start) || skip_blanks(&p, end) || parse_hex(&p, end, &size) ||
	    skip_blanks(&p, end) || p == end || !size || size > UINT64_MAX - start) {
		m->st.bad++;
		return 0;
	}
	return add_entry(m, start, start + size, p, (size_t)(end - p));
}

/* A line of @len bytes that does not fit: counted, and skipped to its newline. */
static void long_line(struct perfmap *m, bool ended)
{
	m->st.lines++;
	m->st.long_lines++;
	m->line_len = 0;
	m->skipping = !ended;
}

int perfmap__feed(struct perfmap *m, const char *buf, size_t len, bool eof)
{
	const char *p = buf, *end = buf + len, *nl;
	size_t seg;
	int err = 0;

	if (!m || (!buf && len))
		return -EINVAL;
	while (p < end && !err) {
		nl = memchr(p, '\n', (size_t)(end - p));
		seg = (size_t)((nl ? nl : end) - p);
		if (m->skipping) {
			m->skipping = !nl;
		} else if (m->line_len + seg + 1 > PERFMAP_MAX_LINE) {
			long_line(m, nl);
		} else if (!nl) {
			memcpy(m->line + m->line_len, p, seg);
			m->line_len += seg;
		} else if (!m->line_len) {
			err = parse_line(m, p, seg);
		} else {
			memcpy(m->line + m->line_len, p, seg);
			err = parse_line(m, m->line, m->line_len + seg);
			m->line_len = 0;
		}
		p += seg + (nl ? 1 : 0);
	}
	if (!err && eof) {
		if (m->line_len)
			err = parse_line(m, m->line, m->line_len);
		m->line_len = 0;
		m->skipping = false;
	}
	return err;
}

/* ---- the lookup table: a sweep over the boundaries, the latest active entry wins ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_by_start(const void *a, const void *b, void *ctx)
{
	const struct pm_entry *e = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (e[i].start != e[j].start)
		return e[i].start < e[j].start ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* A max-heap of entry indexes: the top is the latest line. */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++, parent;

	for (; i && h[parent = (i - 1) / 2] < v; i = parent)
		h[i] = h[parent];
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	size_t i = 0, c, len = --(*n);
	uint32_t v = h[len];

	while ((c = 2 * i + 1) < len) {
		if (c + 1 < len && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = v;
}

static size_t unique_u64(uint64_t *v, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

static void sweep(struct perfmap *m, const uint64_t *pts, size_t npts, const uint32_t *order,
		  uint32_t *heap)
{
	size_t k, j = 0, nh = 0;
	struct pm_seg *prev;
	uint32_t w;

	m->nsegs = 0;
	for (k = 0; k + 1 < npts; k++) {
		while (j < m->n && m->ents[order[j]].start == pts[k])
			heap_push(heap, &nh, order[j++]);
		while (nh && m->ents[heap[0]].end <= pts[k])
			heap_pop(heap, &nh);
		if (!nh)
			continue;
		w = heap[0];
		prev = m->nsegs ? &m->segs[m->nsegs - 1] : NULL;
		if (prev && prev->entry == w && prev->end == pts[k]) {
			prev->end = pts[k + 1];
			continue;
		}
		m->segs[m->nsegs++] = (struct pm_seg){ pts[k], pts[k + 1], w };
	}
}

static int rebuild(struct perfmap *m)
{
	uint32_t *order = NULL, *heap = NULL;
	uint64_t *pts = NULL;
	struct pm_seg *segs;
	size_t i, npts;
	int err = -ENOMEM;

	pts = malloc(2 * m->n * sizeof(*pts));
	order = malloc(m->n * sizeof(*order));
	heap = malloc(m->n * sizeof(*heap));
	segs = realloc(m->segs, 2 * m->n * sizeof(*segs));
	if (segs)
		m->segs = segs;
	if (!pts || !order || !heap || !segs)
		goto out;
	for (i = 0; i < m->n; i++) {
		pts[2 * i] = m->ents[i].start;
		pts[2 * i + 1] = m->ents[i].end;
		order[i] = (uint32_t)i;
	}
	qsort(pts, 2 * m->n, sizeof(*pts), cmp_u64);
	npts = unique_u64(pts, 2 * m->n);
	qsort_r(order, m->n, sizeof(*order), cmp_by_start, m->ents);
	sweep(m, pts, npts, order, heap);
	m->dirty = false;
	err = 0;
out:
	free(pts);
	free(order);
	free(heap);
	return err;
}

const char *perfmap__lookup(struct perfmap *m, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi, mid;
	const struct pm_seg *g;

	if (!m || !m->n || (m->dirty && rebuild(m)))
		return NULL;
	hi = m->nsegs;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->segs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->segs[lo - 1].end)
		return NULL;
	g = &m->segs[lo - 1];
	if (offset)
		*offset = addr - m->ents[g->entry].start;
	return m->strs + m->ents[g->entry].name;
}

void perfmap__stats(const struct perfmap *m, struct perfmap_stats *out)
{
	if (m && out)
		*out = m->st;
}

size_t perfmap__mem(const struct perfmap *m)
{
	if (!m)
		return 0;
	return sizeof(*m) + m->cap * sizeof(*m->ents) + m->strs_cap +
	       (m->segs ? 2 * m->n * sizeof(*m->segs) : 0);
}

/* ---- the loader ---- */

/* The last number on the line after @key at the start of a line of @status, into @out. */
static int last_field(const char *status, const char *key, uint32_t *out)
{
	const char *p = status, *eol;
	unsigned long long v;
	size_t klen = strlen(key);
	char *endp;
	bool any = false;

	while (p && strncmp(p, key, klen))
		p = (p = strchr(p, '\n')) ? p + 1 : NULL;
	if (!p)
		return -EINVAL;
	p += klen;
	eol = strchrnul(p, '\n');
	while (p < eol) {
		while (p < eol && is_blank(*p))
			p++;
		if (p == eol)
			break;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v = strtoull(p, &endp, 10);
		if (errno || endp > eol || !v || v > INT32_MAX)
			return -EINVAL;
		*out = (uint32_t)v;
		any = true;
		p = endp;
	}
	return any ? 0 : -EINVAL;
}

int perfmap_parse_nspid(const char *status, uint32_t *nspid)
{
	uint32_t v;

	if (!status || !nspid)
		return -EINVAL;
	if (last_field(status, "NSpid:", &v) && last_field(status, "Pid:", &v))
		return -EINVAL;
	*nspid = v;
	return 0;
}

/* Feeds the bytes of @fd from m->off up to @size. Returns 0 or -errno. */
static int read_appended(struct perfmap *m, int fd, uint64_t size)
{
	char *buf;
	ssize_t n;
	size_t want;
	int err = 0;

	buf = malloc(READ_CHUNK);
	if (!buf)
		return -ENOMEM;
	while (m->off < size && !err) {
		want = size - m->off < READ_CHUNK ? (size_t)(size - m->off) : READ_CHUNK;
		n = pread(fd, buf, want, (off_t)m->off);
		if (n < 0) {
			err = -errno;
			break;
		}
		if (!n)
			break; /* cut while we read: the next load starts over */
		err = perfmap__feed(m, buf, (size_t)n, false);
		m->off += (uint64_t)n;
		m->st.bytes = m->off;
	}
	free(buf);
	return err;
}

static int open_map(struct perfmap *m, uint32_t tgid)
{
	const struct safe_open_opts o = { .max_size = m->max_file_bytes };
	char *status = NULL, path[64];
	uint32_t nspid;
	int err;

	err = proc_read(m->proc_root, tgid, "status", STATUS_MAX, &status, NULL);
	if (err)
		return err;
	err = perfmap_parse_nspid(status, &nspid);
	free(status);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", nspid);
	return safe_open_in_proc_root(m->proc_root, tgid, path, &o);
}

int perfmap__load(struct perfmap *m, uint32_t tgid)
{
	struct stat st;
	int fd, err;

	if (!m || !tgid)
		return -EINVAL;
	fd = open_map(m, tgid);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (m->have_file &&
	    (st.st_ino != m->ino || st.st_dev != m->dev || (uint64_t)st.st_size < m->off)) {
		perfmap__reset(m);
		m->off = 0;
		m->st.rereads++;
	}
	m->have_file = true;
	m->ino = st.st_ino;
	m->dev = st.st_dev;
	/* safe_open checked the size; a file growing since is read to the cap only. */
	err = read_appended(m, fd,
			    (uint64_t)st.st_size < m->max_file_bytes ? (uint64_t)st.st_size :
								       m->max_file_bytes);
	close(fd);
	return err;
}
