/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sock_diag dump of SDP sockets (include/uapi/linux/sdp_diag.h) and
 * its parser, in one place: sdpstat(8) and the test suites use it.
 *
 * sdp_diag_dump() sends one SOCK_DIAG_BY_FAMILY dump request and calls
 * @fn once per socket of the answer, with the struct sdp_diag_msg and
 * the attributes that came (copied, so aligned).  A message that is not
 * a well-formed answer to the request (another type or sequence number,
 * too short) is skipped and counted in *@bad, so that a reader can be
 * lenient (sdpstat) or strict (the tests).
 */
#ifndef SDP_DIAG_PARSE_H
#define SDP_DIAG_PARSE_H

#include <stdbool.h>
#include <linux/sdp_diag.h>

/* The sdiag_ext bit that asks for attribute @attr (SDP_DIAG_STATS, ...). */
#define SDP_DIAG_EXT(attr)	(1U << ((attr) - 1))

/* One socket of a dump. */
struct sdp_diag_sock {
	struct sdp_diag_msg msg;
	struct sdp_diag_stats stats;	/* if has_stats */
	struct sdp_diag_conn conn;	/* if has_conn */
	bool has_stats, has_conn;
};

typedef void (*sdp_diag_fn)(void *arg, const struct sdp_diag_sock *s);

/*
 * Dump the sockets @req asks for (its family, states, attributes, inode)
 * in the caller's network namespace, calling @fn(@arg, socket) for each.
 * Returns 0 (also when the kernel ends the answer early with an empty
 * read), or -1 with errno set and *@what naming the step that failed:
 * "netlink socket", "netlink send", "netlink receive" (errno from that
 * call), or "sock_diag" (the kernel's answer; ENOENT: no SDP family is
 * registered, the module is not loaded).  *@bad (if not NULL) gets the
 * number of malformed messages skipped.  Not reentrant: one buffer.
 */
int sdp_diag_dump(const struct sdp_diag_req *req, sdp_diag_fn fn, void *arg,
		  unsigned int *bad, const char **what);

#endif /* SDP_DIAG_PARSE_H */
