/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- close, shutdown and abort: the state machine
 * of a connection's end (sdp_close.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_CLOSE_H
#define _SDP_CLOSE_H

#include <linux/workqueue.h>
#include <uapi/linux/sdp_diag.h>

struct rdma_cm_id;
struct sock;
struct socket;
struct sdp_sock;

/*
 * How long sdp_work() lets our AbortConn go out before it takes the QP
 * down anyway (a peer without receive buffers can hold it for ever).
 */
#define SDP_ABORT_DELIVERY	(2 * HZ)

/*
 * How long the QP stays after our DREQ for the peer's CM to answer it,
 * its QP in the error state by then (sdp_peer_may_send()).
 */
#define SDP_DREQ_ANSWER		(2 * HZ)

void __sdp_abort(struct sdp_sock *ssk, enum sdp_abort_reason why, int err);
void sdp_abort(struct sdp_sock *ssk, enum sdp_abort_reason why, int err);
bool sdp_abort_in_flight(const struct sdp_sock *ssk);
unsigned long sdp_peer_may_send(const struct sdp_sock *ssk);
bool sdp_rx_closed(const struct sdp_sock *ssk);
void sdp_close_check_done(struct sdp_sock *ssk);
void sdp_close_disconn_rcvd(struct sdp_sock *ssk);
void sdp_close_disconn_done(struct sdp_sock *ssk);
void sdp_close_cm_disconnected(struct sdp_sock *ssk, struct rdma_cm_id *id);
int sdp_shutdown(struct socket *sock, int how);
int sdp_release(struct socket *sock);
struct sock *sdp_close_child_unlink(struct sdp_sock *ssk);
struct rdma_cm_id *sdp_close_work(struct sdp_sock *ssk, unsigned long *again);

#endif /* _SDP_CLOSE_H */
