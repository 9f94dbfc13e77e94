// kfuncs and __ksym variables (server/tests/bpf_kernel.rs, bpf_check.rs): the kfuncs are in
// 6.12's BTF, not in 6.1's, so libbpf refuses the whole object on 6.1.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";
long out[4];

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;
extern const struct rq runqueues __ksym;
extern const void bpf_prog_active __ksym;
extern const void no_such_symbol_here __ksym __weak;

SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork, struct task_struct *parent)
{
	struct task_struct *t = bpf_task_from_pid(1);
	if (t)
		bpf_task_release(t);
	return 0;
}

SEC("fentry/vfs_read")
int BPF_PROG(read_entry, struct file *f)
{
	out[0] = (long)&runqueues + (long)&bpf_prog_active + (long)&no_such_symbol_here;
	return 0;
}
