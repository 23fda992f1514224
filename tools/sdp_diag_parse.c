// SPDX-License-Identifier: GPL-2.0
/*
 * The sock_diag dump of SDP sockets and its parser: see sdp_diag_parse.h.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "sdp_diag_parse.h"

#define DIAG_SEQ	1

/* The attributes after @h's struct sdp_diag_msg, into @s. */
static void parse_attrs(const struct nlmsghdr *h, struct sdp_diag_sock *s)
{
	int len = h->nlmsg_len - NLMSG_LENGTH(sizeof(s->msg));
	const struct nlattr *a = (const void *)((const char *)NLMSG_DATA(h) +
						NLMSG_ALIGN(sizeof(s->msg)));

	while (len >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) &&
	       a->nla_len <= len) {
		const void *p = (const char *)a + NLA_HDRLEN;
		int plen = a->nla_len - NLA_HDRLEN;

		if (a->nla_type == SDP_DIAG_STATS &&
		    plen >= (int)sizeof(s->stats)) {
			memcpy(&s->stats, p, sizeof(s->stats));
			s->has_stats = true;
		} else if (a->nla_type == SDP_DIAG_CONN &&
			   plen >= (int)offsetof(struct sdp_diag_conn,
						 rx_alloc)) {
			/* A module before the memory fields: those read 0. */
			memset(&s->conn, 0, sizeof(s->conn));
			memcpy(&s->conn, p, plen < (int)sizeof(s->conn) ?
			       (size_t)plen : sizeof(s->conn));
			s->has_conn = true;
		}
		len -= NLA_ALIGN(a->nla_len);
		a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

/*
 * One datagram of the answer: 1 when NLMSG_DONE came, 0 to read on, -1
 * (errno) for the kernel's error.
 */
static int parse_datagram(const void *buf, ssize_t n, sdp_diag_fn fn,
			  void *arg, unsigned int *bad)
{
	const struct nlmsghdr *h;

	for (h = buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		struct sdp_diag_sock s;

		if (h->nlmsg_seq != DIAG_SEQ) {
			(*bad)++;
			continue;
		}
		if (h->nlmsg_type == NLMSG_DONE)
			return 1;
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			errno = h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) &&
				e->error ? -e->error : EPROTO;
			return -1;
		}
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
		    h->nlmsg_len < NLMSG_LENGTH(sizeof(s.msg))) {
			(*bad)++;
			continue;
		}
		memset(&s, 0, sizeof(s));
		memcpy(&s.msg, NLMSG_DATA(h), sizeof(s.msg));
		parse_attrs(h, &s);
		fn(arg, &s);
	}
	return 0;
}

int sdp_diag_dump(const struct sdp_diag_req *req, sdp_diag_fn fn, void *arg,
		  unsigned int *bad, const char **what)
{
	struct {
		struct nlmsghdr nlh;
		struct sdp_diag_req req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = DIAG_SEQ,
		},
		.req = *req,
	};
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	static char buf[65536] __attribute__((aligned(8)));
	unsigned int skipped = 0;
	int fd, ret = 0, err;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0) {
		*what = "netlink socket";
		return -1;
	}
	if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&nl,
		   sizeof(nl)) < 0) {
		*what = "netlink send";
		ret = -1;
	}
	while (!ret) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*what = "netlink receive";
			ret = -1;
		} else if (n == 0) {
			ret = 1;
		} else {
			ret = parse_datagram(buf, n, fn, arg, &skipped);
			if (ret < 0)
				*what = "sock_diag";
		}
	}
	err = errno;
	close(fd);
	errno = err;
	if (bad)
		*bad = skipped;
	return ret < 0 ? -1 : 0;
}
