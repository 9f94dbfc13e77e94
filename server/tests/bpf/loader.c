// The real-kernel judge's loader (server/tests/bpf_kernel.rs): runs in a QEMU guest and,
// for every program of every object named on the command line, opens the object with
// libbpf, loads that program alone (autoload off for the others: libbpf then skips their
// CO-RE relocations, as for a tool that loads one), attaches it, and prints one line:
//
//   PROG <object> <program> <section> <load errno> <attach errno> <libbpf's warnings>
//
// (errno 0: success; attach errno -1: not tried). libbpf's warnings and the verifier log
// are folded onto the line (newlines as " | "; of a longer log, its first 700 and last 800
// bytes).
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

static char logbuf[1 << 16];
static size_t loglen;

static int print_fn(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || loglen >= sizeof(logbuf) - 1)
		return 0;
	int n = vsnprintf(logbuf + loglen, sizeof(logbuf) - loglen, fmt, ap);
	if (n > 0)
		loglen += (size_t)n < sizeof(logbuf) - loglen ? (size_t)n : sizeof(logbuf) - loglen - 1;
	return 0;
}

/* A longer log keeps its first 700 and last 800 bytes: the verifier states its reason last
   (a poisoned CO-RE instruction far into a generated program). */
static void print_log(void)
{
	for (size_t i = 0; i < loglen; i++) {
		if (loglen > 1500 && i == 700) {
			fputs(" | ... | ", stdout);
			i = loglen - 800;
		}
		char c = logbuf[i];
		if (c == '\n')
			fputs(i + 1 < loglen ? " | " : "", stdout);
		else
			putchar(c == '\t' ? ' ' : c);
	}
	putchar('\n');
}

int main(int argc, char **argv)
{
	libbpf_set_print(print_fn);
	for (int a = 1; a < argc; a++) {
		const char *path = argv[a];
		loglen = 0;
		struct bpf_object *obj = bpf_object__open_file(path, NULL);
		if (!obj) {
			printf("OPEN\t%s\t%d\t", path, -errno);
			print_log();
			continue;
		}
		char names[256][128];
		int n = 0;
		struct bpf_program *p;
		bpf_object__for_each_program(p, obj) {
			if (n < 256)
				snprintf(names[n++], sizeof(names[0]), "%s", bpf_program__name(p));
		}
		bpf_object__close(obj);
		for (int i = 0; i < n; i++) {
			loglen = 0;
			obj = bpf_object__open_file(path, NULL);
			if (!obj)
				break;
			struct bpf_program *mine = NULL;
			bpf_object__for_each_program(p, obj) {
				int me = strcmp(bpf_program__name(p), names[i]) == 0;
				bpf_program__set_autoload(p, me);
				if (me)
					mine = p;
			}
			int load = bpf_object__load(obj);
			int attach = -1;
			if (load == 0 && mine) {
				struct bpf_link *link = bpf_program__attach(mine);
				attach = link ? 0 : -errno;
				if (link)
					bpf_link__destroy(link);
			}
			printf("PROG\t%s\t%s\t%s\t%d\t%d\t", path, names[i], mine ? bpf_program__section_name(mine) : "?",
			       load, attach);
			print_log();
			bpf_object__close(obj);
		}
	}
	printf("DONE\n");
	return 0;
}
