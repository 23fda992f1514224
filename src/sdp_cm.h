/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- connection setup through the RDMA CM
 * (sdp_cm.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_CM_H
#define _SDP_CM_H

#include <linux/socket.h>
#include <uapi/linux/sdp.h>

struct rdma_cm_event;
struct rdma_cm_id;
struct sdp_sock;
struct sock;

int sdp_cm_create_id(struct sdp_sock *ssk);
int sdp_cm_bind(struct sdp_sock *ssk, const struct sockaddr_storage *ss);
int sdp_cm_listen(struct sdp_sock *ssk, struct rdma_cm_id *id, int backlog);
int sdp_cm_listen_v4(struct sdp_sock *ssk, int backlog,
		     struct rdma_cm_id **spent);
struct rdma_cm_id *sdp_cm_take_id4(struct sdp_sock *ssk);
void sdp_cm_put_id(struct sock *sk, struct rdma_cm_id *id);
bool sdp_child_unlink(struct sdp_sock *child);
void sdp_connect_failed_fb(struct sdp_sock *ssk, int err,
			   enum sdp_fallback_reason why);
int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

#endif /* _SDP_CM_H */
