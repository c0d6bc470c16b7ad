/*
 * context.c — the arch side of tasks: preparing a new task's kernel context and first user
 * frame, and the user thread pointer.  The switch itself and FP/SIMD save/restore are in
 * switch.S.
 */
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/vm.h"

extern char task_entry[];

/* The first switch to this context lands in task_entry (switch.S), which calls
 * first_run(prev) with SP at `frame`, then returns to user space through that frame. */
void arch_context_init(struct arch_context *c, struct trap_frame *frame,
                       void (*first_run)(struct task *prev))
{
    memset(c, 0, sizeof(*c));
    c->x19_x28[0] = (uint64_t)first_run;
    c->lr = (uint64_t)task_entry;
    c->sp = (uint64_t)frame;
}

/* SPSR 0: return to EL0 (AArch64, SP_EL0) with D, A, I and F unmasked. */
void arch_user_frame_init(struct trap_frame *f, uint64_t pc, uint64_t sp)
{
    memset(f, 0, sizeof(*f));
    f->elr = pc;
    f->sp_el0 = sp;
    f->spsr = 0;
}

uint64_t arch_tls_read(void)
{
    return sysreg_read(tpidr_el0);
}

void arch_tls_write(uint64_t v)
{
    sysreg_write(tpidr_el0, v);
}

/*
 * Signal frames.  The frame pushed on the user stack holds everything the handler may
 * clobber: general registers, SP, PC, the NZCV flags, FP/SIMD state, the blocked mask, and
 * a minimal siginfo (si_signo at offset 0, Linux layout for the first three ints).  The
 * handler runs with x0 = signal, x1 = &info, x2 = &frame, x30 = the restorer, SP = the
 * frame; the restorer calls rt_sigreturn with SP back at the frame.
 */
#define SIGFRAME_MAGIC 0x7a7e51675a7e0001ull

struct sigframe {
    int32_t info[32]; /* siginfo: signo, errno, code, ... */
    uint64_t x[31];
    uint64_t sp, pc, pstate;
    struct arch_fpsimd fp;
    uint64_t blocked;
    uint64_t magic;
};

int arch_signal_push(struct vm *vm, struct trap_frame *f, int sig, uint64_t handler,
                     uint64_t restorer, uint64_t blocked)
{
    struct sigframe frame, *sf = &frame; /* under 1 KiB: fine on a 16 KiB kernel stack */
    memset(sf, 0, sizeof(*sf));
    sf->info[0] = sig;
    memcpy(sf->x, f->x, sizeof(sf->x));
    sf->sp = f->sp_el0;
    sf->pc = f->elr;
    sf->pstate = f->spsr;
    arch_fpsimd_save(&sf->fp);
    sf->blocked = blocked;
    sf->magic = SIGFRAME_MAGIC;
    uint64_t sp = (f->sp_el0 - sizeof(*sf)) & ~(uint64_t)15;
    if (f->sp_el0 < sizeof(*sf) + 4096 || copy_to_user(vm, sp, sf, sizeof(*sf)) != 0) {
        return -1;
    }
    f->x[0] = (uint64_t)sig;
    f->x[1] = sp; /* &info: first member */
    f->x[2] = sp;
    f->x[30] = restorer;
    f->sp_el0 = sp;
    f->elr = handler;
    return 0;
}

int arch_signal_pop(struct vm *vm, struct trap_frame *f, uint64_t *blocked)
{
    struct sigframe frame, *sf = &frame;
    if (copy_from_user(vm, sf, f->sp_el0, sizeof(*sf)) != 0 || sf->magic != SIGFRAME_MAGIC) {
        return -1;
    }
    memcpy(f->x, sf->x, sizeof(f->x));
    f->sp_el0 = sf->sp;
    f->elr = sf->pc;
    f->spsr = sf->pstate & 0xf0000000; /* only the flags: EL0t, nothing masked */
    arch_fpsimd_restore(&sf->fp);
    *blocked = sf->blocked;
    return 0;
}
