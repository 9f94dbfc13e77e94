// Attach points that are modules' on Debian's 6.1 (md_mod, kvm, xfs: `=m` in its config),
// and one name nothing has. With the modules' BTF in the kernel folder (`btf/`, as
// /sys/kernel/btf has it with the modules loaded) libbpf and the kernel find the first
// four; without, vmlinux alone cannot tell a module's function from a missing one (B611).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

long hits;

// md_mod (mdflush).
SEC("fentry/md_flush_request")
int BPF_PROG(md_flush)
{
	hits++;
	return 0;
}

// kvm's tracepoint, by BTF and by tracefs.
SEC("tp_btf/kvm_exit")
int BPF_PROG(kvm_exit_btf)
{
	hits++;
	return 0;
}

SEC("tp/kvm/kvm_exit")
int kvm_exit_tp(void *ctx)
{
	hits++;
	return 0;
}

// xfs (xfsslower).
SEC("kprobe/xfs_file_read_iter")
int BPF_KPROBE(xfs_read)
{
	hits++;
	return 0;
}

// Nothing has it.
SEC("kprobe/fevlint_no_such_function")
int BPF_KPROBE(nowhere)
{
	hits++;
	return 0;
}
