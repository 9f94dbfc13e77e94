// Attach points whose answer is more than "the function exists" (server/tests/bpf_kernel.rs):
// multi-kprobe patterns (libbpf 1.1 expands them over kallsyms; the kernel needs
// CONFIG_FPROBE, which Debian's 6.1 lacks) and `fmod_ret` targets (a `security_` hook, or a
// function on the error-injection list, which Debian's kernels build without).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

long hits;

// `vfs_splice_read` is 6.12's (6.1 has no symbol the pattern matches).
SEC("kprobe.multi/vfs_splice_rea?")
int BPF_KPROBE(multi_new)
{
	hits++;
	return 0;
}

// Matches nothing anywhere.
SEC("kretprobe.multi/fevlint_no_such_function_*")
int BPF_KRETPROBE(multi_none)
{
	hits++;
	return 0;
}

// Matches only `vfs_caches_init` and `vfs_caches_init_early`: init code ftrace cannot trace.
SEC("kprobe.multi/vfs_caches_init*")
int BPF_KPROBE(multi_init)
{
	hits++;
	return 0;
}

// Matches traceable functions and the two above.
SEC("kprobe.multi/vfs_c*")
int BPF_KPROBE(multi_some)
{
	hits++;
	return 0;
}

// A security hook: modifiable everywhere it is traceable.
SEC("fmod_ret/security_file_open")
int BPF_PROG(modret_hook, struct file *file, int ret)
{
	return 0;
}

// Not a hook and not on an error-injection list: the verifier refuses it.
SEC("fmod_ret/vfs_fsync")
int BPF_PROG(modret_plain, struct file *file, int datasync, int ret)
{
	return 0;
}

// A syscall event: ftrace makes one per syscall, with no `btf_trace_` typedef in BTF.
SEC("tracepoint/syscalls/sys_enter_openat")
int syscall_event(void *ctx)
{
	hits++;
	return 0;
}
