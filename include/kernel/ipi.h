/*
 * ipi.h — inter-processor interrupts, each with a reason.
 *
 * The reason is the SGI number, so QEMU's own interrupt trace shows it too.  Every IPI is
 * counted on the sender per (receiver, reason) and on the receiver per reason.  ipi_send is
 * the only way kernel code interrupts another CPU; isolation policy (which IPIs may go to a
 * dataplane CPU) lives there.
 */
#ifndef ZT_KERNEL_IPI_H
#define ZT_KERNEL_IPI_H

enum ipi_reason {
    IPI_RESCHEDULE = 0, /* a task was placed on the receiver's run queue: switch to it */
    IPI_WAKEUP = 1,     /* a task blocked on the receiver was woken */
    IPI_KICK = 2,       /* contention: the receiver must arm its time-slice timer */
    IPI_CALL = 3,       /* run a queued function on the receiver */
    IPI_SIGNAL = 4,     /* a signal was posted to the task running on the receiver */
    IPI_STOP = 15,      /* panic or power-off: halt */
    IPI_NR = 16,
};

/* Short names ("resched", "wakeup", ...) for reports; "sgi<N>" for unused numbers. */
const char *ipi_reason_name(unsigned reason);

/* Send `reason` to `cpu` (never to this CPU: the caller handles its own CPU). */
void ipi_send(unsigned cpu, enum ipi_reason reason);
/* Stop every other online CPU (panic, power-off); does not wait. */
void ipi_stop_others(void);
/* Accept IPIs on this CPU (every SGI enabled in its redistributor). */
void ipi_init_cpu(void);
/* Called by irq dispatch for INTIDs 0..15 on the receiving CPU. */
void ipi_receive(unsigned sgi);

#endif
