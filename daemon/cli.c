// SPDX-License-Identifier: Apache-2.0
#include "daemon/cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/capture/capture.h"
#include "daemon/capture/check.h"
#include "daemon/capture/compare.h"
#include "daemon/config.h"
#include "daemon/agent/agent.h"
#include "cgroups/rules.h"
#include "base/array.h"
#include "base/log.h"
#include "daemon/capture/question.h"
#include "profile/diff.h"
#include "profile/report.h"
#include "daemon/cli_symbols.h"
#include "symbols/symstore.h"

#define PROG "slideops-profiler"
#define VERSION "0.1.0"

static volatile sig_atomic_t stop_requested;

static const char usage_text[] =
	"Usage:\n"
	"  " PROG " check   [TARGET] [--json]\n"
	"  " PROG " plan    [TARGET] --question Q [--duration S]\n"
	"  " PROG " capture [TARGET] --question Q [--duration S] [--out DIR] [--json]\n"
	"  " PROG " compare OLD NEW [--out DIR]   (profile directories or pprof files)\n"
	"  " PROG " symbols upload FILE | symbols list | symbols delete BUILD_ID\n"
	"  " PROG " daemon  [--config FILE]   (DaemonSet mode; docs/daemon.md)\n"
	"  " PROG " version\n"
	"Options of check, plan and capture: --config FILE (default " CONFIG_DEFAULT_PATH
	" when present)\n"
	"TARGET: --server (default) | --service NAME | --pid PID (repeatable) | --unit NAME |\n"
	"        --container ID\n"
	"Q: cpu, wall, threads, locks, memory-growth, memory-held, memory-alloc\n"
	"S: whole seconds from 1 to 60 (default 30)\n"
	"See docs/cli.md.\n";

struct cli_args {
	struct capture_opts opts;
	const char *question;
	bool json;
	bool have_question;
	int ntargets;
	const char *config_path; /* --config; default CONFIG_DEFAULT_PATH when it exists */
	struct config config;
	struct service_rules_ctx rules;
	char out_default[64];
};

/* Prints one line "slideops-profiler: <reason>" on stderr and returns @status. */
static int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(int status, const char *fmt, ...)
{
	char line[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, PROG ": %s\n", line);
	return status;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

#define ONE_TARGET "give one target: --server, --service, --pid, --unit or --container"

/* --server, --unit, --container or --service (getopt code @c) with its name @arg. */
static int set_named_target(struct cli_args *a, int c, const char *arg)
{
	struct capture_target *t = &a->opts.target;

	if (a->ntargets++)
		return fail(CLI_EXIT_USAGE, ONE_TARGET);
	t->kind = c == 's' ? TARGET_SERVER :
		  c == 'u' ? TARGET_UNIT :
		  c == 'c' ? TARGET_CONTAINER :
			     TARGET_SERVICE;
	if (c == 's')
		return 0;
	if (!*arg || strlen(arg) >= sizeof(t->name))
		return fail(CLI_EXIT_USAGE, "--%s needs a name of 1 to %zu characters",
			    target_kind_name(t->kind), sizeof(t->name) - 1);
	snprintf(t->name, sizeof(t->name), "%s", arg);
	target_normalize(t);
	return 0;
}

/* One more --pid (repeatable; not with another kind of target). */
static int add_pid(struct cli_args *a, const char *arg)
{
	struct capture_target *t = &a->opts.target;
	unsigned long v;

	if (parse_uint(arg, 0x3fffffff, &v) || !v)
		return fail(CLI_EXIT_USAGE, "--pid needs a process id, not '%s'", arg);
	if (t->npids >= ARRAY_SIZE(t->pids))
		return fail(CLI_EXIT_USAGE, "at most %zu --pid options", ARRAY_SIZE(t->pids));
	if (a->ntargets++ && t->kind != TARGET_PIDS)
		return fail(CLI_EXIT_USAGE, ONE_TARGET);
	t->kind = TARGET_PIDS;
	t->pids[t->npids++] = (uint32_t)v;
	return 0;
}

static int set_question(struct cli_args *a, const char *arg)
{
	char list[128];
	int q;

	q = question_parse(arg);
	if (q < 0)
		return fail(CLI_EXIT_USAGE, "unknown question '%s'; choose one of: %s", arg,
			    question_list(list, sizeof(list)));
	a->opts.question = q;
	a->have_question = true;
	return 0;
}

/* --duration (1..60 s) and --freq (1..1000 Hz). */
static int set_number(struct cli_args *a, int c, const char *arg)
{
	unsigned long v;

	if (c == 'd') {
		if (parse_uint(arg, 3600, &v) || v < 1 || v > 60)
			return fail(CLI_EXIT_USAGE,
				    "--duration must be a whole number of seconds from 1 to 60, "
				    "not '%s'",
				    arg);
		a->opts.duration_s = (unsigned int)v;
		return 0;
	}
	if (parse_uint(arg, 1000, &v) || v < 1)
		return fail(CLI_EXIT_USAGE, "--freq must be from 1 to 1000 Hz");
	a->opts.freq_hz = (unsigned int)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct cli_args *a)
{
	static const struct option longopts[] = {
		{ "server", no_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "unit", required_argument, NULL, 'u' },
		{ "container", required_argument, NULL, 'c' },
		{ "service", required_argument, NULL, 'S' },
		{ "question", required_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'd' },
		{ "out", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		{ "freq", required_argument, NULL, 'F' },
		{ "config", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c, err;

	a->opts.duration_s = 30;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'u':
		case 'c':
		case 'S':
			err = set_named_target(a, c, optarg);
			break;
		case 'p':
			err = add_pid(a, optarg);
			break;
		case 'q':
			err = set_question(a, optarg);
			break;
		case 'd':
		case 'F':
			err = set_number(a, c, optarg);
			break;
		case 'o':
			a->opts.out_dir = optarg;
			err = 0;
			break;
		case 'j':
			a->json = true;
			err = 0;
			break;
		case 'C':
			a->config_path = optarg;
			err = 0;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(EXIT_SUCCESS);
		default:
			return fail(CLI_EXIT_USAGE, "unknown option '%s'; see '" PROG " --help'",
				    argv[optind - 1]);
		}
		if (err)
			return err;
	}
	if (optind < argc)
		return fail(CLI_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

struct progress_state {
	FILE *f;
	bool tty;
	int last_step;
};

static void print_progress(void *ctx, int step, int nsteps, const char *text, double elapsed)
{
	struct progress_state *ps = ctx;

	if (ps->tty) {
		fprintf(ps->f, "\r\033[K[%d/%d] %.100s %.0f s", step, nsteps, text, elapsed);
		if (step == nsteps)
			fputc('\n', ps->f);
	} else if (step != ps->last_step) {
		fprintf(ps->f, "[%d/%d] %s\n", step, nsteps, text);
	}
	ps->last_step = step;
	fflush(ps->f);
}

static int cmd_check(struct cli_args *a)
{
	struct check_opts co = { .target = a->opts.target,
				 .name_fn = a->opts.name_fn,
				 .name_ctx = a->opts.name_ctx };
	struct check_result cr;
	char err[1024] = "";
	int ret;

	ret = check_run(&co, &cr, err, sizeof(err));
	if (ret == -ENOENT)
		return fail(EXIT_FAILURE, "%s", err);
	if (ret)
		return fail(EXIT_FAILURE, "check failed: %s", err[0] ? err : strerror(-ret));
	fputs(a->json ? cr.json : cr.text, stdout);
	if (a->json)
		fputc('\n', stdout);
	check_result__fini(&cr);
	return cr.ready ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int cmd_plan(struct cli_args *a)
{
	struct capture_step steps[CAPTURE_MAX_STEPS];
	struct capture_target_info info;
	char err[1024];
	int i, n, nprocs;

	if (!a->have_question)
		return fail(CLI_EXIT_USAGE,
			    "plan needs --question; choose one of: cpu, wall, "
			    "threads, locks, memory-growth, memory-held, memory-alloc");
	if (!a->opts.out_dir)
		a->opts.out_dir = a->out_default;
	if (capture_validate(&a->opts, err, sizeof(err)))
		return fail(CLI_EXIT_USAGE, "%s", err);
	nprocs = capture_inspect(&a->opts, &info, err, sizeof(err));
	if (nprocs < 0)
		return fail(EXIT_FAILURE, "%s", err);
	if (info.refuse[0])
		return fail(EXIT_FAILURE, "%s", info.refuse);
	n = capture_plan(&a->opts, &info, steps, CAPTURE_MAX_STEPS);
	for (i = 0; i < n; i++)
		printf("%d. %s\n", i + 1, steps[i].text);
	return EXIT_SUCCESS;
}

static void print_result(const struct cli_args *a, const struct capture_result *r)
{
	const struct report *rep = r->report;
	size_t i;

	printf("\n%s\n", r->answer);
	if (r->nnotes) {
		printf("\nNotes:\n");
		for (i = 0; i < r->nnotes; i++)
			printf("  - %s\n", r->notes[i]);
	}
	if (rep && rep->nstripped) {
		printf("\nSome functions have no names, because their binaries were stripped:\n");
		for (i = 0; i < rep->nstripped; i++)
			printf("  %s %.0f%% of this profile%s%.12s\n", rep->stripped[i].path,
			       rep->stripped[i].share,
			       rep->stripped[i].build_id ?
				       ", build " :
				       ": no build id, so no upload can name it",
			       rep->stripped[i].build_id ? rep->stripped[i].build_id : "");
		printf("Upload its unstripped build or debug file: " PROG " symbols upload FILE\n");
	}
	printf("\nFiles written to %s:\n", a->opts.out_dir);
	printf("  flamegraph.html    the flame graph (open it in a browser)\n");
	printf("  profile.pb.gz      pprof (go tool pprof, Pyroscope, Speedscope)\n");
	printf("  profile.collapsed  collapsed stacks (flamegraph.pl)\n");
	printf("  summary.json       the answer, groups, notes\n");
}

static int cmd_capture(struct cli_args *a)
{
	struct progress_state ps = { .last_step = -1 };
	struct capture_result *res = NULL;
	char err[1024] = "";
	int ret;

	if (!a->have_question)
		return fail(CLI_EXIT_USAGE,
			    "capture needs --question; choose one of: cpu, wall, "
			    "threads, locks, memory-growth, memory-held, memory-alloc");
	if (!a->opts.out_dir)
		a->opts.out_dir = a->out_default;
	ps.f = a->json ? stderr : stdout;
	ps.tty = isatty(fileno(ps.f));
	a->opts.progress = print_progress;
	a->opts.progress_ctx = &ps;
	a->opts.stop = &stop_requested;
	install_signals();
	/* debug symbols uploaded with `symbols upload` name stripped builds; none is no error */
	if (cli_symbols_open(&a->config, false, &a->opts.symbols))
		a->opts.symbols = NULL;

	ret = capture_run(&a->opts, &res, err, sizeof(err));
	symstore__free(a->opts.symbols);
	a->opts.symbols = NULL;
	if (ret == -EBUSY)
		return fail(CAPTURE_EXIT_BUSY, "%s", err);
	if (ret == -EINVAL)
		return fail(CLI_EXIT_USAGE, "%s", err);
	if (ret)
		return fail(EXIT_FAILURE, "%s", err[0] ? err : strerror(-ret));
	if (a->json) {
		char path[4096];
		FILE *f;
		int c;

		snprintf(path, sizeof(path), "%s/summary.json", a->opts.out_dir);
		f = fopen(path, "re");
		if (f) {
			while ((c = fgetc(f)) != EOF)
				putchar(c);
			fclose(f);
		}
	} else {
		print_result(a, res);
	}
	capture_result__free(res);
	return EXIT_SUCCESS;
}

/* `compare OLD NEW [--out DIR]`: the two paths into @paths, the directory into @out. */
static int parse_compare(int argc, char **argv, const char **paths, const char **out)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			exit(EXIT_SUCCESS);
		}
		if (c != 'o')
			return fail(CLI_EXIT_USAGE, "compare takes only --out DIR, not '%s'",
				    argv[optind - 1]);
		*out = optarg;
	}
	if (argc - optind != 2)
		return fail(CLI_EXIT_USAGE,
			    "compare needs two profiles, OLD and NEW: profile directories (as "
			    "capture --out writes them) or pprof files");
	paths[0] = argv[optind];
	paths[1] = argv[optind + 1];
	return 0;
}

static void print_changes(const char *title, const struct compare_change *c, size_t n)
{
	size_t i;

	if (!n)
		return;
	printf("\n%s (self share, old \u2192 new):\n", title);
	for (i = 0; i < n; i++)
		printf("  %5.1f%% \u2192 %5.1f%%  (%s%.1f points)  %s\n", 100 * c[i].base_share,
		       100 * c[i].next_share, c[i].next_share > c[i].base_share ? "+" : "\u2212",
		       100 * fabs(c[i].next_share - c[i].base_share), c[i].name);
}

static int print_compare(const struct prof_diff *d, const struct compare_side *base,
			 const struct compare_side *next, const char *dir)
{
	struct compare_top top;
	char answer[1600];
	int ret;

	ret = compare_top_changes(d, &top);
	if (ret)
		return fail(EXIT_FAILURE, "cannot compare the profiles: %s", strerror(-ret));
	compare_answer(&top, base, next, answer, sizeof(answer));
	printf("%s\n", answer);
	print_changes("Grew most", top.grew, top.ngrew);
	print_changes("Shrank most", top.shrank, top.nshrank);
	printf("\nFiles written to %s:\n", dir);
	printf("  diff.html       the differential flame graph (open it in a browser)\n");
	printf("  diff.collapsed  \"stack old new\" lines (flamegraph.pl diff.collapsed > diff.svg)\n");
	return EXIT_SUCCESS;
}

/* `compare OLD NEW [--out DIR]`: a differential flame graph of two profiles (compare.h). */
static int cmd_compare(int argc, char **argv)
{
	struct compare_side base = { 0 }, next = { 0 };
	char err[1024] = "", out_default[64];
	const char *paths[2] = { NULL, NULL }, *dir = out_default;
	struct prof_diff *d = NULL;
	time_t now = time(NULL);
	struct tm tm;
	int ret;

	gmtime_r(&now, &tm);
	strftime(out_default, sizeof(out_default), "slideops-compare-%Y%m%d-%H%M%S", &tm);
	ret = parse_compare(argc, argv, paths, &dir);
	if (ret)
		return ret;
	ret = compare_load(paths[0], &base, err, sizeof(err));
	if (!ret)
		ret = compare_load(paths[1], &next, err, sizeof(err));
	if (!ret)
		ret = compare_profiles(&base, &next, &d, err, sizeof(err));
	if (!ret)
		ret = compare_write_dir(d, &base, &next, dir, err, sizeof(err));
	ret = ret ? fail(EXIT_FAILURE, "%s", err) : print_compare(d, &base, &next, dir);
	prof_diff__free(d);
	compare_side_free(&base);
	compare_side_free(&next);
	return ret;
}

/* `daemon [--config FILE]`: the DaemonSet mode; its config is required (default path). */
static int cmd_daemon(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *config = CONFIG_DEFAULT_PATH;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			config = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_SUCCESS;
		default:
			return fail(CLI_EXIT_USAGE, "daemon takes only --config FILE, not '%s'",
				    argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fail(CLI_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	return daemon_main(config);
}

/* The config's Service match rules name Services on plain servers (docs/config.md). */
static int load_config(struct cli_args *a)
{
	const char *path = a->config_path ? a->config_path : CONFIG_DEFAULT_PATH;
	char err[1024];
	int ret;

	config_defaults(&a->config);
	a->opts.async_profiler = a->config.async_profiler;
	if (!a->config_path && access(path, F_OK) < 0)
		return 0;
	ret = config_load(path, &a->config, err, sizeof(err));
	if (ret)
		return fail(CLI_EXIT_USAGE, "%s", err);
	a->rules.rules = a->config.services;
	a->rules.nrules = a->config.nservices;
	a->opts.name_fn = service_rules_apply;
	a->opts.name_ctx = &a->rules;
	return 0;
}

int cli_main(int argc, char **argv)
{
	struct cli_args a = {};
	const char *cmd;
	time_t now = time(NULL);
	struct tm tm;
	int ret;

	if (argc < 2) {
		fputs(usage_text, stderr);
		return CLI_EXIT_USAGE;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "help") || !strcmp(cmd, "-h")) {
		fputs(usage_text, stdout);
		return EXIT_SUCCESS;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf(PROG " " VERSION "\n");
		return EXIT_SUCCESS;
	}
	if (!strcmp(cmd, "daemon"))
		return cmd_daemon(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return cmd_compare(argc - 1, argv + 1);
	if (!strcmp(cmd, "symbols"))
		return cli_symbols(argc - 1, argv + 1);
	gmtime_r(&now, &tm);
	strftime(a.out_default, sizeof(a.out_default), "slideops-profile-%Y%m%d-%H%M%S", &tm);
	ret = parse_args(argc - 1, argv + 1, &a);
	if (ret)
		return ret;
	ret = load_config(&a);
	if (ret)
		return ret;
	if (!strcmp(cmd, "check"))
		ret = cmd_check(&a);
	else if (!strcmp(cmd, "plan"))
		ret = cmd_plan(&a);
	else if (!strcmp(cmd, "capture"))
		ret = cmd_capture(&a);
	else
		ret = fail(CLI_EXIT_USAGE, "unknown command '%s'; see '" PROG " --help'", cmd);
	config_free(&a.config);
	return ret;
}
