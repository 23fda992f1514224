/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- deferred and timed work: sdp_work() and the
 * orphan timeout (sdp_timers.c, which lists every time-driven behaviour).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_TIMERS_H
#define _SDP_TIMERS_H

struct sdp_sock;
struct work_struct;

void sdp_queue_work(struct sdp_sock *ssk);
void sdp_queue_work_delayed(struct sdp_sock *ssk, unsigned long delay);
void sdp_queue_work_within(struct sdp_sock *ssk, unsigned long delay);
void sdp_work(struct work_struct *work);
void sdp_timeout_arm(struct sdp_sock *ssk);
void sdp_timeout_cancel(struct sdp_sock *ssk);
void sdp_timeout_work(struct work_struct *work);

#endif /* _SDP_TIMERS_H */
