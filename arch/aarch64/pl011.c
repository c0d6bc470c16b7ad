/* SPDX-License-Identifier: MIT */
/*
 * pl011.c — the console: an ARM PL011 UART (ARM DDI 0183, PrimeCell UART r1p5).
 *
 * Output is polled (wait while the TX FIFO is full, write the byte) so it works in any
 * context: early boot before the device tree is read, with IRQs masked, in a panic.
 * Input is interrupt-driven: the RX and RX-timeout interrupts are enabled and the kernel's
 * handler drains the FIFO through arch_console_rx().  The UART's SPI is routed to a
 * housekeeping CPU like every other device interrupt.
 *
 * Before the device tree is parsed the UART is assumed at QEMU virt's 0x09000000 (the only
 * machine zerotick boots on); pl011_init() then switches to the address the tree gives.
 * Callers serialise output themselves (printk's lock); RX is drained by one CPU at a time
 * (the CPU the SPI is routed to).
 */
#include <stdint.h>

#include "arch.h"
#include "platform.h"

#define UART_DR    0x00 /* data */
#define UART_FR    0x18 /* flags */
#define UART_LCRH  0x2c /* line control */
#define UART_CR    0x30 /* control */
#define UART_IMSC  0x38 /* interrupt mask set/clear */
#define UART_ICR   0x44 /* interrupt clear */
#define FR_RXFE    (1 << 4)
#define FR_TXFF    (1 << 5)
#define LCRH_FEN   (1 << 4)
#define LCRH_WLEN8 (3 << 5)
#define CR_UARTEN  (1 << 0)
#define CR_TXE     (1 << 8)
#define CR_RXE     (1 << 9)
#define INT_RX     (1 << 4)
#define INT_RT     (1 << 6)

#define QEMU_VIRT_UART_PA 0x09000000

static volatile uint32_t *uart_regs = (volatile uint32_t *)phys_to_virt(QEMU_VIRT_UART_PA);
static unsigned uart_intid;

static inline uint32_t uart_read(unsigned off)
{
    return uart_regs[off / 4];
}

static inline void uart_write(unsigned off, uint32_t v)
{
    uart_regs[off / 4] = v;
}

/* Switch to the UART the device tree names; enable FIFOs and receive interrupts. */
void pl011_init(paddr_t base, unsigned intid)
{
    uart_regs = (volatile uint32_t *)phys_to_virt(base);
    uart_intid = intid;
    uart_write(UART_LCRH, LCRH_FEN | LCRH_WLEN8);
    uart_write(UART_CR, CR_UARTEN | CR_TXE | CR_RXE);
    uart_write(UART_ICR, 0x7ff);
    uart_write(UART_IMSC, INT_RX | INT_RT);
}

void arch_console_putc(char c)
{
    while (uart_read(UART_FR) & FR_TXFF) {
    }
    uart_write(UART_DR, (uint8_t)c);
}

unsigned arch_console_irq(void)
{
    return uart_intid;
}

/* Clear the interrupt first, then drain: a byte that arrives after the last FIFO check
 * raises the interrupt again.  (Clearing after draining loses it: QEMU's PL011 raises RX
 * only when the FIFO goes from empty to one byte, so a byte that lands between the last
 * check and the clear would sit in the FIFO with no interrupt, and input would stop.) */
void arch_console_rx(void (*sink)(char c))
{
    uart_write(UART_ICR, INT_RX | INT_RT);
    while (!(uart_read(UART_FR) & FR_RXFE)) {
        sink((char)(uart_read(UART_DR) & 0xff));
    }
}
