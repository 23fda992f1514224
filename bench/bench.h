/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers the bench programs share: failing loudly, the monotonic clock,
 * and the listening socket a forked child accepts on and the parent
 * connects to.
 */
#ifndef SDP_BENCH_H
#define SDP_BENCH_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Monotonic clock in seconds. */
static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* @addr:@port in @sin; exits on a bad address. */
static inline void bench_addr(struct sockaddr_in *sin, const char *addr,
			      unsigned short port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", addr);
		exit(1);
	}
}

/*
 * A socket of @family listening on @addr and @port (0: an ephemeral
 * one); the bound address goes to @sin.
 */
static inline int bench_listen(int family, const char *addr,
			       unsigned short port, struct sockaddr_in *sin)
{
	socklen_t slen = sizeof(*sin);
	int l, one = 1;

	bench_addr(sin, addr, port);
	l = socket(family, SOCK_STREAM, 0);
	if (l < 0)
		die("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)sin, sizeof(*sin)) || listen(l, 8) ||
	    getsockname(l, (struct sockaddr *)sin, &slen))
		die("listen");
	return l;
}

/*
 * Fork a child that accepts one connection on @l into *@fd.  Returns the
 * child's pid in the parent, 0 in the child (with *@fd connected).
 */
static inline pid_t bench_fork_accept(int l, int *fd)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (!pid) {
		*fd = accept(l, NULL, NULL);
		if (*fd < 0)
			die("accept");
	}
	return pid;
}

/* A socket of @family connected to @sin. */
static inline int bench_connect(int family, const struct sockaddr_in *sin)
{
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (const struct sockaddr *)sin, sizeof(*sin)))
		die("connect");
	return fd;
}

#endif /* SDP_BENCH_H */
