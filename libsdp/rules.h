/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsdp rules: the parser and matcher of libsdp.conf(5).
 *
 * This part has no side effects beyond memory and the file it reads, so
 * the library, sdp_run and the unit tests (tests/sdprules.c) share it.
 *
 *	use sdp|tcp|both server|client PROGRAM ADDRESS[/PREFIX]:PORT[-PORT]
 *	log [destination stderr|syslog|file PATH] [min-level 1-9]
 *
 * A rule applies when the program name matches PROGRAM (a glob), and
 * the address and port of the bind()/listen() (role "server") or of the
 * connect() (role "client") fall in the rule's range.  The first rule that
 * applies decides; when none does, the socket stays TCP.
 */
#ifndef LIBSDP_RULES_H
#define LIBSDP_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The rules file when LIBSDP_CONFIG_FILE does not name one. */
#define SDP_DEFAULT_CONFIG	"/etc/libsdp.conf"
/*
 * How long a "both" client tries SDP before TCP, in ms
 * (LIBSDP_CONNECT_TIMEOUT, sdp_run -t): the default and the largest
 * value taken (the library ignores others, sdp_run refuses them).
 */
#define SDP_CONNECT_MS_DEFAULT	1000
#define SDP_CONNECT_MS_MAX	600000

enum sdp_use {
	SDP_USE_TCP,	/* leave the socket alone */
	SDP_USE_SDP,	/* SDP only */
	SDP_USE_BOTH,	/* server: listen on both; client: SDP, else TCP */
};

enum sdp_role {
	SDP_ROLE_SERVER,	/* bind() and listen() */
	SDP_ROLE_CLIENT,	/* connect() */
};

/* Log levels, as in OFED's libsdp: higher is more important. */
enum sdp_level {
	SDP_LOG_DEBUG = 1,	/* every intercepted call that matters */
	SDP_LOG_CALLS = 2,	/* calls and their results */
	SDP_LOG_NOMATCH = 3,	/* a rule that did not match, and why */
	SDP_LOG_MATCH = 4,	/* the rule that matched */
	SDP_LOG_SUMMARY = 7,	/* one line per connect and listen */
	SDP_LOG_WARN = 8,	/* fallbacks, unsupported options */
	SDP_LOG_ERROR = 9,	/* errors only */
};

enum sdp_log_dest {
	SDP_DEST_STDERR,
	SDP_DEST_SYSLOG,
	SDP_DEST_FILE,
};

struct sdp_rule {
	enum sdp_use use;
	enum sdp_role role;
	char *program;		/* glob; NULL matches every program */
	int family;		/* AF_INET, AF_INET6, or AF_UNSPEC for "*" */
	uint8_t addr[16];	/* network byte order, IPv4 in the first 4 */
	unsigned int prefix;	/* bits of addr that must match */
	uint16_t port_lo, port_hi;	/* host byte order, inclusive */
	unsigned int line;	/* where it was defined */
};

struct sdp_config {
	char *path;		/* file it came from, or NULL: built in */
	struct sdp_rule *rules;
	size_t n_rules;
	enum sdp_log_dest log_dest;
	char *log_file;		/* SDP_DEST_FILE */
	int log_level;		/* messages below it are dropped */
	unsigned int n_errors;	/* malformed lines */
};

/*
 * Parse @text (the contents of @path, which is used in messages only)
 * into @cfg.  Every malformed line is reported through @report (one call
 * per line, the message names the file and line number, without a
 * newline) and counted in cfg->n_errors; the valid lines are kept.
 * Returns 0, or -1 when memory ran out.
 */
typedef void (*sdp_report_fn)(void *arg, const char *msg);
int sdp_config_parse(struct sdp_config *cfg, const char *path,
		     const char *text, sdp_report_fn report, void *arg);

/*
 * Read and parse the file @path.  Returns 0, -1 with errno when the file
 * cannot be read (cfg is then empty), -1 with ENOMEM.
 */
int sdp_config_load(struct sdp_config *cfg, const char *path,
		    sdp_report_fn report, void *arg);

/*
 * The rules used when there is no rules file: servers stay TCP (none is
 * exposed over RDMA unasked), clients try SDP and fall back to TCP.
 */
int sdp_config_default(struct sdp_config *cfg);

void sdp_config_free(struct sdp_config *cfg);

/*
 * Drop the rules whose program pattern does not match @program (the
 * matcher then only has to look at addresses), and tell whether any rule
 * left can select SDP.
 */
bool sdp_config_for_program(struct sdp_config *cfg, const char *program);

/*
 * The decision for a socket in @role at @addr (AF_INET or AF_INET6,
 * v4-mapped IPv6 addresses match IPv4 rules) for @program (NULL: the
 * program was already filtered with sdp_config_for_program()).  @rule
 * receives the rule that matched, or NULL (then the result is TCP).
 */
enum sdp_use sdp_config_match(const struct sdp_config *cfg,
			      enum sdp_role role, const char *program,
			      const struct sockaddr *addr, socklen_t len,
			      const struct sdp_rule **rule);

/* Does the glob @pattern (*, ?, [...]) match @name? */
bool sdp_glob_match(const char *pattern, const char *name);

const char *sdp_use_name(enum sdp_use use);
const char *sdp_role_name(enum sdp_role role);
/* "a.b.c.d:port" or "[v6]:port" */
const char *sdp_addr_str(const struct sockaddr *addr, socklen_t len,
			 char *buf, size_t size);
/* A rule as it would be written in the file. */
const char *sdp_rule_str(const struct sdp_rule *r, char *buf, size_t size);

#endif /* LIBSDP_RULES_H */
