#include "arch.h"
#include "kernel/main.h"
#include "kernel/panic.h"
#include "kernel/trap.h"
void kernel_entry_from_user(struct trap_frame *f) { (void)f; }
void kernel_exit_to_user(struct trap_frame *f) { (void)f; }
void syscall_dispatch(struct trap_frame *f) { panic_frame(f, "no user space"); }
void user_exception(struct trap_frame *f, const struct user_fault *uf) { panic_frame(f, "no user space"); }
void kernel_late_init(void)
{
    if (bootargs.debug_fault) {
        arch_debug_fault(bootargs.debug_fault);
    }
    if (bootargs.debug_exit >= 0) {
        arch_poweroff(bootargs.debug_exit);
    }
}
