/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TCP_INFO as the kernel's uapi defines it (glibc's struct tcp_info is
 * older and lacks the byte counters): the fields the tests look at.
 */
#ifndef _TEST_TCPINFO_H
#define _TEST_TCPINFO_H

#include <stdint.h>

struct test_tcp_info {
	uint8_t state;
	uint32_t snd_mss;
	uint32_t rcv_mss;
	uint32_t unacked;
	uint64_t bytes_acked;
	uint64_t bytes_received;
	uint64_t bytes_sent;
	uint32_t segs_out;
	uint32_t segs_in;
	uint32_t data_segs_in;
	uint32_t notsent_bytes;
	uint32_t rtt;		/* microseconds, smoothed */
	uint32_t rttvar;
	uint32_t min_rtt;
};

/* getsockopt(TCP_INFO) into @ti; returns getsockopt's result. */
int test_tcp_info(int fd, struct test_tcp_info *ti);

#endif
