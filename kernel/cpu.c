/*
 * cpu.c — the CPU table: every CPU's struct cpu and the CPU sets (contract in
 * include/kernel/cpu.h).  Bringing the CPUs up is smp.c's.
 */
#include "kernel/cpu.h"

struct cpu cpus[MAX_CPUS];
unsigned ncpus;
cpumask_t cpus_online;
cpumask_t cpus_housekeeping;
cpumask_t cpus_dataplane;
