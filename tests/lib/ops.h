/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the operability suites (tests/diag.c,
 * tests/counters.c, tests/tunables.c, tests/install.c): sockets known by
 * their inode, byte counts sent through the buffered path, snapshots of
 * /proc/net/sdp_stats, the sock_diag dump (tools/sdp_diag_parse.c, as
 * sdpstat reads it), and the output of commands.
 *
 * Every check compares with something known independently: sockets the
 * test opened (their inodes from fstat(), addresses from getsockname()),
 * byte counts it transferred, counters read before and after.  The
 * suites run in the test guest, as root, from the repository directory,
 * one test at a time, so the namespace's counters move only by what the
 * running test does (sockets of earlier tests may still be finishing
 * their close: tests wait for /proc/net/sdp to empty first,
 * wait_no_sockets()).  The helpers fail the running test with CHECK.
 */
#ifndef SDP_TEST_OPS_H
#define SDP_TEST_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "sdp_diag_parse.h"

#define WAIT_MS		10000
/* Payload bytes per Data message: 32 KiB buffers less the 16-byte BSDH. */
#define MSG_PAYLOAD	(32768 - 16)

/* Data messages that carry @bytes through the buffered path. */
size_t msgs_for(size_t bytes);

/*
 * A listener with @backlog on the test address (@addr gets it, the
 * listener is returned) and a pair through it: *@c connected, *@s
 * accepted.
 */
int listener_pair(struct sockaddr_storage *addr, int backlog, int *c, int *s);

/* The inode number of the socket @fd. */
unsigned long inode_of(int fd);

/*
 * Exactly @len pattern bytes (seed 7) sent through the buffered path
 * (zero-copy off on @fd: tests/zcopy.c counts that path), and received
 * and checked.
 */
void send_bytes(int fd, size_t len);
void recv_bytes(int fd, size_t len);
/* As send_bytes(), from a child process; wait_child_ok() reaps it. */
pid_t send_bytes_async(int fd, size_t len);
void wait_child_ok(pid_t pid);

/* Wait until @fd has exactly @bytes unread. */
void wait_inq(int fd, int bytes);
/* Sockets closed by earlier tests finish their teardown first. */
void wait_no_sockets(void);

/* A snapshot of /proc/net/sdp_stats. */
#define MAX_STATS 96

struct stats {
	int n;
	char name[MAX_STATS][40];
	long long val[MAX_STATS];
};

void stats_read(struct stats *s);
/* Counter @name of @s; fails the test if there is none. */
long long stat_of(const struct stats *s, const char *name);
/* Every counter but those named in @moved (NULL-terminated) is unchanged. */
void check_unchanged(const struct stats *a, const struct stats *b,
		     const char *const *moved);
/* How far counter @name moved from `before` to `after` (in scope). */
#define DELTA(name) (stat_of(&after, name) - stat_of(&before, name))

/*
 * The sock_diag dump of the sockets in @states (1 << TCP_*, ~0U: all),
 * or of the one with inode @ino (0: all), with both attributes, into
 * @out (at most @max); returns how many sockets came.  A malformed
 * message fails the test.
 */
#define MAX_DIAG	512
int diag_dump(uint32_t states, uint32_t ino, struct sdp_diag_sock *out,
	      int max);
/* The socket of inode @ino among @n dumped ones, or NULL. */
const struct sdp_diag_sock *diag_find(const struct sdp_diag_sock *d, int n,
				      unsigned long ino);

/* Run the shell command @cmd; its output (malloc()ed), *@status. */
char *run_capture(const char *cmd, int *status);
/* The line of @out whose fields include @a and @b (NULL: any), or NULL. */
char *find_line(char *out, const char *a, const char *b);

#endif /* SDP_TEST_OPS_H */
