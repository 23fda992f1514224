// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libsdp's rules parser and matcher (libsdp/rules.c): good
 * files in every form the grammar allows, malformed lines (each must be
 * reported with the file name and line number, and counted), and the
 * matcher's decisions (first match wins, roles, prefixes, port ranges,
 * v4-mapped addresses, program globs).  Pure user space: no module, no
 * device.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rules.h"
#include "tap.h"

/* Messages the parser reported, one per line. */
struct reports {
	char text[8192];
	int n;
};

static void collect(void *arg, const char *msg)
{
	struct reports *r = arg;
	size_t len = strlen(r->text);

	snprintf(r->text + len, sizeof(r->text) - len, "%s\n", msg);
	r->n++;
}

static void parse(struct sdp_config *cfg, struct reports *r, const char *text)
{
	memset(r, 0, sizeof(*r));
	CHECK(sdp_config_parse(cfg, "test.conf", text, collect, r) == 0,
	      "parse failed");
}

static struct sockaddr_storage ss;

static const struct sockaddr *v4(const char *a, int port, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	CHECK(inet_pton(AF_INET, a, &sin->sin_addr) == 1, "bad test address");
	*len = sizeof(*sin);
	return (struct sockaddr *)&ss;
}

static const struct sockaddr *v6(const char *a, int port, socklen_t *len)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	CHECK(inet_pton(AF_INET6, a, &sin6->sin6_addr) == 1,
	      "bad test address");
	*len = sizeof(*sin6);
	return (struct sockaddr *)&ss;
}

static enum sdp_use match4(struct sdp_config *cfg, enum sdp_role role,
			   const char *prog, const char *a, int port)
{
	socklen_t len;
	const struct sockaddr *sa = v4(a, port, &len);

	return sdp_config_match(cfg, role, prog, sa, len, NULL);
}

static enum sdp_use match6(struct sdp_config *cfg, enum sdp_role role,
			   const char *prog, const char *a, int port)
{
	socklen_t len;
	const struct sockaddr *sa = v6(a, port, &len);

	return sdp_config_match(cfg, role, prog, sa, len, NULL);
}

/* Every form of a good line, with comments, blanks, tabs and CRLF. */
static void test_good_file(void)
{
	struct sdp_config cfg;
	struct reports r;
	const struct sdp_rule *x;

	parse(&cfg, &r,
	      "# a comment\n"
	      "\n"
	      "   \t  \n"
	      "log min-level 7 destination stderr\n"
	      "use sdp server iperf3 10.55.0.1:5201\r\n"
	      "use tcp  client\t*  10.0.0.0/8:1-1023   # trailing comment\n"
	      "use both listen db2* *:*\n"
	      "use both connect t?cp [fd00::]/8:5000-6000\n"
	      "use sdp client * [fe80::1/64]:*\n"
	      "use sdp server * [::1]:7\n"
	      "use tcp server * *\n"
	      "use both client * *:80\n"
	      "use sdp client * 192.168.0.0/20:*");
	CHECK(r.n == 0 && cfg.n_errors == 0, "errors: %s", r.text);
	CHECK(cfg.n_rules == 9, "%zu rules", cfg.n_rules);
	CHECK(cfg.log_level == 7 && cfg.log_dest == SDP_DEST_STDERR,
	      "log %d/%d", cfg.log_level, cfg.log_dest);

	x = &cfg.rules[0];
	CHECK(x->use == SDP_USE_SDP && x->role == SDP_ROLE_SERVER &&
	      !strcmp(x->program, "iperf3") && x->family == AF_INET &&
	      x->prefix == 32 && x->port_lo == 5201 && x->port_hi == 5201 &&
	      x->line == 5, "rule 0");
	x = &cfg.rules[1];
	CHECK(x->use == SDP_USE_TCP && x->role == SDP_ROLE_CLIENT &&
	      !x->program && x->prefix == 8 && x->port_lo == 1 &&
	      x->port_hi == 1023, "rule 1");
	x = &cfg.rules[2];
	CHECK(x->use == SDP_USE_BOTH && x->role == SDP_ROLE_SERVER &&
	      !strcmp(x->program, "db2*") && x->family == AF_UNSPEC &&
	      x->port_lo == 0 && x->port_hi == 65535, "rule 2");
	x = &cfg.rules[3];
	CHECK(x->role == SDP_ROLE_CLIENT && x->family == AF_INET6 &&
	      x->prefix == 8 && x->addr[0] == 0xfd && x->port_lo == 5000 &&
	      x->port_hi == 6000, "rule 3");
	x = &cfg.rules[4];
	CHECK(x->family == AF_INET6 && x->prefix == 64 && x->addr[0] == 0xfe,
	      "rule 4");
	x = &cfg.rules[5];
	CHECK(x->family == AF_INET6 && x->prefix == 128 && x->addr[15] == 1 &&
	      x->port_lo == 7, "rule 5");
	x = &cfg.rules[6];
	CHECK(x->family == AF_UNSPEC && x->port_hi == 65535, "rule 6: bare *");
	x = &cfg.rules[8];
	CHECK(x->prefix == 20 && x->line == 13, "rule 8");
	sdp_config_free(&cfg);
}

static void test_log_lines(void)
{
	struct sdp_config cfg;
	struct reports r;

	parse(&cfg, &r, "log destination file /var/log/libsdp.log\n");
	CHECK(r.n == 0, "%s", r.text);
	CHECK(cfg.log_dest == SDP_DEST_FILE &&
	      !strcmp(cfg.log_file, "/var/log/libsdp.log") &&
	      cfg.log_level == SDP_LOG_ERROR, "file, default level");
	sdp_config_free(&cfg);

	parse(&cfg, &r, "log min-level 1\nlog destination syslog\n");
	CHECK(r.n == 0, "%s", r.text);
	CHECK(cfg.log_dest == SDP_DEST_SYSLOG && cfg.log_level == 1,
	      "later lines add to earlier ones");
	sdp_config_free(&cfg);
}

/*
 * One malformed line: exactly one report, naming test.conf and @line,
 * containing @needle; the good lines around it are kept.
 */
static void bad(const char *text, unsigned int line, const char *needle)
{
	struct sdp_config cfg;
	struct reports r;
	char where[32];

	parse(&cfg, &r, text);
	snprintf(where, sizeof(where), "test.conf:%u: ", line);
	CHECK(r.n == 1 && cfg.n_errors == 1, "%d reports for <%s>: %s", r.n,
	      text, r.text);
	CHECK(!strncmp(r.text, where, strlen(where)),
	      "report does not start with '%s': %s", where, r.text);
	CHECK(strstr(r.text, needle), "report for <%s> lacks '%s': %s", text,
	      needle, r.text);
	sdp_config_free(&cfg);
}

static void test_malformed_lines(void)
{
	bad("use sdp server * *:*\nsue sdp server * *:*\n", 2,
	    "unknown statement 'sue'");
	bad("use sdpp server * *:*\n", 1, "unknown address family 'sdpp'");
	bad("use sdp serve * *:*\n", 1, "unknown role 'serve'");
	bad("\n\nuse sdp server *\n", 3, "needs 4 fields");
	bad("use sdp server * 10.0.0.1 :80\n", 1, "too many fields");
	bad("use sdp server * 10.0.0.256:80\n", 1, "not an IPv4 address");
	bad("use sdp server * 10.0.0.1\n", 1, "missing ':PORT'");
	bad("use sdp server * 10.0.0.0/33:80\n", 1, "bad prefix length");
	bad("use sdp server * 10.0.0.0/x:80\n", 1, "bad prefix length");
	bad("use sdp server * *:70000\n", 1, "bad port '70000'");
	bad("use sdp server * *:80-\n", 1, "bad port");
	bad("use sdp server * *:http\n", 1, "bad port 'http'");
	bad("use sdp server * *:90-80\n", 1, "ends below its start");
	bad("use sdp server * fd00::1:80\n", 1, "in brackets");
	bad("use sdp server * [fd00::1:80\n", 1, "missing ']'");
	bad("use sdp server * [fd00::1]80\n", 1, "missing ':PORT'");
	bad("use sdp server * [10.0.0.1]:80\n", 1, "not an IPv6 address");
	bad("use sdp server * [::]/129:80\n", 1, "bad prefix length");
	bad("use sdp server * */8:80\n", 1, "takes no prefix");
	bad("log\n", 1, "'log' needs");
	bad("log min-level 0\n", 1, "min-level");
	bad("log min-level 10\n", 1, "min-level");
	bad("log min-level\n", 1, "min-level");
	bad("log destination\n", 1, "'destination' needs");
	bad("log destination printer\n", 1, "unknown log destination 'printer'");
	bad("log destination file libsdp.log\n", 1, "absolute path");
	bad("log verbose\n", 1, "unknown log setting 'verbose'");
}

/* Errors are counted per line and the good lines still parse. */
static void test_errors_keep_good_lines(void)
{
	struct sdp_config cfg;
	struct reports r;

	parse(&cfg, &r,
	      "use sdp server * *:1\n"
	      "use bogus\n"
	      "use sdp client * *:2\n"
	      "use sdp client * *:99999\n"
	      "log min-level 4\n");
	CHECK(cfg.n_errors == 2 && r.n == 2, "%u errors", cfg.n_errors);
	CHECK(strstr(r.text, "test.conf:2: ") && strstr(r.text, "test.conf:4: "),
	      "%s", r.text);
	CHECK(cfg.n_rules == 2 && cfg.log_level == 4, "good lines kept");
	sdp_config_free(&cfg);
}

static void test_long_line(void)
{
	char text[3000];

	memset(text, ' ', sizeof(text));
	memcpy(text, "use", 3);
	text[sizeof(text) - 2] = '\n';
	text[sizeof(text) - 1] = '\0';
	bad(text, 1, "longer than");
}

static void test_first_match_wins(void)
{
	struct sdp_config cfg;
	struct reports r;
	const struct sdp_rule *rule;
	socklen_t len;
	const struct sockaddr *sa;

	parse(&cfg, &r,
	      "use tcp client * 10.55.0.7:*\n"
	      "use sdp client * 10.55.0.0/24:5000-5010\n"
	      "use both client * 10.55.0.0/16:*\n"
	      "use sdp server * *:5001\n");
	CHECK(r.n == 0, "%s", r.text);
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, NULL, "10.55.0.7", 5000) ==
	      SDP_USE_TCP, "line 1 first");
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, NULL, "10.55.0.8", 5000) ==
	      SDP_USE_SDP, "range start");
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, NULL, "10.55.0.8", 5010) ==
	      SDP_USE_SDP, "range end");
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, NULL, "10.55.0.8", 5011) ==
	      SDP_USE_BOTH, "after the range");
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, NULL, "10.55.1.8", 5001) ==
	      SDP_USE_BOTH, "outside /24, inside /16");
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, NULL, "10.56.0.1", 5001) ==
	      SDP_USE_TCP, "no rule: tcp");
	/* Roles are separate. */
	CHECK(match4(&cfg, SDP_ROLE_SERVER, NULL, "10.55.0.8", 5000) ==
	      SDP_USE_TCP, "no server rule for 5000");
	CHECK(match4(&cfg, SDP_ROLE_SERVER, NULL, "0.0.0.0", 5001) ==
	      SDP_USE_SDP, "server rule");
	sa = v4("10.55.0.9", 5005, &len);
	CHECK(sdp_config_match(&cfg, SDP_ROLE_CLIENT, NULL, sa, len, &rule) ==
	      SDP_USE_SDP && rule && rule->line == 2, "the rule is returned");
	sa = v4("10.99.0.9", 5005, &len);
	CHECK(sdp_config_match(&cfg, SDP_ROLE_CLIENT, NULL, sa, len, &rule) ==
	      SDP_USE_TCP && !rule, "no rule returned");
	sdp_config_free(&cfg);
}

static void test_prefixes(void)
{
	struct sdp_config cfg;
	struct reports r;

	parse(&cfg, &r,
	      "use sdp client * 192.168.16.0/20:*\n"
	      "use both client * 0.0.0.0/0:1\n"
	      "use sdp client * [2001:db8::]/33:*\n"
	      "use both client * *:2\n");
	CHECK(r.n == 0, "%s", r.text);
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, NULL, "192.168.31.255", 9) ==
	      SDP_USE_SDP, "/20 upper end");
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, NULL, "192.168.32.0", 9) ==
	      SDP_USE_TCP, "/20 just outside");
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, NULL, "1.2.3.4", 1) ==
	      SDP_USE_BOTH, "/0 matches any IPv4");
	CHECK(match6(&cfg, SDP_ROLE_CLIENT, NULL, "2001:db8:7fff::1", 9) ==
	      SDP_USE_SDP, "/33 inside");
	CHECK(match6(&cfg, SDP_ROLE_CLIENT, NULL, "2001:db8:8000::1", 9) ==
	      SDP_USE_TCP, "/33 outside");
	CHECK(match6(&cfg, SDP_ROLE_CLIENT, NULL, "::1", 1) == SDP_USE_TCP,
	      "an IPv4 rule does not match IPv6");
	CHECK(match6(&cfg, SDP_ROLE_CLIENT, NULL, "::ffff:192.168.20.1", 9) ==
	      SDP_USE_SDP, "v4-mapped IPv6 matches the IPv4 rule");
	CHECK(match6(&cfg, SDP_ROLE_CLIENT, NULL, "fe80::2", 2) ==
	      SDP_USE_BOTH, "'*' matches IPv6");
	sdp_config_free(&cfg);
}

static void test_programs(void)
{
	struct sdp_config cfg;
	struct reports r;

	parse(&cfg, &r,
	      "use tcp client iperf3 *:*\n"
	      "use sdp client ip* *:*\n"
	      "use both client t?cp *:*\n"
	      "use sdp server [a-c]sh *:*\n");
	CHECK(r.n == 0, "%s", r.text);
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, "iperf3", "1.1.1.1", 1) ==
	      SDP_USE_TCP, "exact name");
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, "iperf", "1.1.1.1", 1) ==
	      SDP_USE_SDP, "prefix glob");
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, "ttcp", "1.1.1.1", 1) ==
	      SDP_USE_BOTH, "? glob");
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, "tcp", "1.1.1.1", 1) ==
	      SDP_USE_TCP, "? needs a character");
	CHECK(match4(&cfg, SDP_ROLE_SERVER, "bsh", "1.1.1.1", 1) ==
	      SDP_USE_SDP, "bracket glob");
	CHECK(match4(&cfg, SDP_ROLE_SERVER, "zsh", "1.1.1.1", 1) ==
	      SDP_USE_TCP, "bracket glob, outside");

	/* Filtering for a program keeps its rules, in order. */
	CHECK(sdp_config_for_program(&cfg, "iperf3"), "iperf3 can use SDP");
	CHECK(cfg.n_rules == 2 && cfg.rules[0].use == SDP_USE_TCP &&
	      cfg.rules[1].line == 2, "%zu rules left", cfg.n_rules);
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, NULL, "1.1.1.1", 1) ==
	      SDP_USE_TCP, "still the first match");
	sdp_config_free(&cfg);

	parse(&cfg, &r, "use sdp client other *:*\nuse tcp client * *:*\n");
	CHECK(!sdp_config_for_program(&cfg, "iperf3"),
	      "only tcp rules left: nothing to do");
	sdp_config_free(&cfg);
}

/*
 * Without a rules file, servers stay TCP: a server that listened over SDP
 * too would be reachable over RDMA, where the host's firewall does not
 * see its connections, without the admin having asked.  Clients try SDP.
 */
static void test_default_rules(void)
{
	struct sdp_config cfg;

	CHECK(sdp_config_default(&cfg) == 0, "default");
	CHECK(cfg.n_rules == 2 && !cfg.path, "%zu rules", cfg.n_rules);
	CHECK(match4(&cfg, SDP_ROLE_SERVER, "x", "0.0.0.0", 80) ==
	      SDP_USE_TCP, "a server is exposed over SDP by default");
	CHECK(match6(&cfg, SDP_ROLE_CLIENT, "x", "::1", 80) == SDP_USE_BOTH,
	      "client both");
	sdp_config_free(&cfg);
}

/*
 * The same for the shipped /etc/libsdp.conf (libsdp/libsdp.conf): no
 * server listens over SDP unless the admin adds a line for it.
 */
static void test_shipped_rules_keep_servers_tcp(void)
{
	static const char *const progs[] = { "redis-server", "nginx", "sshd",
					     "postgres", "iperf3" };
	struct sdp_config cfg;
	size_t i;

	CHECK(sdp_config_load(&cfg, "libsdp/libsdp.conf", NULL, NULL) == 0,
	      "libsdp/libsdp.conf does not load");
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		CHECK(match4(&cfg, SDP_ROLE_SERVER, progs[i], "0.0.0.0", 6379) ==
		      SDP_USE_TCP, "%s is exposed over SDP", progs[i]);
		CHECK(match6(&cfg, SDP_ROLE_SERVER, progs[i], "::", 22) ==
		      SDP_USE_TCP, "%s is exposed over SDP (IPv6)", progs[i]);
	}
	CHECK(match4(&cfg, SDP_ROLE_CLIENT, "redis-cli", "10.55.0.2", 6379) ==
	      SDP_USE_BOTH, "clients no longer try SDP");
	sdp_config_free(&cfg);
}

/* A rule printed by sdp_rule_str() parses back to the same rule. */
static void test_rule_round_trip(void)
{
	struct sdp_config a, b;
	struct reports r;
	char text[4096] = "", line[256];
	size_t i;

	parse(&a, &r,
	      "use sdp server iperf3 10.55.0.1:5201\n"
	      "use tcp client * 10.0.0.0/8:1-1023\n"
	      "use both server db2* *:*\n"
	      "use both client t?cp [fd00::]/8:5000-6000\n"
	      "use sdp client * [::1]:*\n");
	for (i = 0; i < a.n_rules; i++) {
		sdp_rule_str(&a.rules[i], line, sizeof(line));
		strcat(text, line);
		strcat(text, "\n");
	}
	parse(&b, &r, text);
	CHECK(r.n == 0 && b.n_rules == a.n_rules, "%s%s", text, r.text);
	for (i = 0; i < a.n_rules; i++) {
		const struct sdp_rule *x = &a.rules[i], *y = &b.rules[i];

		CHECK(x->use == y->use && x->role == y->role &&
		      x->family == y->family && x->prefix == y->prefix &&
		      !memcmp(x->addr, y->addr, 16) &&
		      x->port_lo == y->port_lo && x->port_hi == y->port_hi &&
		      !x->program == !y->program &&
		      (!x->program || !strcmp(x->program, y->program)),
		      "rule %zu differs: %s", i, text);
	}
	sdp_config_free(&a);
	sdp_config_free(&b);
}

static void test_load_file(void)
{
	char path[] = "/tmp/sdprules.XXXXXX";
	struct sdp_config cfg;
	struct reports r = { 0 };
	int fd = CHECK_OK(mkstemp(path));
	const char text[] = "use sdp client * *:*\nuse bad\n";

	CHECK(write(fd, text, sizeof(text) - 1) == sizeof(text) - 1, "write");
	CHECK(sdp_config_load(&cfg, path, collect, &r) == 0, "load: %s",
	      strerror(errno));
	CHECK(cfg.n_rules == 1 && cfg.n_errors == 1, "rules %zu errors %u",
	      cfg.n_rules, cfg.n_errors);
	CHECK(!strncmp(r.text, path, strlen(path)) &&
	      !strncmp(r.text + strlen(path), ":2: ", 4),
	      "the message names the file and line: %s", r.text);
	CHECK(!strcmp(cfg.path, path), "path kept");
	sdp_config_free(&cfg);

	/* Not a text file. */
	CHECK(lseek(fd, 0, SEEK_SET) == 0 && write(fd, "use\0", 4) == 4, "w");
	CHECK_ERRNO(sdp_config_load(&cfg, path, collect, &r), EINVAL);
	close(fd);
	unlink(path);
	CHECK_ERRNO(sdp_config_load(&cfg, path, collect, &r), ENOENT);
	CHECK_ERRNO(sdp_config_load(&cfg, "/tmp", collect, &r), EINVAL);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_good_file),
	TAP_TEST(test_log_lines),
	TAP_TEST(test_malformed_lines),
	TAP_TEST(test_errors_keep_good_lines),
	TAP_TEST(test_long_line),
	TAP_TEST(test_first_match_wins),
	TAP_TEST(test_prefixes),
	TAP_TEST(test_programs),
	TAP_TEST(test_default_rules),
	TAP_TEST(test_shipped_rules_keep_servers_tcp),
	TAP_TEST(test_rule_round_trip),
	TAP_TEST(test_load_file),
};

TAP_MAIN(tests)
