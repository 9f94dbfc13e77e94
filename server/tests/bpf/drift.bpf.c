// CO-RE and attach points that change between Debian 6.1 and 6.12 (server/tests/bpf_check.rs).
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";
long out[4];

SEC("kprobe/vfs_read")
int BPF_KPROBE(read_version, struct file *file)
{
	out[0] = BPF_CORE_READ(file, f_version);
	return 0;
}

SEC("fentry/do_sys_open")
int BPF_PROG(open_entry, int dfd)
{
	out[1] = dfd;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_tp)
{
	return 0;
}

SEC("kprobe/__alloc_pages")
int alloc(void *ctx)
{
	return 0;
}

struct task_struct___old { long state; } __attribute__((preserve_access_index));

SEC("kprobe/schedule")
int guarded(void *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	if (bpf_core_field_exists(((struct task_struct___old *)t)->state))
		out[2] = BPF_CORE_READ((struct task_struct___old *)t, state);
	else
		out[2] = BPF_CORE_READ(t, __state);
	return 0;
}

SEC("tp_btf/no_such_tracepoint")
int BPF_PROG(missing_tp)
{
	return 0;
}

SEC("tp/sched/sched_switch")
int present_tp(void *ctx)
{
	return 0;
}
