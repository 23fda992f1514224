// SPDX-License-Identifier: GPL-2.0
/*
 * sdp_run [-r RULES] [-l LIBRARY] [-t MS] [-v] PROGRAM [ARGS...]
 * sdp_run -c [-r RULES]
 *
 * Run PROGRAM with libsdp.so preloaded, so that its TCP sockets use SDP
 * as the rules (libsdp.conf(5)) say.  The rules file is checked first:
 * sdp_run refuses to start a program with rules that libsdp would reject.
 * See sdp_run(8).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rules.h"

#ifndef LIBSDP_LIBDIR
#define LIBSDP_LIBDIR "/usr/local/lib"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sdp_run [-r RULES] [-l LIBRARY] [-t MS] [-v] PROGRAM [ARGS...]\n"
		"       sdp_run -c [-r RULES]\n"
		"  -r RULES    rules file (default $LIBSDP_CONFIG_FILE, else %s)\n"
		"  -l LIBRARY  libsdp.so to preload (default: next to sdp_run, in ../lib*,\n"
		"              else %s)\n"
		"  -t MS       how long a \"both\" client tries SDP before TCP (default %d)\n"
		"  -v          log every decision on standard error (min-level 1)\n"
		"  -c          check the rules file and print the rules, run nothing\n",
		SDP_DEFAULT_CONFIG, LIBSDP_LIBDIR "/libsdp.so",
		SDP_CONNECT_MS_DEFAULT);
}

static void report(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "sdp_run: %s\n", msg);
}

#ifndef LIBSDP_MULTIARCH
#define LIBSDP_MULTIARCH ""
#endif

/*
 * libsdp.so next to this program (the build tree), else where an install
 * puts it relative to this program (PREFIX/bin/sdp_run and
 * PREFIX/lib/<multiarch>, lib64 or lib/libsdp.so: right whatever PREFIX
 * the install used), else in LIBSDP_LIBDIR as it was at build time.
 */
static int find_library(char *buf, size_t size)
{
	static const char *const rel[] = {
		"", "/../lib/" LIBSDP_MULTIARCH, "/../lib64", "/../lib",
	};
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t i;

	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
		for (i = 0; slash && i < sizeof(rel) / sizeof(rel[0]); i++) {
			int len = snprintf(buf, size, "%s%s/libsdp.so", self,
					   rel[i]);

			if (len > 0 && (size_t)len < size &&
			    access(buf, R_OK) == 0)
				return 0;
		}
	}
	snprintf(buf, size, "%s/libsdp.so", LIBSDP_LIBDIR);
	return access(buf, R_OK);
}

int main(int argc, char **argv)
{
	const char *rules = NULL, *lib = NULL, *timeout = NULL;
	char libbuf[PATH_MAX], abs[PATH_MAX], *preload;
	struct sdp_config cfg;
	bool check = false, verbose = false;
	const char *old;
	int opt;
	size_t i;

	while ((opt = getopt(argc, argv, "+r:l:t:vch")) != -1) {
		switch (opt) {
		case 'r':
			rules = optarg;
			break;
		case 'l':
			lib = optarg;
			break;
		case 't':
			timeout = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'c':
			check = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!check && optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (timeout) {
		char *end;
		long v = strtol(timeout, &end, 10);

		if (*end || v < 0 || v > SDP_CONNECT_MS_MAX) {
			fprintf(stderr, "sdp_run: -t wants milliseconds (0-%d), not '%s'\n",
				SDP_CONNECT_MS_MAX, timeout);
			return 2;
		}
	}

	if (!rules)
		rules = getenv("LIBSDP_CONFIG_FILE");
	if (rules && !*rules)
		rules = NULL;
	if (sdp_config_load(&cfg, rules ? rules : SDP_DEFAULT_CONFIG, report,
			    NULL) < 0) {
		if (rules || errno != ENOENT) {
			fprintf(stderr, "sdp_run: cannot read %s: %s\n",
				rules ? rules : SDP_DEFAULT_CONFIG,
				strerror(errno));
			return 2;
		}
		sdp_config_default(&cfg);
	}
	if (cfg.n_errors) {
		fprintf(stderr, "sdp_run: %u error%s in %s\n", cfg.n_errors,
			cfg.n_errors > 1 ? "s" : "", cfg.path);
		return 2;
	}
	if (check) {
		char buf[256];

		printf("# %s: %zu rule%s\n", cfg.path ? cfg.path :
		       "built-in defaults (no " SDP_DEFAULT_CONFIG ")",
		       cfg.n_rules, cfg.n_rules == 1 ? "" : "s");
		for (i = 0; i < cfg.n_rules; i++)
			printf("%s\n", sdp_rule_str(&cfg.rules[i], buf,
						    sizeof(buf)));
		sdp_config_free(&cfg);
		return 0;
	}
	sdp_config_free(&cfg);

	if (!lib) {
		if (find_library(libbuf, sizeof(libbuf)) < 0) {
			fprintf(stderr, "sdp_run: cannot find libsdp.so (%s); use -l\n",
				libbuf);
			return 2;
		}
		lib = libbuf;
	}
	if (!realpath(lib, abs)) {
		fprintf(stderr, "sdp_run: %s: %s\n", lib, strerror(errno));
		return 2;
	}
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		if (asprintf(&preload, "%s:%s", abs, old) < 0)
			return 2;
	} else {
		preload = abs;
	}
	if (setenv("LD_PRELOAD", preload, 1) < 0 ||
	    (rules && setenv("LIBSDP_CONFIG_FILE", rules, 1) < 0) ||
	    (timeout && setenv("LIBSDP_CONNECT_TIMEOUT", timeout, 1) < 0) ||
	    (verbose && setenv("LIBSDP_LOG_LEVEL", "1", 1) < 0)) {
		perror("sdp_run: setenv");
		return 2;
	}
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "sdp_run: %s: %s\n", argv[optind], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
