/* SPDX-License-Identifier: MIT */
/*
 * tty.c — the console as a terminal (contract in include/kernel/tty.h): a line discipline
 * over the UART, with the termios settings, window size and foreground process group that
 * /dev/console and /dev/tty share.
 *
 * Input: the UART interrupt (on a housekeeping CPU) hands each byte to rx_byte, which
 * applies the termios input rules.  Canonical mode (ICANON, the default): bytes collect in
 * an edit area [commit, edit) of the ring; VERASE removes one (echoed "\b \b"), VKILL the
 * line, newline or VEOF commits the line to readers.  A VEOF on an empty line commits a
 * marker that makes one read return 0 (end of file), as xv6's console does.  Raw mode
 * (~ICANON): every byte is committed at once; a read returns what there is, at least one
 * byte when VMIN > 0 (VTIME is ignored).  ISIG: VINTR/VQUIT flush the line, echo "^C"/"^\"
 * and send SIGINT/SIGQUIT to the foreground process group.  Echo (ECHO) writes through
 * the polled console driver.  Output: "\n" becomes "\r\n" (the console driver does it).
 * Not emulated: job-control stops (VSUSP, SIGTTIN/SIGTTOU for background groups), flow
 * control, VTIME timeouts, parity and speed (accepted and reported back, no effect).
 *
 * Locks: rx.wq.lock guards every field here (IRQs masked; the interrupt handler runs with
 * them masked).  Signals take proc_lock, which must not be taken under a wait queue lock
 * (lock order), so rx_byte only counts them and tty_interrupt sends them after unlocking.
 */
#include "kernel/tty.h"
#include "arch.h"
#include "kernel/irq.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
#include "kernel/poll.h"
#include "kernel/printk.h"
#include "kernel/signal.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "kernel/wait.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define RX_SIZE  1024
#define EOF_MARK 0x100 /* in `buf` as a 16-bit cell: a VEOF that ends a read */

static struct {
    struct waitq wq; /* its lock guards everything here */
    uint16_t buf[RX_SIZE];
    unsigned head, commit, edit; /* read from head; committed up to commit; edit area after */
    struct termios_k t;
    struct winsize_k ws;
    int fg_pgrp;             /* process group that gets SIGINT, 0 = none */
    unsigned sig_pending[2]; /* SIGINT, SIGQUIT counted under the lock, sent after */
    uint64_t dropped;
} rx;

static const uint8_t default_cc[TTY_NCCS] = {
    [VINTR] = 3,      [VQUIT] = 0x1c,  [VERASE] = 0x7f,  [VKILL] = 0x15, [VEOF] = 4,
    [VMIN] = 1,       [VSTART] = 0x11, [VSTOP] = 0x13,   [VSUSP] = 0x1a, [VREPRINT] = 0x12,
    [VWERASE] = 0x17, [VLNEXT] = 0x16, [VDISCARD] = 0xf,
};

static void set_defaults(void)
{
    rx.t.iflag = ICRNL | IXON;
    rx.t.oflag = OPOST | ONLCR;
    rx.t.cflag = 0x4bf; /* B38400 | CS8 | CREAD | HUPCL */
    rx.t.lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN;
    memcpy(rx.t.cc, default_cc, sizeof(default_cc));
    rx.ws.rows = 24;
    rx.ws.cols = 80;
}

static void echo(const char *s, unsigned long n)
{
    if (rx.t.lflag & ECHO) {
        console_write(s, n);
    }
}

/* The ring's order (rx.wq.lock held): head <= commit <= edit <= head + RX_SIZE, in unsigned
 * arithmetic that wraps. */
static bool ring_is_ordered(void)
{
    return rx.commit - rx.head <= rx.edit - rx.head && rx.edit - rx.head <= RX_SIZE;
}

/* Everything not yet read, committed or not, is dropped (VINTR, VQUIT, TCFLSH). */
static void flush_input(void)
{
    ASSERT_HELD(&rx.wq.lock);
    rx.head = rx.commit = rx.edit;
}

static void put_cell(uint16_t c)
{
    ASSERT_HELD(&rx.wq.lock);
    ASSERT(ring_is_ordered());
    if (rx.edit - rx.head == RX_SIZE) {
        rx.dropped++;
        return;
    }
    rx.buf[rx.edit++ % RX_SIZE] = c;
}

static void commit_line(void)
{
    ASSERT_HELD(&rx.wq.lock);
    rx.commit = rx.edit;
}

/* A control character with ISIG set: 1 if it was one. */
static int signal_char(char c)
{
    int which = c == (char)rx.t.cc[VINTR] ? 0 : c == (char)rx.t.cc[VQUIT] ? 1 : -1;
    if (which < 0 || !(rx.t.lflag & ISIG)) {
        return 0;
    }
    flush_input();
    echo(which ? "^\\" : "^C", 2);
    rx.sig_pending[which]++;
    return 1;
}

/* Canonical editing of one input byte. */
static void canonical_byte(char c)
{
    if (c == (char)rx.t.cc[VERASE] || c == '\b') {
        if (rx.edit != rx.commit) {
            rx.edit--;
            echo("\b \b", 3);
        }
    } else if (c == (char)rx.t.cc[VKILL]) {
        while (rx.edit != rx.commit) {
            rx.edit--;
            echo("\b \b", 3);
        }
    } else if (c == (char)rx.t.cc[VEOF]) {
        if (rx.edit == rx.commit) {
            put_cell(EOF_MARK);
        }
        commit_line();
    } else if (c == '\n') {
        put_cell('\n');
        echo("\n", 1);
        commit_line();
    } else {
        put_cell((uint8_t)c);
        echo(&c, 1);
    }
}

/* Called by arch_console_rx for each byte, with rx.wq.lock held. */
static void rx_byte(char c)
{
    ASSERT_HELD(&rx.wq.lock);
    if ((rx.t.iflag & IGNCR) && c == '\r') {
        return;
    }
    if ((rx.t.iflag & ICRNL) && c == '\r') {
        c = '\n';
    } else if ((rx.t.iflag & INLCR) && c == '\n') {
        c = '\r';
    }
    if (signal_char(c)) {
        return;
    }
    if (rx.t.lflag & ICANON) {
        canonical_byte(c);
    } else {
        put_cell((uint8_t)c);
        echo(&c, 1);
        commit_line();
    }
}

static void tty_interrupt(unsigned irq)
{
    ASSERT_IRQS_MASKED(); /* IRQ context: the plain spin_lock below relies on it */
    spin_lock(&rx.wq.lock);
    unsigned before = rx.commit;
    arch_console_rx(rx_byte);
    ASSERT(ring_is_ordered());
    if (rx.commit != before) {
        waitq_wake_locked(&rx.wq, 1 << 30);
    }
    unsigned sigs[2] = {rx.sig_pending[0], rx.sig_pending[1]};
    rx.sig_pending[0] = rx.sig_pending[1] = 0;
    int fg = rx.fg_pgrp;
    spin_unlock(&rx.wq.lock);
    if (rx.commit != before) {
        poll_notify();
    }
    for (int i = 0; i < 2; i++) {
        if (sigs[i] && fg > 0) {
            spin_lock(&proc_lock);
            signal_send_pgrp_locked(fg, i ? SIGQUIT : SIGINT, &signal_info_kernel);
            spin_unlock(&proc_lock);
        }
    }
}

void tty_init(void)
{
    waitq_init(&rx.wq);
    set_defaults();
    unsigned irq = arch_console_irq();
    if (!irq) {
        return;
    }
    if (irq_register(irq, tty_interrupt) != 0) {
        panic("tty: cannot take the console interrupt %u", irq);
    }
    arch_irq_set_enabled(irq, true);
}

/* Take up to n committed bytes into tmp (lock held).  *eof: an end-of-file marker ended
 * the read. */
static size_t take_locked(char *tmp, size_t n, bool *eof)
{
    ASSERT_HELD(&rx.wq.lock);
    ASSERT(ring_is_ordered());
    size_t k = 0;
    *eof = false;
    while (k < n && rx.head != rx.commit) {
        uint16_t c = rx.buf[rx.head % RX_SIZE];
        if (c == EOF_MARK) {
            if (k == 0) {
                rx.head++; /* consumed: this read returns 0 */
                *eof = true;
            }
            break; /* otherwise left for the next read */
        }
        rx.head++;
        tmp[k++] = (char)c;
        if (c == '\n' && (rx.t.lflag & ICANON)) {
            break; /* canonical reads end at a line */
        }
    }
    return k;
}

long tty_read(uint64_t ubuf, size_t n, bool nonblock)
{
    char tmp[256];
    if (n == 0) {
        return 0;
    }
    n = MIN(n, sizeof(tmp));
    if (vm_check_range(current_vm(), ubuf, n, PROT_WRITE)) {
        return -EFAULT; /* before waiting: a bad buffer must not block or lose input */
    }
    for (;;) {
        unsigned long flags = spin_lock_irqsave(&rx.wq.lock);
        bool eof;
        size_t k = take_locked(tmp, n, &eof);
        if (k || eof || (!(rx.t.lflag & ICANON) && rx.t.cc[VMIN] == 0)) {
            spin_unlock_irqrestore(&rx.wq.lock, flags);
            return copy_to_user(current_vm(), ubuf, tmp, k) ? -EFAULT : (long)k;
        }
        if (nonblock) {
            spin_unlock_irqrestore(&rx.wq.lock, flags);
            return -EAGAIN;
        }
        int r = waitq_sleep_locked(&rx.wq, flags, 0);
        if (r == -EINTR) {
            return -ERESTARTSYS;
        }
    }
}

unsigned tty_poll(void)
{
    unsigned long flags = spin_lock_irqsave(&rx.wq.lock);
    unsigned m = POLLOUT | (rx.head != rx.commit ? POLLIN : 0);
    spin_unlock_irqrestore(&rx.wq.lock, flags);
    return m;
}

void tty_set_termios(const struct termios_k *t, bool flush)
{
    unsigned long flags = spin_lock_irqsave(&rx.wq.lock);
    bool was_canon = rx.t.lflag & ICANON;
    rx.t = *t;
    if (flush) {
        flush_input();
    } else if (was_canon && !(t->lflag & ICANON)) {
        commit_line(); /* what was being edited becomes readable */
    }
    waitq_wake_locked(&rx.wq, 1 << 30);
    spin_unlock_irqrestore(&rx.wq.lock, flags);
}

void tty_get_termios(struct termios_k *t)
{
    unsigned long flags = spin_lock_irqsave(&rx.wq.lock);
    *t = rx.t;
    spin_unlock_irqrestore(&rx.wq.lock, flags);
}

void tty_winsize(struct winsize_k *ws, const struct winsize_k *set)
{
    unsigned long flags = spin_lock_irqsave(&rx.wq.lock);
    if (set) {
        rx.ws = *set;
    }
    *ws = rx.ws;
    spin_unlock_irqrestore(&rx.wq.lock, flags);
}

void tty_flush_input(void)
{
    unsigned long flags = spin_lock_irqsave(&rx.wq.lock);
    flush_input();
    spin_unlock_irqrestore(&rx.wq.lock, flags);
}

unsigned tty_readable(void)
{
    unsigned long flags = spin_lock_irqsave(&rx.wq.lock);
    unsigned n = rx.commit - rx.head;
    spin_unlock_irqrestore(&rx.wq.lock, flags);
    return n;
}

void tty_set_foreground(int pgrp)
{
    __atomic_store_n(&rx.fg_pgrp, pgrp, __ATOMIC_RELAXED);
}

int tty_foreground(void)
{
    return __atomic_load_n(&rx.fg_pgrp, __ATOMIC_RELAXED);
}
