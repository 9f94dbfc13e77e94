// Several CO-RE accesses on one line (server/tests/lsp_bpf.rs, the VS Code test): the
// language server puts each at the member it reads.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";
long out[8];

SEC("kprobe/do_exit")
int chain(struct pt_regs *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct file *file = (void *)PT_REGS_PARM1(ctx);
	out[0] = (long)BPF_CORE_READ(task, mm, exe_file);
	out[1] = BPF_CORE_READ(file, f_pos) + BPF_CORE_READ(file, f_version);
	out[2] = task->pid + task->tgid;
	return 0;
}
