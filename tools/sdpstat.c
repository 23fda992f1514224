// SPDX-License-Identifier: GPL-2.0
/*
 * sdpstat: list SDP sockets like `ss -t` and print the SDP statistics.
 *
 *   sdpstat [-a|-l] [-e] [-H] [-4|-6] [-f FAMILY] [FILTER...]
 *   sdpstat -s
 *
 * Sockets come from the sock_diag netlink dump of the sdp module
 * (include/uapi/linux/sdp_diag.h; the dump and its parser are
 * sdp_diag_parse.c, shared with the tests), statistics from
 * /proc/net/sdp_stats; both are those of the caller's network namespace.
 * See sdpstat(8).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/sdp.h>
#include <linux/sdp_diag.h>

#include "sdp_diag_parse.h"
#include "sdp_names.h"

/* TCP states, numbered as in the kernel (include/net/tcp_states.h). */
enum {
	ST_ESTABLISHED = 1, ST_SYN_SENT, ST_SYN_RECV, ST_FIN_WAIT1,
	ST_FIN_WAIT2, ST_TIME_WAIT, ST_CLOSE, ST_CLOSE_WAIT, ST_LAST_ACK,
	ST_LISTEN, ST_CLOSING, ST_MAX
};

#define ALL_STATES	((1U << ST_MAX) - 2)
#define CONN_STATES	(ALL_STATES & ~((1U << ST_LISTEN) | (1U << ST_CLOSE)))

/* State names as ss(8) prints them, and the names filters accept. */
static const struct {
	const char *show;
	const char *filter;
} states[ST_MAX] = {
	[ST_ESTABLISHED] = { "ESTAB", "established" },
	[ST_SYN_SENT] = { "SYN-SENT", "syn-sent" },
	[ST_SYN_RECV] = { "SYN-RECV", "syn-recv" },
	[ST_FIN_WAIT1] = { "FIN-WAIT-1", "fin-wait-1" },
	[ST_FIN_WAIT2] = { "FIN-WAIT-2", "fin-wait-2" },
	[ST_TIME_WAIT] = { "TIME-WAIT", "time-wait" },
	[ST_CLOSE] = { "UNCONN", "closed" },
	[ST_CLOSE_WAIT] = { "CLOSE-WAIT", "close-wait" },
	[ST_LAST_ACK] = { "LAST-ACK", "last-ack" },
	[ST_LISTEN] = { "LISTEN", "listening" },
	[ST_CLOSING] = { "CLOSING", "closing" },
};

/* "sdp", or "tcp:REASON" for a socket that fell back to TCP. */
static const char *transport_of(const struct sdp_diag_conn *c, char *buf,
				size_t size)
{
	if (!c || c->transport != SDP_TRANSPORT_TCP)
		return "sdp";
	snprintf(buf, size, "tcp:%s",
		 sdp_fallback_reason_name(c->fallback_reason));
	return buf;
}

static const char *const abort_reasons[] = {
	[SDP_ABORT_REASON_NONE] = "-",
	[SDP_ABORT_REASON_CLOSE] = "close",
	[SDP_ABORT_REASON_DATA] = "data-after-close",
	[SDP_ABORT_REASON_TIMEOUT] = "timeout",
	[SDP_ABORT_REASON_PEER] = "peer",
	[SDP_ABORT_REASON_PROTO] = "protocol-error",
	[SDP_ABORT_REASON_CQ_ERROR] = "completion-error",
	[SDP_ABORT_REASON_CM_DISCONNECT] = "cm-disconnect",
	[SDP_ABORT_REASON_DEVICE_REMOVAL] = "device-removal",
};

struct options {
	unsigned int states;	/* 1 << state */
	bool states_given;
	bool extended;
	bool header;
	bool summary;
	int af;			/* 0, AF_INET or AF_INET6 */
	int family;		/* the SDP family number */
	int sport, dport;	/* -1: any */
};

static const char *prog = "sdpstat";

static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: %s [-a|-l] [-e] [-H] [-4|-6] [-f FAMILY] [FILTER...]\n"
		"       %s -s\n"
		"       %s -V\n"
		"  -a, --all          all sockets (default: all but listening and closed)\n"
		"  -l, --listening    listening sockets only\n"
		"  -e, --extended     owner, inode, id and the socket's counters\n"
		"  -s, --summary      socket totals and the statistics of this namespace\n"
		"  -H, --no-header    no header line\n"
		"  -n, --numeric      accepted for ss compatibility (always numeric)\n"
		"  -4, -6             only sockets used through AF_INET / AF_INET6\n"
		"  -f, --family N     SDP address family number (default: the module's)\n"
		"  -V, --version      sdpstat's version and the loaded module's\n"
		"FILTER: state NAME (repeatable; established, syn-sent, syn-recv,\n"
		"  fin-wait-1, fin-wait-2, closed, close-wait, last-ack, listening,\n"
		"  closing, connected, all), sport [=] [:]PORT, dport [=] [:]PORT\n",
		prog, prog, prog);
	exit(status);
}

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The family the loaded module registered, or AF_INET_SDP. */
static int sdp_family_number(void)
{
	FILE *f = fopen("/sys/module/sdp/parameters/family", "re");
	int fam = AF_INET_SDP;

	if (f) {
		if (fscanf(f, "%d", &fam) != 1)
			fam = AF_INET_SDP;
		fclose(f);
	}
	return fam;
}

/* sdpstat's release and the loaded module's (/sys/module/sdp/version). */
static void __attribute__((noreturn)) version(void)
{
	FILE *f = fopen("/sys/module/sdp/version", "re");
	char mod[64] = "not loaded";

	if (f) {
		if (!fgets(mod, sizeof(mod), f))
			snprintf(mod, sizeof(mod), "unknown");
		mod[strcspn(mod, "\n")] = '\0';
		fclose(f);
	}
	printf("sdpstat %s\nsdp module %s\n", SDP_RELEASE, mod);
	exit(0);
}

static unsigned int parse_state(const char *name)
{
	int i;

	if (!strcmp(name, "all"))
		return ALL_STATES;
	if (!strcmp(name, "connected"))
		return CONN_STATES;
	for (i = 1; i < ST_MAX; i++)
		if (!strcmp(name, states[i].filter) ||
		    !strcasecmp(name, states[i].show))
			return 1U << i;
	die("unknown state '%s'", name);
}

static int parse_port(const char *s)
{
	char *end;
	long v;

	if (*s == ':')
		s++;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 65535)
		die("bad port '%s'", s);
	return v;
}

/* FILTER words: "state NAME", "sport [=] [:]N", "dport [=] [:]N". */
static void parse_filter(struct options *o, int argc, char **argv)
{
	int i = 0;

	while (i < argc) {
		const char *key = argv[i++];
		int *port;

		if (!strcmp(key, "state")) {
			if (i >= argc)
				die("state needs a name");
			if (!o->states_given)
				o->states = 0;
			o->states_given = true;
			o->states |= parse_state(argv[i++]);
			continue;
		}
		if (!strcmp(key, "sport"))
			port = &o->sport;
		else if (!strcmp(key, "dport"))
			port = &o->dport;
		else
			die("unknown filter '%s' (see --help)", key);
		if (i < argc && (!strcmp(argv[i], "=") || !strcmp(argv[i], "eq")))
			i++;
		if (i >= argc)
			die("%s needs a port", key);
		*port = parse_port(argv[i++]);
	}
}

/* "a.b.c.d:port" or "[v6]:port", "*" for the unspecified address. */
static void format_addr(char *buf, size_t size, int af, const __be32 *addr,
			__be16 port)
{
	char a[INET6_ADDRSTRLEN];
	static const __be32 zero[4];

	if (af == AF_INET6) {
		if (!memcmp(addr, zero, sizeof(zero)))
			snprintf(a, sizeof(a), "*");
		else
			inet_ntop(AF_INET6, addr, a, sizeof(a));
		if (a[0] == '*')
			snprintf(buf, size, "*:%u", ntohs(port));
		else
			snprintf(buf, size, "[%s]:%u", a, ntohs(port));
		return;
	}
	if (!addr[0])
		snprintf(a, sizeof(a), "*");
	else
		inet_ntop(AF_INET, addr, a, sizeof(a));
	snprintf(buf, size, "%s:%u", a, ntohs(port));
}

static void print_socket(const struct options *o, const struct sdp_diag_msg *r,
			 const struct sdp_diag_stats *st,
			 const struct sdp_diag_conn *c)
{
	char la[64], pa[64], tr[32];
	const char *state = r->sdiag_state < ST_MAX &&
			    states[r->sdiag_state].show ?
			    states[r->sdiag_state].show : "UNKNOWN";

	format_addr(la, sizeof(la), r->sdiag_family, r->sdiag_src,
		    r->sdiag_sport);
	format_addr(pa, sizeof(pa), r->sdiag_family, r->sdiag_dst,
		    r->sdiag_dport);
	printf("%-10s %-6u %-6u %-24s %-24s %s", state, r->sdiag_rqueue,
	       r->sdiag_wqueue, la, pa, transport_of(c, tr, sizeof(tr)));
	if (o->extended)
		printf(" uid:%u ino:%u sk:%" PRIx64,
		       r->sdiag_uid,
		       r->sdiag_inode,
		       (uint64_t)r->sdiag_cookie[1] << 32 | r->sdiag_cookie[0]);
	putchar('\n');
	if (st)
		printf("\t bcopy_tx_bytes:%llu bcopy_tx_msgs:%llu bcopy_rx_bytes:%llu bcopy_rx_msgs:%llu"
		       " zcopy_tx_bytes:%llu zcopy_tx_msgs:%llu zcopy_rx_bytes:%llu zcopy_rx_msgs:%llu"
		       " rdma_reads:%llu sendsm_tx:%llu sendsm_rx:%llu srcavail_cancel_tx:%llu"
		       " srcavail_cancel_rx:%llu credit_updates_tx:%llu credit_updates_rx:%llu"
		       " credit_stalls:%llu srcavail_tx:%llu srcavail_rx:%llu"
		       " zcopy_fallbacks:%llu rinv_tx:%llu rinv_rx:%llu\n",
		       st->bcopy_tx_bytes, st->bcopy_tx_msgs, st->bcopy_rx_bytes,
		       st->bcopy_rx_msgs, st->zcopy_tx_bytes, st->zcopy_tx_msgs,
		       st->zcopy_rx_bytes, st->zcopy_rx_msgs, st->rdma_reads,
		       st->sendsm_tx, st->sendsm_rx, st->srcavail_cancel_tx,
		       st->srcavail_cancel_rx, st->credit_updates_tx,
		       st->credit_updates_rx, st->credit_stalls, st->srcavail_tx,
		       st->srcavail_rx, st->zcopy_fallbacks, st->rinv_tx,
		       st->rinv_rx);
	if (c && o->extended)
		printf("\t credits:%d peer_credits:%u tx_max:%u rx_bufs:%u tx_bufs:%u rx_posted:%u"
		       " tx_mseq_next:%u rx_mseq_last:%u abort_reason:%s"
		       " comp_vector:%u rx_alloc:%u tx_alloc:%u mem_pages:%u"
		       " rx_seq:%llu snd_una:%llu snd_nxt:%llu\n",
		       c->tx_credits, c->peer_credits, c->tx_max, c->rx_bufs,
		       c->tx_bufs, c->rx_posted, c->tx_mseq_next,
		       c->rx_mseq_last,
		       c->abort_reason < sizeof(abort_reasons) /
					 sizeof(abort_reasons[0]) ?
		       abort_reasons[c->abort_reason] : "?", c->comp_vector,
		       c->rx_alloc, c->tx_alloc, c->mem_pages,
		       (unsigned long long)c->rx_seq,
		       (unsigned long long)c->snd_una,
		       (unsigned long long)c->snd_nxt);
}

struct totals {
	unsigned int total, by_state[ST_MAX];
};

struct dump {
	const struct options *o;
	struct totals *t;
};

/* A socket of the dump: print it if it matches, or count it in d->t. */
static void one_socket(void *arg, const struct sdp_diag_sock *s)
{
	const struct dump *d = arg;
	const struct options *o = d->o;
	const struct sdp_diag_msg *r = &s->msg;

	if (o->af && r->sdiag_family != o->af)
		return;
	if (o->sport >= 0 && ntohs(r->sdiag_sport) != o->sport)
		return;
	if (o->dport >= 0 && ntohs(r->sdiag_dport) != o->dport)
		return;
	if (d->t) {
		d->t->total++;
		if (r->sdiag_state < ST_MAX)
			d->t->by_state[r->sdiag_state]++;
		return;
	}
	print_socket(o, r, s->has_stats ? &s->stats : NULL,
		     s->has_conn ? &s->conn : NULL);
}

/* Dump the sockets; print the matching ones, or count them in @t. */
static void dump_sockets(const struct options *o, struct totals *t)
{
	const struct sdp_diag_req req = {
		.sdiag_family = o->family,
		.sdiag_states = t ? ALL_STATES : o->states,
		/* The connection's attribute tells the transport. */
		.sdiag_ext = SDP_DIAG_EXT(SDP_DIAG_CONN) |
			     (o->extended ? SDP_DIAG_EXT(SDP_DIAG_STATS) : 0),
	};
	struct dump d = { o, t };
	const char *what;

	if (sdp_diag_dump(&req, one_socket, &d, NULL, &what) == 0)
		return;
	if (!strcmp(what, "sock_diag") && errno == ENOENT)
		die("no SDP sockets to list: the sdp module (family %d) is not loaded",
		    o->family);
	die("%s: %s", what, strerror(errno));
}

static void summary(const struct options *o)
{
	struct totals t = { 0 };
	char line[256];
	FILE *f;

	dump_sockets(o, &t);
	printf("SDP sockets: %u (estab %u, listen %u, syn %u, closing %u, closed %u)\n",
	       t.total, t.by_state[ST_ESTABLISHED] + t.by_state[ST_CLOSE_WAIT],
	       t.by_state[ST_LISTEN],
	       t.by_state[ST_SYN_SENT] + t.by_state[ST_SYN_RECV],
	       t.by_state[ST_FIN_WAIT1] + t.by_state[ST_FIN_WAIT2] +
	       t.by_state[ST_CLOSING] + t.by_state[ST_LAST_ACK] +
	       t.by_state[ST_TIME_WAIT], t.by_state[ST_CLOSE]);
	f = fopen("/proc/net/sdp_stats", "re");
	if (!f)
		die("/proc/net/sdp_stats: %s", strerror(errno));
	printf("\nStatistics (/proc/net/sdp_stats):\n");
	while (fgets(line, sizeof(line), f)) {
		char name[128];
		long long v;

		if (sscanf(line, "%127s %lld", name, &v) == 2)
			printf("  %-28s %lld\n", name, v);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "listening", no_argument, NULL, 'l' },
		{ "extended", no_argument, NULL, 'e' },
		{ "summary", no_argument, NULL, 's' },
		{ "no-header", no_argument, NULL, 'H' },
		{ "numeric", no_argument, NULL, 'n' },
		{ "family", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = {
		.states = CONN_STATES,
		.header = true,
		.sport = -1,
		.dport = -1,
	};
	int c;

	o.family = sdp_family_number();
	while ((c = getopt_long(argc, argv, "alesHn46f:hV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			o.states = ALL_STATES;
			break;
		case 'l':
			o.states = 1U << ST_LISTEN;
			break;
		case 'e':
			o.extended = true;
			break;
		case 's':
			o.summary = true;
			break;
		case 'H':
			o.header = false;
			break;
		case 'n':
			break;
		case '4':
			o.af = AF_INET;
			break;
		case '6':
			o.af = AF_INET6;
			break;
		case 'f':
			o.family = atoi(optarg);
			if (o.family <= 0 || o.family > 255)
				die("bad family '%s'", optarg);
			break;
		case 'h':
			usage(0);
		case 'V':
			version();
		default:
			usage(2);
		}
	}
	parse_filter(&o, argc - optind, argv + optind);

	if (o.summary) {
		summary(&o);
		return 0;
	}
	if (o.header)
		printf("%-10s %-6s %-6s %-24s %-24s %s\n", "State", "Recv-Q",
		       "Send-Q", "Local Address:Port", "Peer Address:Port",
		       "Transport");
	dump_sockets(&o, NULL);
	return 0;
}
