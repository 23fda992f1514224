/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- message buffers and rings, and the completion
 * queue that reports them (sdp_cq.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_CQ_H
#define _SDP_CQ_H

#include <linux/dma-direction.h>
#include <linux/types.h>

struct ib_cq;
struct ib_device;
struct ib_wc;
struct sock;
struct sdp_buf;
struct sdp_sock;

struct sdp_buf *sdp_ring_alloc(unsigned int n,
			       void (*done)(struct ib_cq *cq, struct ib_wc *wc));
int sdp_ring_fill(struct ib_device *dev, struct sdp_buf *ring,
		  unsigned int from, unsigned int to, size_t size,
		  enum dma_data_direction dir);
int sdp_buf_map(struct ib_device *dev, struct sdp_buf *b,
		enum dma_data_direction dir);
void sdp_buf_unmap(struct ib_device *dev, struct sdp_buf *b,
		   enum dma_data_direction dir);
void sdp_buf_swap_mem(struct sdp_buf *a, struct sdp_buf *b);
void sdp_buf_free(struct ib_device *dev, struct sdp_buf *b,
		  enum dma_data_direction dir);
void sdp_ring_unmap(struct ib_device *dev, struct sdp_buf *ring,
		    unsigned int n, enum dma_data_direction dir);
void sdp_ring_drain(struct ib_device *dev, struct sdp_buf *ring,
		    unsigned int from, unsigned int to,
		    enum dma_data_direction dir);
void sdp_ring_free(struct ib_device *dev, struct sdp_buf *ring,
		   unsigned int n, enum dma_data_direction dir);
/*
 * How long a flush nothing of ours explains waits for the CM event that
 * may explain it (sdp_cq_flush_verdict()).
 */
#define SDP_CQ_FLUSH_GRACE	HZ

int sdp_cq_create(struct sdp_sock *ssk, int ncqe);
unsigned long sdp_cq_flush_verdict(struct sdp_sock *ssk);
void sdp_cq_process_pending(struct sdp_sock *ssk);
void sdp_cq_wait_begin(struct sdp_sock *ssk);
void sdp_cq_wait_end(struct sdp_sock *ssk);
void sdp_cq_destroy(struct sdp_sock *ssk);
void sdp_busy_poll(struct sock *sk, bool (*done)(struct sock *sk, size_t arg),
		   size_t arg);

#endif /* _SDP_CQ_H */
