// Subprograms libbpf relocates but never loads (server/tests/bpf_kernel.rs): a global
// function no program calls, and (linked with subprog_strong.bpf.c by `bpftool gen
// object`) a `__weak` one the other object's definition replaces, whose `.BTF.ext`
// records the linker keeps ("eliminated weak subprogram"). Both read `file::f_version`,
// which 6.12 no longer has: only the called code decides what the kernel refuses.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

long hits;

__weak __noinline int read_version(long p)
{
	struct file *f = (void *)p;
	return BPF_CORE_READ(f, f_version);
}

__noinline int unused_helper(long p)
{
	struct file *f = (void *)p;
	return BPF_CORE_READ(f, f_version);
}

SEC("kprobe/vfs_read")
int BPF_KPROBE(subprog_entry, struct file *file)
{
	hits += read_version((long)file);
	return 0;
}
