# SPDX-License-Identifier: MIT
# zerotick — top-level build.  `make help` lists the targets.
#
# Everything built goes under build/.  Every target that needs a tool first runs
# tools/deps.sh, which installs missing Debian packages (as root) or says what to install.

CPUS     ?= 4
MEM      ?= 512M
BOOTARGS ?=
REPRO    ?= 0
# icount shift used by REPRO=1: 2^SHIFT ns of guest time per instruction.
ICOUNT_SHIFT ?= 4

CROSS   ?= aarch64-linux-gnu-
CC      := $(CROSS)gcc
LD      := $(CROSS)ld
HOSTCC  ?= gcc
PYTHON  := /usr/bin/python3
QEMU    := qemu-system-aarch64
B       := build

DEPS := tools/deps.sh

# Quiet by default ("CC file"); V=1 shows every command.
ifeq ($(V),1)
Q :=
else
Q := @
endif

# ---------------------------------------------------------------- kernel
KERNEL_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
	-ffreestanding -nostdlib -fno-builtin -fno-stack-protector -fno-pic -fno-pie \
	-mgeneral-regs-only -mcmodel=small -fno-omit-frame-pointer -fno-common \
	-mno-outline-atomics -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-Iinclude -Iarch/aarch64 -MMD -MP
KERNEL_ASFLAGS := -g -Iinclude -Iarch/aarch64 -I$(B)/include -D__ASSEMBLY__ -MMD -MP
KERNEL_LDFLAGS := -nostdlib -static -no-pie -z max-page-size=4096 -z noexecstack \
	--no-warn-rwx-segments -T linker.ld

# asm-offsets.c is compiled to assembly only, for the header below; it is not linked.
ARCH_SRCS   := $(filter-out arch/aarch64/asm-offsets.c,$(wildcard arch/aarch64/*.c)) \
	$(wildcard arch/aarch64/*.S)
# kernel/ holds the design card's three (sched, timer, isolate), the exit path and main;
# kernel/<group>/ the subsystems (docs/layout.md says which layer each folder is).
KERNEL_SRCS := $(wildcard kernel/*.c kernel/*/*.c kernel/*.S kernel/*/*.S)
KERNEL_OBJS := $(patsubst %,$(B)/%.o,$(basename $(ARCH_SRCS) $(KERNEL_SRCS)))
# The checked kernel: the same sources with the ASSERT family and spinlock owner tracking on
# (include/kernel/panic.h).  `make test` boots it; make, make run and make bench use the
# release build above, where those checks cost nothing.
CHECKED_OBJS := $(patsubst %,$(B)/checked/%.o,$(basename $(ARCH_SRCS) $(KERNEL_SRCS)))

# ---------------------------------------------------------------- user programs
USER_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
	--specs=picolibc.specs -Iinclude -I$(B)/include -Iuser/lib -Iuser -ffunction-sections -fdata-sections \
	-fno-omit-frame-pointer -MMD -MP
USER_LDFLAGS := --specs=picolibc.specs -nostartfiles -static -Wl,--gc-sections \
	-T user/lib/user.ld -Wl,-z,max-page-size=4096 -Wl,--no-warn-rwx-segments
USER_LIB_SRCS := $(wildcard user/lib/*.c) $(wildcard user/lib/*.S)
USER_LIB_OBJS := $(patsubst %,$(B)/%.o,$(basename $(USER_LIB_SRCS)))
# The user-space dataplane (virtio-net driver, packet logic) is a library programs link.
NET_LIB_SRCS  := $(wildcard user/net/*.c)
NET_LIB_OBJS  := $(patsubst %,$(B)/%.o,$(basename $(NET_LIB_SRCS)))
NET_LIB       := $(B)/user/libnet.a
USER_PROGS    := $(basename $(notdir $(wildcard user/*.c)))
USER_BINS     := $(addprefix $(B)/initrd/bin/,$(USER_PROGS))

.PHONY: all kernel checked percpu run run-net debug gdb test unit bench compare fuzz stress-long format check-format \
	clean distclean help deps-build doccheck lab grade lab-ci
all: $(B)/kernel.elf

deps-build:
	@$(DEPS) build

$(B)/%.o: %.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(KERNEL_CFLAGS) -c $< -o $@

$(B)/%.o: %.S | deps-build
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(KERNEL_ASFLAGS) -c $< -o $@

# Structure offsets for the assembly files, generated from the C structures (asm-offsets.c
# says how): each "=>NAME VALUE" marker of the compiler's output becomes "#define NAME VALUE".
ASM_OFFSETS := $(B)/include/generated/asm-offsets.h

$(ASM_OFFSETS): arch/aarch64/asm-offsets.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)$(CC) $(KERNEL_CFLAGS) -MF $(B)/asm-offsets.d -MT $@ -S $< -o $(B)/asm-offsets.s
	$(Q){ echo "/* Generated from arch/aarch64/asm-offsets.c by the Makefile: do not edit. */"; \
	  echo "#ifndef ZT_GENERATED_ASM_OFFSETS_H"; echo "#define ZT_GENERATED_ASM_OFFSETS_H"; \
	  sed -n 's/^[[:space:]]*=>\([A-Z0-9_]*\) #\{0,1\}\([0-9]*\).*/#define \1 \2/p' \
	    $(B)/asm-offsets.s; echo "#endif"; } > $@.tmp
	$(Q)test "$$(grep -c '^#define [A-Z0-9_]* [0-9]' $@.tmp)" -eq "$$(grep -c '^[[:space:]]*=>' $(B)/asm-offsets.s)" \
	  || { echo "asm-offsets: a marker did not convert" >&2; exit 1; }
	$(Q)mv $@.tmp $@

$(patsubst %,$(B)/%.o,$(basename $(wildcard arch/aarch64/*.S))) \
$(patsubst %,$(B)/checked/%.o,$(basename $(wildcard arch/aarch64/*.S))): $(ASM_OFFSETS)

$(B)/checked/%.o: %.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $< (checked)"
	$(Q)$(CC) $(KERNEL_CFLAGS) -DZT_CHECKED -c $< -o $@

$(B)/checked/%.o: %.S | deps-build
	@mkdir -p $(dir $@)
	@echo "  AS      $< (checked)"
	$(Q)$(CC) $(KERNEL_ASFLAGS) -DZT_CHECKED -c $< -o $@

# User objects carry their own flags (picolibc, EL0 code) so they live in a separate tree.
$(B)/user/%.o: user/%.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

$(B)/user/%.o: user/%.S | deps-build
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(USER_CFLAGS) -D__ASSEMBLY__ -c $< -o $@

# Programs keep their symbols in build/user/bin (for gdb); the archive gets stripped copies.
.PRECIOUS: $(B)/user/bin/% $(B)/user/%.o
$(NET_LIB): $(NET_LIB_OBJS)
	$(Q)rm -f $@
	$(Q)$(CROSS)ar rcs $@ $^

$(B)/user/bin/%: $(B)/user/%.o $(USER_LIB_OBJS) $(NET_LIB) user/lib/user.ld
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(USER_LDFLAGS) -o $@ $< $(USER_LIB_OBJS) $(NET_LIB)

# /bin/fuzz has parts of its own (user/fuzz/) and reads the kernel's dispatch table: every
# LINUX_CALLS X(name, fn, FAST|FULL)/ZT_CALL() entry of kernel/sys/syscall.c becomes X(SYS_name, "name") in the list macro
# FZ_SYSCALLS(X), so a call added to the kernel is fuzzed with no change to the fuzzer.
FUZZ_OBJS    := $(patsubst %,$(B)/%.o,$(basename $(wildcard user/fuzz/*.c user/fuzz/*.S)))
FUZZ_CALLS_H := $(B)/include/generated/fuzz_calls.h

$(FUZZ_CALLS_H): kernel/sys/syscall.c $(wildcard include/uapi/*.h)
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q){ echo "/* Generated from kernel/sys/syscall.c by the Makefile: do not edit. */"; \
	  for h in include/uapi/*.h; do echo "#include \"uapi/$${h##*/}\""; done; \
	  echo "#define FZ_SYSCALLS(X) \\"; \
	  grep -v '#define' kernel/sys/syscall.c | \
	    sed -n 's/^[[:space:]]*X(\([a-z0-9_]*\), sys_[a-z0-9_]*, F[A-Z]*).*/    X(SYS_\1, "\1") \\/p'; \
	  grep -v '#define' kernel/sys/syscall.c | grep -o 'ZT_CALL([a-z0-9_]*)' | \
	    sed 's/ZT_CALL(\(.*\))/    X(SYS_zt_\1, "zt_\1") \\/'; echo; } > $@.tmp
	$(Q)test "$$(grep -c '    X(SYS_' $@.tmp)" -gt 20 || { echo "$@: no calls found" >&2; exit 1; }
	$(Q)mv $@.tmp $@

$(B)/user/fuzz/calls.o: $(FUZZ_CALLS_H)

$(B)/user/bin/fuzz: $(B)/user/fuzz.o $(FUZZ_OBJS) $(USER_LIB_OBJS) user/lib/user.ld
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(USER_LDFLAGS) -o $@ $< $(FUZZ_OBJS) $(USER_LIB_OBJS)

# /bin/labcheck, the grader's checks of the labs (labs/), links the tests students write for
# it (user/labcheck/*.c), so it can run them against the real calls and against broken ones.
LABCHECK_OBJS := $(patsubst %,$(B)/%.o,$(basename $(wildcard user/labcheck/*.c)))

$(B)/user/bin/labcheck: $(B)/user/labcheck.o $(LABCHECK_OBJS) $(USER_LIB_OBJS) user/lib/user.ld
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(USER_LDFLAGS) -o $@ $< $(LABCHECK_OBJS) $(USER_LIB_OBJS)

$(B)/initrd/bin/%: $(B)/user/bin/%
	@mkdir -p $(dir $@)
	$(Q)$(CROSS)strip -o $@ $<

# Files in /bin that are not programs, so usertests and lxtest can check that spawn and
# execve refuse them with -ENOEXEC: plain text, an ELF header cut short, and a whole AArch64
# ELF header (hello's) claiming 65535 program headers, far past the end of the file; and two
# programs the kernel refuses with a reason on the console: hello marked as built for x86-64
# (EM_X86_64, 62), and a glibc program dynamically linked against an interpreter that exists
# nowhere (/lib/ld-zt-missing.so.1).
INITRD_DATA := $(B)/initrd/bin/notelf $(B)/initrd/bin/badelf $(B)/initrd/bin/badphdr \
	$(B)/initrd/bin/badmachine $(B)/initrd/bin/nointerp

$(B)/initrd/bin/notelf:
	@mkdir -p $(dir $@)
	printf 'not a program: spawn must refuse it with ENOEXEC\n' > $@
	chmod +x $@

$(B)/initrd/bin/badelf:
	@mkdir -p $(dir $@)
	printf '\177ELF\002\001\001\000' > $@
	chmod +x $@

$(B)/initrd/bin/badphdr: $(B)/initrd/bin/hello
	head -c 64 $< > $@
	printf '\377\377' | dd of=$@ bs=1 seek=56 conv=notrunc status=none
	chmod +x $@

$(B)/initrd/bin/badmachine: $(B)/initrd/bin/hello
	cp $< $@
	printf '\076\000' | dd of=$@ bs=1 seek=18 conv=notrunc status=none
	chmod +x $@

$(B)/initrd/bin/nointerp: | deps-build
	@mkdir -p $(dir $@)
	printf 'int main(void) { return 0; }\n' | $(CC) -x c -O2 -no-pie -o $@ - \
		-Wl,--dynamic-linker=/lib/ld-zt-missing.so.1
	$(CROSS)strip $@

# ---------------------------------------------------------------- Linux programs
# Ordinary Linux C built unchanged: against glibc (Debian's cross libc6-dev-arm64-cross), and
# against musl when Debian's arm64 musl-dev could be fetched.  busybox-static (arm64) is a
# test input fetched the same way (tools/fetch-debs); without them the tests say skipped.
DEBS        := $(B)/debs
LINUX_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -static -pthread
MUSL        := $(DEBS)/musl-dev/usr
MUSL_LIB    := $(MUSL)/lib/aarch64-linux-musl
MUSL_CC     = $(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -static -nostdinc -nostdlib \
	-isystem $(MUSL)/include/aarch64-linux-musl -isystem $$($(CC) -print-file-name=include) \
	$(MUSL_LIB)/crt1.o $(MUSL_LIB)/crti.o $$($(CC) -print-file-name=crtbeginT.o)
MUSL_LIBS   = -L$(MUSL_LIB) -lc $$($(CC) -print-libgcc-file-name) \
	$$($(CC) -print-file-name=crtend.o) $(MUSL_LIB)/crtn.o
# Applets reachable as /bin/NAME (links to busybox); names zerotick's own programs use stay
# theirs.
BUSYBOX_APPLETS := ls cat wc grep sort head tail seq echo test mkdir rmdir rm mv cp tr cut \
	uniq env uname expr find xargs sed awk od stat touch printf dirname basename tee id ln \
	pwd yes date ash

$(DEBS)/stamp: tools/fetch-debs
	@mkdir -p $(DEBS)
	$(Q)tools/fetch-debs $(DEBS) busybox-static musl-dev
	@touch $@

$(B)/initrd/bin/lxtest: user/linux/lxtest.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $@ (glibc, static)"
	$(Q)$(CC) $(LINUX_CFLAGS) -o $@ $<
	$(Q)$(CROSS)strip $@

# More ordinary Linux C, one glibc static program per file, as /bin/NAME: lxclock (the clocks
# a glibc program asks for).  -Iinclude/uapi lets a program include zerotick's ABI headers as
# <zt_prctl.h>, as a user's own program would.
LINUX_PROGS := $(addprefix $(B)/initrd/bin/,lxclock)

$(LINUX_PROGS): $(B)/initrd/bin/%: user/linux/%.c $(wildcard include/uapi/*.h) | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $@ (glibc, static)"
	$(Q)$(CC) $(LINUX_CFLAGS) -Iinclude/uapi -o $@ $<
	$(Q)$(CROSS)strip $@

# The optional parts: musl build, busybox and its links, /etc.  Rebuilt when an input changes.
$(B)/linux.stamp: user/linux/lxtest.c tests/linux/bbtest.sh $(DEBS)/stamp
	@mkdir -p $(B)/initrd/bin $(B)/initrd/etc
	$(Q)cp tests/linux/bbtest.sh $(B)/initrd/etc/bbtest.sh
	$(Q)printf 'root:x:0:0:root:/:/bin/sh\n' > $(B)/initrd/etc/passwd
	$(Q)printf 'root:x:0:\n' > $(B)/initrd/etc/group
	$(Q)if [ -f $(DEBS)/musl-dev.ok ]; then \
		echo "  CC      $(B)/initrd/bin/lxtest-musl (musl, static)"; \
		$(MUSL_CC) -o $(B)/initrd/bin/lxtest-musl user/linux/lxtest.c $(MUSL_LIBS) && \
		$(CROSS)strip $(B)/initrd/bin/lxtest-musl; \
	else rm -f $(B)/initrd/bin/lxtest-musl; echo "  SKIP    musl: $$(cat $(DEBS)/musl-dev.skip)"; fi
	$(Q)if [ -f $(DEBS)/busybox-static.ok ]; then \
		cp $(DEBS)/busybox-static/bin/busybox $(B)/initrd/bin/busybox; \
		for a in $(BUSYBOX_APPLETS); do \
			[ -e $(B)/initrd/bin/$$a ] || ln -s busybox $(B)/initrd/bin/$$a; done; \
	else rm -f $(B)/initrd/bin/busybox; \
		echo "  SKIP    busybox: $$(cat $(DEBS)/busybox-static.skip)"; fi
	@touch $@

# The user programs travel inside the kernel image as a cpio (newc) archive: every file,
# directory and symbolic link under build/initrd.
$(B)/initrd.cpio: $(USER_BINS) $(INITRD_DATA) $(B)/initrd/bin/lxtest $(LINUX_PROGS) \
		$(B)/linux.stamp
	@mkdir -p $(B)/initrd/bin
	@echo "  CPIO    $@"
	$(Q)if [ -d $(B)/initrd/usr/bin ]; then find $(B)/initrd/usr/bin -mindepth 1 -maxdepth 1 \
		! -name '$(PROG_NAME)' -exec rm -rf {} +; fi
	$(Q)cd $(B)/initrd && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet > ../initrd.cpio

# make run PROG=path/to/static-binary ARGS='...': the program goes into the initrd as
# /usr/bin/NAME and init runs it with ARGS (any BOOTARGS come first).  build/initrd/usr/bin
# holds exactly this run's program (nothing without PROG=): a program of an earlier run is
# removed when the archive is made, so the image does not grow run after run.
PROG_NAME := $(notdir $(PROG))
PROG_LIST := $(B)/initrd-prog.txt
.PHONY: FORCE
FORCE:
$(PROG_LIST): FORCE
	@mkdir -p $(dir $@)
	@echo '$(PROG_NAME)' | cmp -s - $@ 2>/dev/null || echo '$(PROG_NAME)' > $@
$(B)/initrd.cpio: $(PROG_LIST)
ifneq ($(PROG),)
PROG_DST := $(B)/initrd/usr/bin/$(notdir $(PROG))
override BOOTARGS := $(BOOTARGS) init=/usr/bin/$(notdir $(PROG)) -- $(ARGS)
$(PROG_DST): $(PROG)
	@mkdir -p $(dir $@)
	@echo "  PROG    $< -> /usr/bin/$(notdir $(PROG))"
	$(Q)cp $< $@ && chmod +x $@
$(B)/initrd.cpio: $(PROG_DST)
endif

$(B)/kernel/fs/initrd_blob.o $(B)/checked/kernel/fs/initrd_blob.o: $(B)/initrd.cpio

$(B)/kernel.elf: $(KERNEL_OBJS) linker.ld
	@echo "  LD      $@"
	$(Q)$(LD) $(KERNEL_LDFLAGS) -o $@ $(KERNEL_OBJS)
	@$(CROSS)size $@ | tail -n 1 | awk '{printf "kernel: text %d, data %d, bss %d bytes\n", $$1, $$2, $$3}'

$(B)/checked/kernel.elf: $(CHECKED_OBJS) linker.ld
	@echo "  LD      $@"
	$(Q)$(LD) $(KERNEL_LDFLAGS) -o $@ $(CHECKED_OBJS)

kernel: $(B)/kernel.elf
checked: $(B)/checked/kernel.elf

# The kernel's C objects once more with room for 256 CPUs instead of 512, for tools/percpu:
# what grows between the two builds is what a CPU costs in static memory (make bench).
PERCPU_OBJS := $(patsubst %,$(B)/percpu256/%.o,$(basename $(filter %.c,$(ARCH_SRCS) $(KERNEL_SRCS))))

$(B)/percpu256/%.o: %.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $< (256 CPUs)"
	$(Q)$(CC) $(KERNEL_CFLAGS) -DZT_MAX_CPUS_BUILD=256 -c $< -o $@

percpu: $(KERNEL_OBJS) $(PERCPU_OBJS)
	@$(PYTHON) tools/percpu $(B) $(B)/percpu256 256

# ---------------------------------------------------------------- QEMU
QEMU_BASE := $(QEMU) -M virt,gic-version=3 -cpu cortex-a72 -m $(MEM) -nographic -nic none \
	-semihosting-config enable=on,target=native,userspace=off
ifeq ($(REPRO),1)
QEMU_BASE += -icount shift=$(ICOUNT_SHIFT),sleep=off
endif
# tests/qemu/zt.py and tools/bench read these too: `make test REPRO=1` boots every test
# under -icount.
export REPRO ICOUNT_SHIFT
# DEBUG=1: run, debug and gdb use the checked kernel (assertions, lock owner and lock order
# checks, the watchdog on by default), the one make test boots.
ifeq ($(DEBUG),1)
RUN_KERNEL := $(B)/checked/kernel.elf
else
RUN_KERNEL := $(B)/kernel.elf
endif
QEMU_CMD = $(QEMU_BASE) -smp $(CPUS) -kernel $(RUN_KERNEL)
# BOOTARGS reaches the shell through the environment, never through make's own text, so
# any quotes in it (init=/bin/sh -- -c '...') arrive in -append unchanged.
export BOOTARGS
APPEND = $${BOOTARGS:+-append "$$BOOTARGS"}
SHOW_APPEND = $${BOOTARGS:+-append \"$$BOOTARGS\"}

run: $(RUN_KERNEL)
	@$(DEPS) run
	@echo "run: $(QEMU_CMD) $(SHOW_APPEND)"
	@echo "run: (Ctrl-A x quits QEMU)"
	@$(QEMU_CMD) $(APPEND)

# make run-net: the same, plus one virtio-net device (modern transport) on loopback only.
# NET=dgram (default): raw Ethernet frames over UDP, for tools/netload (ping, exact frames);
# NET=user: QEMU user networking with host forwards to the guest's UDP ports 7 and 9.
# Ports are picked free by tools/netload; the recipe prints what to run in the guest and on
# the host (tools/netload hints: the control port that ends udpecho, no nc needed).
NET ?= dgram
RUN_NET_BOOTARGS = $${BOOTARGS:-dataplane=2-3}

run-net: $(RUN_KERNEL)
	@$(DEPS) run
	@set -e; set -- $$($(PYTHON) tools/netload free-ports 2); \
	if [ "$(NET)" = user ]; then \
	  netdev="user,id=n0,hostfwd=udp:127.0.0.1:$$1-:7,hostfwd=udp:127.0.0.1:$$2-:9"; \
	elif [ "$(NET)" = dgram ]; then \
	  netdev="dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=$$1"; \
	  netdev="$$netdev,remote.type=inet,remote.host=127.0.0.1,remote.port=$$2"; \
	else echo "run-net: NET must be dgram or user, not '$(NET)'"; exit 2; fi; \
	args="$(RUN_NET_BOOTARGS)"; \
	echo "run-net: $(QEMU_CMD) -global virtio-mmio.force-legacy=false -netdev $$netdev -device virtio-net-device,netdev=n0 -append \"$$args\""; \
	$(PYTHON) tools/netload hints --net $(NET) $$1 $$2 | sed 's/^/run-net: /'; \
	echo "run-net: (Ctrl-A x quits QEMU)"; \
	$(QEMU_CMD) -global virtio-mmio.force-legacy=false -netdev "$$netdev" \
	  -device virtio-net-device,netdev=n0 -append "$$args"

debug: $(RUN_KERNEL)
	@$(DEPS) run
	@echo "debug: $(QEMU_CMD) $(SHOW_APPEND) -s -S"
	@echo "debug: QEMU is halted with a gdb stub on :1234; in another terminal run 'make gdb'"
	@$(QEMU_CMD) $(APPEND) -s -S

gdb: $(RUN_KERNEL)
	@$(DEPS) debug
	gdb-multiarch -q -x tools/gdbinit $(RUN_KERNEL)

# ---------------------------------------------------------------- tests
HOST_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Wno-unused-parameter \
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -DZT_HOST \
	-DZT_CHECKED \
	-Iinclude -Iarch/host -MMD -MP
# Pure logic built for the host against the fake arch: every kernel/ C file, the fake arch,
# and the one arch file that is pure parsing (arch/aarch64/dt.c, QEMU virt's device tree).
HOST_LIB_SRCS := $(filter %.c,$(KERNEL_SRCS)) $(wildcard arch/host/*.c) \
	arch/aarch64/dt.c
HOST_LIB_OBJS := $(patsubst %.c,$(B)/host/%.o,$(HOST_LIB_SRCS))
UNIT_SRCS     := $(wildcard tests/unit/test_*.c)
UNIT_BINS     := $(patsubst tests/unit/%.c,$(B)/host/tests/%,$(UNIT_SRCS))

$(B)/host/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $<"
	$(Q)$(HOSTCC) $(HOST_CFLAGS) -c $< -o $@

$(B)/host/libzt.a: $(HOST_LIB_OBJS)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(B)/host/tests/%: tests/unit/%.c $(B)/host/libzt.a
	@mkdir -p $(dir $@)
	@echo "  HOSTLD  $@"
	$(Q)$(HOSTCC) $(HOST_CFLAGS) -Itests/unit -o $@ $< $(B)/host/libzt.a -lcmocka -lpthread

# The dataplane's parts that need no kernel (user/net: frame parsing, virtqueue rings, the
# driver's checks) built for the host, so tests/unit/test_net*.c can feed them hostile frames
# and play the device under ASan/UBSan.
NET_HOST_OBJS := $(B)/host/user/net/frame.o $(B)/host/user/net/virtq.o $(B)/host/user/net/nic.o

NET_UNIT_BINS := $(filter $(B)/host/tests/test_net%,$(UNIT_BINS))

$(NET_UNIT_BINS): $(B)/host/tests/%: tests/unit/%.c $(NET_HOST_OBJS)
	@mkdir -p $(dir $@)
	@echo "  HOSTLD  $@"
	$(Q)$(HOSTCC) $(HOST_CFLAGS) -Itests/unit -Iuser/net -o $@ $< $(NET_HOST_OBJS) -lcmocka

# The noise meters' arithmetic (user/lib/latstat.c) next to the kernel's: test_latstat.
$(B)/host/tests/test_latstat: tests/unit/test_latstat.c $(B)/host/user/lib/latstat.o \
		$(B)/host/libzt.a
	@mkdir -p $(dir $@)
	@echo "  HOSTLD  $@"
	$(Q)$(HOSTCC) $(HOST_CFLAGS) -Itests/unit -Iuser/lib -o $@ $< $(B)/host/user/lib/latstat.o \
		$(B)/host/libzt.a -lcmocka -lpthread

unit: deps-test $(UNIT_BINS)

# QEMU's own device trees, read by tests/unit/test_fdt.c from the repository root; the test
# checks the values these options produce (memory size, CPUs, PSCI conduit, bootargs text).
# -append needs a -kernel; QEMU exits right after dumping, so any file will do.  No display
# (QEMU would look for its GUI modules and say so), and QEMU's own lines ("dtb dumped ...
# Exiting.") are shown only if the dump fails.
DTB_DUMPS  := $(addprefix $(B)/dtb/virt-,1.dtb 4.dtb 64.dtb 124.dtb 512.dtb 4-el2.dtb 4-noargs.dtb)
DTB_QEMU   := dtb_qemu() { out=$$($(QEMU) -display none -cpu cortex-a72 -m 512M -nic none "$$@" 2>&1) \
	|| { echo "$$out" >&2; return 1; }; }; dtb_qemu
DTB_APPEND := dataplane=2-3 hello

$(B)/dtb/dummy-kernel:
	@mkdir -p $(dir $@)
	$(Q)echo 'not a kernel: lets qemu take -append while dumping its device tree' > $@

$(B)/dtb/virt-1.dtb $(B)/dtb/virt-4.dtb $(B)/dtb/virt-64.dtb $(B)/dtb/virt-124.dtb \
$(B)/dtb/virt-512.dtb: $(B)/dtb/virt-%.dtb: \
		$(B)/dtb/dummy-kernel | deps-test
	@echo "  DTB     $@"
	$(Q)$(DTB_QEMU) -M virt,gic-version=3,dumpdtb=$@ -smp $* -kernel $< -append '$(DTB_APPEND)'

$(B)/dtb/virt-4-el2.dtb: $(B)/dtb/dummy-kernel | deps-test
	@echo "  DTB     $@"
	$(Q)$(DTB_QEMU) -M virt,gic-version=3,virtualization=on,dumpdtb=$@ -smp 4 -kernel $< \
		-append '$(DTB_APPEND)'

$(B)/dtb/virt-4-noargs.dtb: | deps-test
	@mkdir -p $(dir $@)
	@echo "  DTB     $@"
	$(Q)$(DTB_QEMU) -M virt,gic-version=3,dumpdtb=$@ -smp 4

unit: $(DTB_DUMPS)

.PHONY: deps-test
deps-test:
	@$(DEPS) build run test

# The QEMU tests boot the checked kernel (ZT_KERNEL is read by tests/qemu/zt.py).
# The formatting check (make check-format) is the first test of make test.
test: deps-test
	@$(DEPS) format
	@$(MAKE) --no-print-directory $(B)/kernel.elf $(B)/checked/kernel.elf unit
	@ZT_KERNEL=$(B)/checked/kernel.elf $(PYTHON) tools/runtests --check-format $(UNIT_BINS)

# The documentation's marked samples, booted and compared (tools/doccheck; make test runs them
# as DOC-02).  DOCS='docs/boot.md' for one page.
doccheck: deps-test
	@$(MAKE) --no-print-directory $(B)/checked/kernel.elf
	@ZT_KERNEL=$(B)/checked/kernel.elf $(PYTHON) tools/doccheck $(DOCS)

# The long fuzz run (docs/security.md): FUZZ_CALLS calls in FUZZ_WORKERS workers from
# FUZZ_SEED on the checked kernel; FUZZ_DATAPLANE=1 adds dataplane CPUs 2-3 and steers the
# workers into task isolation.  The console goes to build/fuzz/fuzz-SEED.log and
# tools/fuzzsum prints the totals; the exit status is the fuzzer's (0: PASS).
FUZZ_CALLS     ?= 1000000
FUZZ_SEED      ?= 1
FUZZ_WORKERS   ?= 4
FUZZ_DATAPLANE ?= 0
FUZZ_LOG       := $(B)/fuzz/fuzz-$(FUZZ_SEED)$(if $(filter 1,$(FUZZ_DATAPLANE)),-dataplane).log
FUZZ_APPEND    := quiet$(if $(filter 1,$(FUZZ_DATAPLANE)), dataplane=2-3) init=/bin/fuzz -- \
	-n $(FUZZ_CALLS) -s $(FUZZ_SEED) -w $(FUZZ_WORKERS)$(if $(filter 1,$(FUZZ_DATAPLANE)), -i)

fuzz: deps-test
	@$(MAKE) --no-print-directory $(B)/checked/kernel.elf
	@mkdir -p $(B)/fuzz
	@echo "fuzz: $(QEMU_BASE) -smp $(CPUS) -kernel $(B)/checked/kernel.elf -append '$(FUZZ_APPEND)'"
	@echo "fuzz: console in $(FUZZ_LOG)"
	@{ $(QEMU_BASE) -smp $(CPUS) -kernel $(B)/checked/kernel.elf -append '$(FUZZ_APPEND)' \
	    < /dev/null; echo $$? > $(FUZZ_LOG).status; } | tr -d '\000' | tee $(FUZZ_LOG) | grep -a -v '^fuzz: life' || true
	@$(PYTHON) tools/fuzzsum $(FUZZ_LOG); exit $$(cat $(FUZZ_LOG).status)

# The long stress runs of /bin/stress: 10,000 spawn/exit cycles and thread bursts until
# the kernel refuses (make test runs the short ones).
stress-long: deps-test
	@$(MAKE) --no-print-directory $(B)/checked/kernel.elf
	$(QEMU_BASE) -smp $(CPUS) -kernel $(B)/checked/kernel.elf \
	    -append 'quiet init=/bin/stress -- spawn_cycles_10k thread_bursts_limit' < /dev/null

bench: deps-test
	@$(DEPS) bench
	@$(MAKE) --no-print-directory $(B)/kernel.elf
	@$(PYTHON) tools/bench $(if $(filter 1,$(REPRO_ONLY)),--repro-only)

# make compare: zerotick and Debian's Linux (fetched with apt-get download, cached under
# build/debs) on the same QEMU, the same program files -> bench/compare.md (tools/compare).
# COMPARE_ARGS='--only micro' or '--quick' pass through.
compare: deps-test
	@$(DEPS) bench
	@$(MAKE) --no-print-directory $(B)/kernel.elf
	@$(PYTHON) tools/compare $(COMPARE_ARGS)

# ---------------------------------------------------------------- labs
# Graded labs (labs/README.md): make lab LAB=NAME makes the student's starting tree (a git
# worktree on branch lab/NAME beside this one, or DIR=); make grade runs the lab's graded
# tests in a lab tree (LAB= names the lab to grade the reference tree against); make lab-ci
# grades every lab's stubbed tree, the reference and every wrong solution and fails when a
# score drifts from what the lab's description says (.ci/run runs it after make test).
lab: deps-test
	@if [ -z "$(LAB)" ]; then $(PYTHON) tools/lab list; echo "lab: say which: make lab LAB=NAME"; exit 2; fi
	@$(PYTHON) tools/lab start $(LAB) $(if $(DIR),--dir $(DIR))

grade: deps-test
	@$(PYTHON) tools/lab grade $(LAB)

lab-ci: deps-test
	@$(MAKE) --no-print-directory $(B)/kernel.elf $(B)/checked/kernel.elf unit
	@$(PYTHON) tools/lab ci $(LAB)

# ---------------------------------------------------------------- housekeeping
FORMAT_FILES = $(shell git ls-files '*.c' '*.h')

format:
	@$(DEPS) format
	clang-format -i --style=file $(FORMAT_FILES)

check-format:
	@$(DEPS) format
	@clang-format --dry-run --Werror --style=file $(FORMAT_FILES) && echo "check-format: clean"

# clean keeps what was downloaded (build/debs: Debian's busybox, musl, Linux), which only the
# archive can give back; distclean removes that too.
clean:
	@if [ -d $(B) ]; then echo "rm -rf everything in $(B)/ but $(B)/debs"; \
		find $(B) -mindepth 1 -maxdepth 1 ! -name debs -exec rm -rf {} +; fi

distclean:
	rm -rf $(B)

help:
	@echo "zerotick make targets:"
	@echo "  make / make kernel   build $(B)/kernel.elf (user programs inside)"
	@echo "  make checked         build $(B)/checked/kernel.elf: assertions on (what make test boots)"
	@echo "  make run DEBUG=1     boot the checked kernel (lock order checked, watchdog on)"
	@echo "  make run             boot it in QEMU (CPUS=$(CPUS), MEM=$(MEM), BOOTARGS='...', REPRO=1); Ctrl-A x quits"
	@echo "  make run PROG=FILE ARGS='...'  boot with your static Linux aarch64 program as the first program"
	@echo "                       (it is /usr/bin/NAME, first on the shell's PATH; earlier runs' programs are removed)"
	@echo "  make test            check-format, host unit tests, QEMU tests; ends with 'N passed, N failed'"
	@echo "  make doccheck        boot every sample the docs mark and compare (DOCS=docs/boot.md: one page)"
	@echo "  make bench           benchmarks -> bench/results.md"
	@echo "  make percpu          static memory a CPU costs, checked against a 256-CPU build"
	@echo "  make compare         zerotick and Debian's Linux side by side -> bench/compare.md"
	@echo "  make fuzz            the long fuzz run (FUZZ_CALLS=1000000 FUZZ_SEED=1 FUZZ_WORKERS=4 FUZZ_DATAPLANE=0)"
	@echo "  make stress-long     10,000 spawn/exit cycles and thread bursts to the kernel's limit"
	@echo "  make run-net         boot with a virtio-net device on loopback (NET=dgram|user)"
	@echo "  make debug           QEMU halted with a gdb stub on :1234"
	@echo "  make gdb             gdb-multiarch attached to 'make debug', stopped at the first instruction"
	@echo "  make lab LAB=NAME    a graded lab's starting tree (make lab: the list; labs/README.md)"
	@echo "  make grade           in a lab tree: build and grade it (LAB=NAME: grade this tree for that lab)"
	@echo "  make lab-ci          every lab: stubbed, reference and wrong trees graded, scores checked"
	@echo "  make format          clang-format every C file in place"
	@echo "  make check-format    fail if any C file is not formatted"
	@echo "  make clean           remove $(B)/ but the downloads in $(B)/debs"
	@echo "  make distclean       remove $(B)/, downloads included"
	@echo "Missing Debian packages are installed on demand (tools/deps.sh)."

-include $(shell find $(B) -name '*.d' -type f 2>/dev/null)
