/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- diagnostics: /proc/net/sdp and sock_diag
 * (sdp_diag.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_DIAG_H
#define _SDP_DIAG_H

struct net;

int sdp_diag_init(void);
void sdp_diag_exit(void);
int sdp_proc_net_init(struct net *net);
void sdp_proc_net_exit(struct net *net);

#endif /* _SDP_DIAG_H */
