// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp rules: parser and matcher of libsdp.conf(5).  See rules.h.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rules.h"

/* A rules file larger than this is certainly not one. */
#define SDP_CONFIG_MAX	(1 << 20)
#define MAX_TOKENS	8

struct parser {
	struct sdp_config *cfg;
	const char *path;
	unsigned int line;
	sdp_report_fn report;
	void *arg;
};

static void __attribute__((format(printf, 2, 3)))
parse_error(struct parser *p, const char *fmt, ...)
{
	char msg[512];
	int n;
	va_list ap;

	p->cfg->n_errors++;
	if (!p->report)
		return;
	n = snprintf(msg, sizeof(msg), "%s:%u: ", p->path, p->line);
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	p->report(p->arg, msg);
}

const char *sdp_use_name(enum sdp_use use)
{
	switch (use) {
	case SDP_USE_SDP:
		return "sdp";
	case SDP_USE_BOTH:
		return "both";
	default:
		return "tcp";
	}
}

const char *sdp_role_name(enum sdp_role role)
{
	return role == SDP_ROLE_SERVER ? "server" : "client";
}

bool sdp_glob_match(const char *pattern, const char *name)
{
	return fnmatch(pattern, name, 0) == 0;
}

/* A decimal number in [0, max], the whole of @s. */
static bool parse_uint(const char *s, unsigned long max, unsigned long *val)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*val = strtoul(s, &end, 10);
	return !errno && !*end && *val <= max;
}

/* "*", "N" or "N-M". */
static bool parse_ports(struct parser *p, const char *s, struct sdp_rule *r)
{
	unsigned long lo, hi;
	char buf[32], *dash;

	if (!strcmp(s, "*")) {
		r->port_lo = 0;
		r->port_hi = 65535;
		return true;
	}
	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash++ = '\0';
	if (!parse_uint(buf, 65535, &lo))
		goto bad;
	hi = lo;
	if (dash && !parse_uint(dash, 65535, &hi))
		goto bad;
	if (hi < lo) {
		parse_error(p, "port range '%s' ends below its start", s);
		return false;
	}
	r->port_lo = lo;
	r->port_hi = hi;
	return true;
bad:
	parse_error(p, "bad port '%s' (expected *, a port 0-65535 or a range PORT-PORT)",
		    s);
	return false;
}

/*
 * ADDRESS[/PREFIX]:PORTS, where ADDRESS is "*", dotted IPv4, or IPv6 in
 * brackets ("[::1]", "[fd00::]/8" or "[fd00::/8]"); a lone "*" stands for
 * every address and port.
 */
static bool parse_addr(struct parser *p, const char *tok, struct sdp_rule *r)
{
	char buf[128], *addr, *ports, *slash, *close;
	unsigned long prefix;
	unsigned int max;

	if (!strcmp(tok, "*")) {
		r->family = AF_UNSPEC;
		r->prefix = 0;
		r->port_lo = 0;
		r->port_hi = 65535;
		return true;
	}
	if (strlen(tok) >= sizeof(buf)) {
		parse_error(p, "address '%.40s...' is too long", tok);
		return false;
	}
	strcpy(buf, tok);
	addr = buf;
	if (*addr == '[') {
		addr++;
		close = strchr(addr, ']');
		if (!close) {
			parse_error(p, "'%s': missing ']' after the IPv6 address",
				    tok);
			return false;
		}
		*close = '\0';
		ports = close + 1;
		slash = strchr(addr, '/');
		if (!slash && *ports == '/') {
			/* [ADDR]/PREFIX:PORTS */
			slash = ports;
			ports = strchr(slash, ':');
			if (!ports) {
				parse_error(p, "'%s': missing ':PORT' after the address",
					    tok);
				return false;
			}
		}
		if (*ports != ':') {
			parse_error(p, "'%s': missing ':PORT' after the address",
				    tok);
			return false;
		}
		*ports++ = '\0';
		if (slash)
			*slash++ = '\0';
		if (!strcmp(addr, "*")) {
			r->family = AF_UNSPEC;
		} else if (inet_pton(AF_INET6, addr, r->addr) == 1) {
			r->family = AF_INET6;
		} else {
			parse_error(p, "'%s' is not an IPv6 address", addr);
			return false;
		}
	} else {
		ports = strrchr(addr, ':');
		if (!ports) {
			parse_error(p, "'%s': missing ':PORT' (write ADDRESS:PORT, ADDRESS:* or *:*)",
				    tok);
			return false;
		}
		*ports++ = '\0';
		if (strchr(addr, ':')) {
			parse_error(p, "'%s': put an IPv6 address in brackets, as [::1]:80",
				    tok);
			return false;
		}
		slash = strchr(addr, '/');
		if (slash)
			*slash++ = '\0';
		if (!strcmp(addr, "*")) {
			r->family = AF_UNSPEC;
		} else if (inet_pton(AF_INET, addr, r->addr) == 1) {
			r->family = AF_INET;
		} else {
			parse_error(p, "'%s' is not an IPv4 address", addr);
			return false;
		}
	}

	max = r->family == AF_INET6 ? 128 : r->family == AF_INET ? 32 : 0;
	r->prefix = max;
	if (slash) {
		if (r->family == AF_UNSPEC) {
			parse_error(p, "'%s': '*' takes no prefix length", tok);
			return false;
		}
		if (!parse_uint(slash, max, &prefix)) {
			parse_error(p, "bad prefix length '/%s' (expected 0-%u)",
				    slash, max);
			return false;
		}
		r->prefix = prefix;
	}
	return parse_ports(p, ports, r);
}

/* 0, -1 for a malformed line (reported), -2 when memory ran out. */
static int parse_use(struct parser *p, char **tok, int n)
{
	struct sdp_config *cfg = p->cfg;
	struct sdp_rule r = { .line = p->line };
	struct sdp_rule *rules;

	if (n != 5) {
		parse_error(p, n < 5 ?
			    "'use' needs 4 fields: use sdp|tcp|both server|client PROGRAM ADDRESS:PORT" :
			    "too many fields after 'use' (is there a space inside the address?)");
		return -1;
	}
	if (!strcmp(tok[1], "sdp")) {
		r.use = SDP_USE_SDP;
	} else if (!strcmp(tok[1], "tcp")) {
		r.use = SDP_USE_TCP;
	} else if (!strcmp(tok[1], "both")) {
		r.use = SDP_USE_BOTH;
	} else {
		parse_error(p, "unknown address family '%s' (expected sdp, tcp or both)",
			    tok[1]);
		return -1;
	}
	if (!strcmp(tok[2], "server") || !strcmp(tok[2], "listen")) {
		r.role = SDP_ROLE_SERVER;
	} else if (!strcmp(tok[2], "client") || !strcmp(tok[2], "connect")) {
		r.role = SDP_ROLE_CLIENT;
	} else {
		parse_error(p, "unknown role '%s' (expected server or client)",
			    tok[2]);
		return -1;
	}
	if (!parse_addr(p, tok[4], &r))
		return -1;
	if (strcmp(tok[3], "*")) {
		r.program = strdup(tok[3]);
		if (!r.program)
			return -2;
	}
	rules = realloc(cfg->rules, (cfg->n_rules + 1) * sizeof(*rules));
	if (!rules) {
		free(r.program);
		return -2;
	}
	cfg->rules = rules;
	cfg->rules[cfg->n_rules++] = r;
	return 0;
}

static bool parse_log(struct parser *p, char **tok, int n)
{
	struct sdp_config *cfg = p->cfg;
	enum sdp_log_dest dest = cfg->log_dest;
	int level = cfg->log_level;
	char *file = NULL;
	unsigned long val;
	int i;

	if (n < 2) {
		parse_error(p, "'log' needs 'destination stderr|syslog|file PATH' and/or 'min-level 1-9'");
		return false;
	}
	for (i = 1; i < n; i++) {
		if (!strcmp(tok[i], "min-level")) {
			if (i + 1 >= n || !parse_uint(tok[i + 1], 9, &val) ||
			    val < 1) {
				parse_error(p, "'min-level' needs a level from 1 (everything) to 9 (errors only)");
				goto fail;
			}
			level = val;
			i++;
		} else if (!strcmp(tok[i], "destination")) {
			if (i + 1 >= n) {
				parse_error(p, "'destination' needs stderr, syslog or file PATH");
				goto fail;
			}
			i++;
			if (!strcmp(tok[i], "stderr")) {
				dest = SDP_DEST_STDERR;
			} else if (!strcmp(tok[i], "syslog")) {
				dest = SDP_DEST_SYSLOG;
			} else if (!strcmp(tok[i], "file")) {
				if (i + 1 >= n || tok[i + 1][0] != '/') {
					parse_error(p, "'destination file' needs an absolute path");
					goto fail;
				}
				dest = SDP_DEST_FILE;
				free(file);
				file = strdup(tok[++i]);
				if (!file)
					goto fail;
			} else {
				parse_error(p, "unknown log destination '%s' (expected stderr, syslog or file PATH)",
					    tok[i]);
				goto fail;
			}
		} else {
			parse_error(p, "unknown log setting '%s' (expected destination or min-level)",
				    tok[i]);
			goto fail;
		}
	}
	cfg->log_dest = dest;
	cfg->log_level = level;
	if (file) {
		free(cfg->log_file);
		cfg->log_file = file;
	}
	return true;
fail:
	free(file);
	return false;
}

static void config_init(struct sdp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->log_dest = SDP_DEST_STDERR;
	cfg->log_level = SDP_LOG_ERROR;
}

int sdp_config_parse(struct sdp_config *cfg, const char *path,
		     const char *text, sdp_report_fn report, void *arg)
{
	struct parser p = { cfg, path, 0, report, arg };
	const char *s = text;

	config_init(cfg);
	if (path) {
		cfg->path = strdup(path);
		if (!cfg->path)
			return -1;
	}
	while (*s) {
		const char *eol = strchr(s, '\n');
		size_t len = eol ? (size_t)(eol - s) : strlen(s);
		char line[1024], *tok[MAX_TOKENS + 1], *save, *t;
		int n = 0;

		p.line++;
		if (len >= sizeof(line)) {
			parse_error(&p, "line longer than %zu characters",
				    sizeof(line) - 1);
			goto next;
		}
		memcpy(line, s, len);
		line[len] = '\0';
		t = strchr(line, '#');
		if (t)
			*t = '\0';
		for (t = strtok_r(line, " \t\r\f\v", &save); t;
		     t = strtok_r(NULL, " \t\r\f\v", &save)) {
			if (n == MAX_TOKENS) {
				parse_error(&p, "too many fields");
				goto next;
			}
			tok[n++] = t;
		}
		if (!n)
			goto next;
		if (!strcmp(tok[0], "use")) {
			if (parse_use(&p, tok, n) == -2)
				return -1;
		} else if (!strcmp(tok[0], "log")) {
			parse_log(&p, tok, n);
		} else {
			parse_error(&p, "unknown statement '%s' (expected use or log)",
				    tok[0]);
		}
next:
		s += len;
		if (*s)
			s++;
	}
	return 0;
}

/*
 * stdio, not open()/close(): inside libsdp.so, close() is the library's
 * own, which must not run while the library initialises.
 */
int sdp_config_load(struct sdp_config *cfg, const char *path,
		    sdp_report_fn report, void *arg)
{
	struct stat st;
	char *text;
	size_t got;
	FILE *f;
	int ret;

	config_init(cfg);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fstat(fileno(f), &st) < 0) {
		int err = errno;

		fclose(f);
		errno = err;
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > SDP_CONFIG_MAX) {
		fclose(f);
		errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		return -1;
	}
	text = malloc(st.st_size + 1);
	if (!text) {
		fclose(f);
		errno = ENOMEM;
		return -1;
	}
	got = fread(text, 1, st.st_size, f);
	fclose(f);
	text[got] = '\0';
	if (strlen(text) != got) {
		free(text);
		errno = EINVAL;	/* a NUL byte: not a text file */
		return -1;
	}
	ret = sdp_config_parse(cfg, path, text, report, arg);
	free(text);
	return ret;
}

int sdp_config_default(struct sdp_config *cfg)
{
	return sdp_config_parse(cfg, NULL,
				"use tcp server * *:*\n"
				"use both client * *:*\n", NULL, NULL);
}

void sdp_config_free(struct sdp_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->n_rules; i++)
		free(cfg->rules[i].program);
	free(cfg->rules);
	free(cfg->log_file);
	free(cfg->path);
	config_init(cfg);
}

bool sdp_config_for_program(struct sdp_config *cfg, const char *program)
{
	bool sdp = false;
	size_t i, n = 0;

	for (i = 0; i < cfg->n_rules; i++) {
		struct sdp_rule *r = &cfg->rules[i];

		if (r->program && !sdp_glob_match(r->program, program)) {
			free(r->program);
			continue;
		}
		if (r->use != SDP_USE_TCP)
			sdp = true;
		cfg->rules[n++] = *r;
	}
	cfg->n_rules = n;
	return sdp;
}

/* The address as (family, 16 bytes, port); v4-mapped IPv6 is IPv4. */
static bool addr_key(const struct sockaddr *sa, socklen_t len, int *family,
		     uint8_t addr[16], uint16_t *port)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(addr, 0, 16);
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *sin = (const void *)sa;

		*family = AF_INET;
		memcpy(addr, &sin->sin_addr, 4);
		*port = ntohs(sin->sin_port);
		return true;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		*port = ntohs(sin6->sin6_port);
		if (!memcmp(sin6->sin6_addr.s6_addr, v4mapped, 12)) {
			*family = AF_INET;
			memcpy(addr, sin6->sin6_addr.s6_addr + 12, 4);
		} else {
			*family = AF_INET6;
			memcpy(addr, sin6->sin6_addr.s6_addr, 16);
		}
		return true;
	}
	return false;
}

static bool prefix_match(const uint8_t *a, const uint8_t *b,
			 unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes))
		return false;
	if (!rest)
		return true;
	return !((a[bytes] ^ b[bytes]) & (0xff00 >> rest));
}

enum sdp_use sdp_config_match(const struct sdp_config *cfg,
			      enum sdp_role role, const char *program,
			      const struct sockaddr *addr, socklen_t len,
			      const struct sdp_rule **rule)
{
	uint8_t key[16];
	uint16_t port;
	int family;
	size_t i;

	if (rule)
		*rule = NULL;
	if (!addr_key(addr, len, &family, key, &port))
		return SDP_USE_TCP;
	for (i = 0; i < cfg->n_rules; i++) {
		const struct sdp_rule *r = &cfg->rules[i];

		if (r->role != role)
			continue;
		if (program && r->program &&
		    !sdp_glob_match(r->program, program))
			continue;
		if (port < r->port_lo || port > r->port_hi)
			continue;
		if (r->family != AF_UNSPEC &&
		    (r->family != family ||
		     !prefix_match(r->addr, key, r->prefix)))
			continue;
		if (rule)
			*rule = r;
		return r->use;
	}
	return SDP_USE_TCP;
}

const char *sdp_addr_str(const struct sockaddr *addr, socklen_t len,
			 char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN];

	if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *sin = (const void *)addr;

		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		snprintf(buf, size, "%s:%u", a, ntohs(sin->sin_port));
	} else if (addr->sa_family == AF_INET6 &&
		   len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *sin6 = (const void *)addr;

		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
		snprintf(buf, size, "[%s]:%u", a, ntohs(sin6->sin6_port));
	} else {
		snprintf(buf, size, "(family %d)", addr->sa_family);
	}
	return buf;
}

const char *sdp_rule_str(const struct sdp_rule *r, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN + 8] = "*", ports[16] = "*";

	if (r->family == AF_INET) {
		inet_ntop(AF_INET, r->addr, a, sizeof(a));
		if (r->prefix != 32)
			snprintf(a + strlen(a), sizeof(a) - strlen(a), "/%u",
				 r->prefix);
	} else if (r->family == AF_INET6) {
		a[0] = '[';
		inet_ntop(AF_INET6, r->addr, a + 1, sizeof(a) - 1);
		strcat(a, "]");
		if (r->prefix != 128)
			snprintf(a + strlen(a), sizeof(a) - strlen(a), "/%u",
				 r->prefix);
	}
	if (r->port_lo == r->port_hi)
		snprintf(ports, sizeof(ports), "%u", r->port_lo);
	else if (r->port_lo != 0 || r->port_hi != 65535)
		snprintf(ports, sizeof(ports), "%u-%u", r->port_lo, r->port_hi);
	snprintf(buf, size, "use %s %s %s %s:%s", sdp_use_name(r->use),
		 sdp_role_name(r->role), r->program ? r->program : "*", a,
		 ports);
	return buf;
}
