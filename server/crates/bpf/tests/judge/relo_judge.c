// libbpf 1.1 as the judge of CO-RE relocations, offline: opens OBJ with
// btf_custom_path=KERNEL_BTF and runs bpf_object__load() with the bpf() syscall answered
// here (nothing reaches the running kernel). libbpf's debug log says what it did with every
// relocation: `relo #N: patched insn #I ... -> VALUE`, `substituting insn #I w/ invalid
// insn` (poisoned), or `failed to relocate` / `failed to patch`.
//
//   cc relo_judge.c -o relo_judge /usr/lib/x86_64-linux-gnu/libbpf.a -lelf -lz
//   relo_judge KERNEL.btf OBJ.bpf.o
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

static int print_all(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stdout, fmt, ap);
}

// libbpf.a calls syscall(__NR_bpf, ...): this definition, in the executable, is the one
// the static link binds. Commands that create an object get a harmless fd; the others
// succeed with nothing written. Every other syscall is refused.
long syscall(long nr, ...)
{
	if (nr == __NR_bpf) {
		va_list ap;
		va_start(ap, nr);
		long cmd = va_arg(ap, long);
		va_end(ap);
		switch (cmd) {
		case 0:  /* BPF_MAP_CREATE */
		case 5:  /* BPF_PROG_LOAD */
		case 17: /* BPF_RAW_TRACEPOINT_OPEN */
		case 18: /* BPF_BTF_LOAD */
		case 28: /* BPF_LINK_CREATE */
			return open("/dev/null", O_RDONLY | O_CLOEXEC);
		default:
			return 0;
		}
	}
	errno = ENOSYS;
	return -1;
}

// With JUDGE_KERNEL_BTF set, the kernel BTF libbpf reads beside the custom CO-RE path
// (`btf__load_vmlinux_btf()`: /sys/kernel/btf/vmlinux, for struct_ops types and ksyms)
// is that file instead of the running kernel's. Debian's libbpf.a calls faccessat and
// fopen64 (large-file names): these definitions, in the executable, are the ones it binds.
static const char *vmlinux_path(const char *path)
{
	const char *k = getenv("JUDGE_KERNEL_BTF");
	return k && path && strcmp(path, "/sys/kernel/btf/vmlinux") == 0 ? k : path;
}

int faccessat(int dirfd, const char *path, int mode, int flags)
{
	(void)mode;
	(void)flags;
	int fd = openat(dirfd, vmlinux_path(path), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

FILE *fopen64(const char *path, const char *mode)
{
	int fd = openat(AT_FDCWD, vmlinux_path(path), O_RDONLY | O_CLOEXEC);
	return fd < 0 ? NULL : fdopen(fd, mode);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s KERNEL.btf OBJ\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(print_all);
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = argv[1]);
	struct bpf_object *obj = bpf_object__open_file(argv[2], &opts);
	if (!obj) {
		printf("JUDGE: open failed: %d\n", -errno);
		return 1;
	}
	int err = bpf_object__load(obj);
	printf("JUDGE: load returned %d\n", err);
	fflush(stdout);
	_exit(0);
}
