/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- the host's firewall for SDP connection
 * requests (sdp_filter.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_FILTER_H
#define _SDP_FILTER_H

#include <linux/types.h>

struct net;
struct rdma_cm_id;

bool sdp_filter_request(struct net *net, struct rdma_cm_id *id);

#endif /* _SDP_FILTER_H */
