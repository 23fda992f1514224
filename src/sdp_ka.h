/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- dead-peer detection: keepalive and persist
 * probes (sdp_keepalive.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_KA_H
#define _SDP_KA_H

#include <rdma/ib_verbs.h>

struct sock;
struct sdp_sock;

/**
 * struct sdp_ka - dead-peer detection (sdp_keepalive.c)
 * @last_heard: jiffies of the last completion of ours that succeeded
 *	(a message received or a send acknowledged); written by the CQ
 *	poller under sdp_conn::poll_lock, read with READ_ONCE()
 * @stalled: committed data waits for credits (sdp_tx_credit_stall())
 * @stall_since: when it started waiting
 * @persist_at: when the next persist probe is due
 * @persist_ivl: the interval before that one
 * @probes_out: keepalive probes without an answer
 * @probe_at: when the last one went; hearing from the peer at or after
 *	it answers them all
 * @busy: a probe is posted and not completed
 * @cqe: the probe's completion
 *
 * All but @last_heard under sdp_sock::lock.
 */
struct sdp_ka {
	unsigned long last_heard;
	bool stalled;
	unsigned long stall_since;
	unsigned long persist_at;
	unsigned long persist_ivl;
	int probes_out;
	unsigned long probe_at;
	bool busy;
	struct ib_cqe cqe;
};

void sdp_ka_init(struct sdp_sock *ssk);
void sdp_ka_established(struct sdp_sock *ssk);
void sdp_ka_credit_stall(struct sdp_sock *ssk, bool stalled);
void sdp_ka_changed(struct sock *sk);
void sdp_ka_set(struct sock *sk, int on);
void sdp_ka_stop(struct sdp_sock *ssk);

#endif /* _SDP_KA_H */
