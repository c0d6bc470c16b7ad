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
, := ,

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
# The coverage kernel (make cover): the checked kernel with every kernel/ C file compiled with
# -fsanitize-coverage=trace-pc (the compiler calls __sanitizer_cov_trace_pc at the start of
# every basic block), except kernel/sys/kcov.c, which is what those calls reach.  arch/ is
# not instrumented.  The fuzzer's coverage mode and tools/covreport use it; the release and
# checked kernels have no instrumentation at all.
COVER_OBJS   := $(patsubst %,$(B)/cover/%.o,$(basename $(ARCH_SRCS) $(KERNEL_SRCS)))
# (No sibling calls: a block that ends a function would call the recorder as a tail call,
# and the recorder would see its caller's caller as the block.)
COVER_CFLAGS := -fsanitize-coverage=trace-pc -fno-optimize-sibling-calls
COVER_EXEMPT := kernel/sys/kcov.c

# ---------------------------------------------------------------- user programs
# -mno-outline-atomics: compare-and-swap inline (LDAXR/STXR), not a call that tests for LSE
# at run time (the rings' MP/MC paths, user/lib/ring.h; Cortex-A72 is ARMv8.0, without LSE).
USER_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -mno-outline-atomics \
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

.PHONY: all kernel checked cover percpu run run-net debug gdb test unit bench compare fuzz stress-long format \
	check-format clean distclean help deps-build doccheck lab grade lab-ci
all: $(B)/kernel.elf $(B)/kernel.bin

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
$(patsubst %,$(B)/checked/%.o,$(basename $(wildcard arch/aarch64/*.S))) \
$(patsubst %,$(B)/cover/%.o,$(basename $(wildcard arch/aarch64/*.S))): $(ASM_OFFSETS)

$(B)/checked/%.o: %.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $< (checked)"
	$(Q)$(CC) $(KERNEL_CFLAGS) -DZT_CHECKED -c $< -o $@

$(B)/checked/%.o: %.S | deps-build
	@mkdir -p $(dir $@)
	@echo "  AS      $< (checked)"
	$(Q)$(CC) $(KERNEL_ASFLAGS) -DZT_CHECKED -c $< -o $@

# The vDSO (arch/aarch64/vdso/, include/uapi/zt_vdso.h): EL0 code built as a small shared
# object, "linux-vdso.so.1", carried in the kernel image by arch/aarch64/vdso_blob.S.  Nothing
# relocates it once mapped, so an image with any relocation is refused here.
VDSO        := $(B)/vdso/vdso.so
VDSO_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -fPIC -fvisibility=hidden -ffreestanding \
	-fno-builtin -fno-stack-protector -mgeneral-regs-only -fno-asynchronous-unwind-tables \
	-fno-unwind-tables -Iinclude
VDSO_LDFLAGS := -nostdlib -shared -Wl,-soname=linux-vdso.so.1 -Wl,--hash-style=both \
	-Wl,-Bsymbolic -Wl,-z,max-page-size=4096 -Wl,-z,noexecstack -Wl,--build-id=none \
	-Wl,-T,arch/aarch64/vdso/vdso.lds

$(VDSO): arch/aarch64/vdso/vdso.c arch/aarch64/vdso/vdso.lds include/uapi/zt_vdso.h \
		include/uapi/zt_clock.h include/uapi/zt_errno.h | deps-build
	@mkdir -p $(dir $@)
	@echo "  VDSO    $@"
	$(Q)$(CC) $(VDSO_CFLAGS) -c $< -o $(B)/vdso/vdso.o
	$(Q)$(CC) $(VDSO_LDFLAGS) $(B)/vdso/vdso.o -o $@.full
	$(Q)if $(CROSS)readelf -rW $@.full | grep -q R_AARCH64; then \
		echo "vdso: the image needs relocating:" >&2; $(CROSS)readelf -rW $@.full >&2; exit 1; fi
	$(Q)$(CROSS)strip -o $@ $@.full

$(B)/arch/aarch64/vdso_blob.o $(B)/checked/arch/aarch64/vdso_blob.o $(B)/cover/arch/aarch64/vdso_blob.o: $(VDSO)

$(B)/cover/%.o: %.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $< (cover)"
	$(Q)$(CC) $(KERNEL_CFLAGS) -DZT_CHECKED -DZT_COVER \
	  $(if $(filter kernel/%,$<),$(if $(filter $(COVER_EXEMPT),$<),,$(COVER_CFLAGS))) -c $< -o $@

$(B)/cover/%.o: %.S | deps-build
	@mkdir -p $(dir $@)
	@echo "  AS      $< (cover)"
	$(Q)$(CC) $(KERNEL_ASFLAGS) -DZT_CHECKED -DZT_COVER -c $< -o $@

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
# Dynamically linked against musl (its loader and libc.so from Debian's arm64 musl): a PIE
# that names /lib/ld-musl-aarch64.so.1, and a shared library.
MUSL_SO     := $(DEBS)/musl/lib/aarch64-linux-musl
MUSL_DYN    = $(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -nostdinc -nostdlib \
	-isystem $(MUSL)/include/aarch64-linux-musl -isystem $$($(CC) -print-file-name=include)
MUSL_DYN_END = -L$(MUSL_SO) -lc $$($(CC) -print-libgcc-file-name) \
	$$($(CC) -print-file-name=crtendS.o) $(MUSL_LIB)/crtn.o
# Applets reachable as /bin/NAME (links to busybox); names zerotick's own programs use stay
# theirs.
BUSYBOX_APPLETS := ls cat wc grep sort head tail seq echo test mkdir rmdir rm mv cp tr cut \
	uniq env uname expr find xargs sed awk od stat touch printf dirname basename tee id ln \
	pwd yes date ash

# One user runs everything (root), but programs and test harnesses look up the usual system
# users and groups (nobody, nogroup, daemon, ...): Debian's base-passwd entries.
ETC_PASSWD := root:x:0:0:root:/:/bin/sh daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin \
	bin:x:2:2:bin:/bin:/usr/sbin/nologin sys:x:3:3:sys:/dev:/usr/sbin/nologin \
	sync:x:4:65534:sync:/bin:/bin/sync mail:x:8:8:mail:/var/mail:/usr/sbin/nologin \
	www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin \
	nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
ETC_GROUP := root:x:0: daemon:x:1: bin:x:2: sys:x:3: adm:x:4: tty:x:5: disk:x:6: lp:x:7: \
	mail:x:8: kmem:x:15: dialout:x:20: www-data:x:33: users:x:100: nogroup:x:65534:

$(DEBS)/stamp: tools/fetch-debs Makefile
	@mkdir -p $(DEBS)
	$(Q)tools/fetch-debs $(DEBS) busybox-static musl-dev musl
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

# Dynamically linked programs (docs/linux-abi.md): Debian's glibc shared libraries
# (libc6-arm64-cross) go into the initrd at their Debian paths, with the interpreter's link as
# Debian has it; there is no ld.so.cache (the loader searches its built-in directories, the
# multiarch ones first).  dyntest is built as Debian's compiler builds by default (a dynamic
# PIE) and as a static-pie, and dlopen()s libztdyn.so; maptest (dynamic) checks file
# mappings; vdsotest (dynamic and static) glibc's clock calls through the vDSO; the dynbad-*
# programs are corrupt copies of dyntest (tools/mkbadelf).
GLIBC_SO   := /usr/aarch64-linux-gnu/lib
DYN_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror
DYN_LIBDIR := $(B)/initrd/usr/lib/aarch64-linux-gnu
GLIBC_LIBS := ld-linux-aarch64.so.1 libc.so.6 libm.so.6
INITRD_DYN := $(addprefix $(B)/initrd/lib/aarch64-linux-gnu/,$(GLIBC_LIBS)) \
	$(B)/initrd/lib/ld-linux-aarch64.so.1 \
	$(DYN_LIBDIR)/libztdyn.so $(B)/initrd/bin/dyntest $(B)/initrd/bin/dyntest-static-pie \
	$(B)/initrd/bin/maptest $(B)/dynbad.stamp $(B)/initrd/bin/vdsotest \
	$(B)/initrd/bin/vdsotest-static

$(B)/initrd/lib/aarch64-linux-gnu/%: | deps-build
	@mkdir -p $(dir $@)
	$(Q)cp $(GLIBC_SO)/$* $@

$(B)/initrd/lib/ld-linux-aarch64.so.1:
	@mkdir -p $(dir $@)
	$(Q)ln -sfn aarch64-linux-gnu/ld-linux-aarch64.so.1 $@

$(DYN_LIBDIR)/libztdyn.so: user/linux/ztdyn.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $@ (glibc, shared library)"
	$(Q)$(CC) $(DYN_CFLAGS) -shared -fPIC -o $@ $<
	$(Q)$(CROSS)strip $@

$(B)/initrd/bin/dyntest $(B)/initrd/bin/maptest $(B)/initrd/bin/vdsotest: \
		$(B)/initrd/bin/%: user/linux/%.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $@ (glibc, dynamic)"
	$(Q)$(CC) $(DYN_CFLAGS) -o $@ $< -pthread
	$(Q)$(CROSS)strip $@

# glibc's linker warning about dlopen in a static program is the point here: kept quiet.
$(B)/initrd/bin/dyntest-static-pie: user/linux/dyntest.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $@ (glibc, static-pie)"
	$(Q)$(CC) $(DYN_CFLAGS) -static-pie -o $@ $< -pthread 2> $(B)/static-pie.log \
		|| { cat $(B)/static-pie.log; exit 1; }
	$(Q)$(CROSS)strip $@

$(B)/initrd/bin/vdsotest-static: user/linux/vdsotest.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $@ (glibc, static)"
	$(Q)$(CC) $(DYN_CFLAGS) -static -o $@ $<
	$(Q)$(CROSS)strip $@

$(B)/dynbad.stamp: $(B)/initrd/bin/dyntest tools/mkbadelf
	$(Q)$(PYTHON) tools/mkbadelf $< $(B)/initrd/bin
	@touch $@

# The Linux side of make compare's networking table: a UDP echo over Linux's own sockets
# (user/linux/sockecho.c), static glibc; it runs only under Linux, so it is not in /bin.
$(B)/linux/sockecho: user/linux/sockecho.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $@ (glibc, static)"
	$(Q)$(CC) $(LINUX_CFLAGS) -o $@ $<
	$(Q)$(CROSS)strip $@

$(B)/initrd/bin/proctest $(B)/initrd/bin/abitest: $(B)/initrd/bin/%: user/linux/%.c | deps-build
	@mkdir -p $(dir $@)
	@echo "  CC      $@ (glibc, static)"
	$(Q)$(CC) $(LINUX_CFLAGS) -Wno-format-truncation -o $@ $<
	$(Q)$(CROSS)strip $@

# The optional parts: musl builds (static lxtest; dynamic dyntest with musl's loader, libc.so
# and a libztdyn.so of its own in /usr/lib, where musl's loader looks), busybox and its links,
# /etc.  Rebuilt when an input changes.
$(B)/linux.stamp: user/linux/lxtest.c user/linux/dyntest.c user/linux/ztdyn.c user/linux/vdsotest.c \
		tests/linux/bbtest.sh $(DEBS)/stamp Makefile
	@mkdir -p $(B)/initrd/bin $(B)/initrd/etc
	$(Q)cp tests/linux/bbtest.sh $(B)/initrd/etc/bbtest.sh
	$(Q)printf '%s\n' $(ETC_PASSWD) > $(B)/initrd/etc/passwd
	$(Q)printf '%s\n' $(ETC_GROUP) > $(B)/initrd/etc/group
	$(Q)if [ -f $(DEBS)/musl-dev.ok ]; then \
		echo "  CC      $(B)/initrd/bin/lxtest-musl (musl, static)"; \
		$(MUSL_CC) -o $(B)/initrd/bin/lxtest-musl user/linux/lxtest.c $(MUSL_LIBS) && \
		$(CROSS)strip $(B)/initrd/bin/lxtest-musl; \
	else rm -f $(B)/initrd/bin/lxtest-musl; echo "  SKIP    musl: $$(cat $(DEBS)/musl-dev.skip)"; fi
	$(Q)if [ -f $(DEBS)/musl-dev.ok ] && [ -f $(DEBS)/musl.ok ]; then \
		echo "  CC      $(B)/initrd/bin/dyntest-musl (musl, dynamic)"; \
		mkdir -p $(B)/initrd/lib/aarch64-linux-musl $(B)/initrd/usr/lib && \
		cp $(MUSL_SO)/libc.so $(B)/initrd/lib/aarch64-linux-musl/libc.so && \
		ln -sfn aarch64-linux-musl/libc.so $(B)/initrd/lib/ld-musl-aarch64.so.1 && \
		$(MUSL_DYN) -shared -fPIC -o $(B)/initrd/usr/lib/libztdyn.so $(MUSL_LIB)/crti.o \
			$$($(CC) -print-file-name=crtbeginS.o) user/linux/ztdyn.c $(MUSL_DYN_END) && \
		$(MUSL_DYN) -fPIE -pie -Wl,-dynamic-linker,/lib/ld-musl-aarch64.so.1 \
			-o $(B)/initrd/bin/dyntest-musl $(MUSL_LIB)/Scrt1.o $(MUSL_LIB)/crti.o \
			$$($(CC) -print-file-name=crtbeginS.o) user/linux/dyntest.c $(MUSL_DYN_END) && \
		$(MUSL_DYN) -fPIE -pie -Wl,-dynamic-linker,/lib/ld-musl-aarch64.so.1 \
			-o $(B)/initrd/bin/vdsotest-musl $(MUSL_LIB)/Scrt1.o $(MUSL_LIB)/crti.o \
			$$($(CC) -print-file-name=crtbeginS.o) user/linux/vdsotest.c $(MUSL_DYN_END) && \
		$(CROSS)strip $(B)/initrd/bin/dyntest-musl $(B)/initrd/bin/vdsotest-musl \
			$(B)/initrd/usr/lib/libztdyn.so; \
	else rm -rf $(B)/initrd/bin/dyntest-musl $(B)/initrd/bin/vdsotest-musl \
		$(B)/initrd/usr/lib/libztdyn.so \
		$(B)/initrd/lib/aarch64-linux-musl $(B)/initrd/lib/ld-musl-aarch64.so.1; \
		echo "  SKIP    musl dynamic: $$(cat $(DEBS)/musl.skip $(DEBS)/musl-dev.skip 2>/dev/null)"; fi
	$(Q)if [ -f $(DEBS)/busybox-static.ok ]; then \
		cp $(DEBS)/busybox-static/bin/busybox $(B)/initrd/bin/busybox; \
		for a in $(BUSYBOX_APPLETS); do \
			[ -e $(B)/initrd/bin/$$a ] || ln -s busybox $(B)/initrd/bin/$$a; done; \
	else rm -f $(B)/initrd/bin/busybox; \
		echo "  SKIP    busybox: $$(cat $(DEBS)/busybox-static.skip)"; fi
	@touch $@

# Data files of the user programs: user/etc/NAME is /etc/NAME (/bin/pipeline's example route
# table, and one it must refuse).
ETC_FILES := $(patsubst user/etc/%,$(B)/initrd/etc/%,$(wildcard user/etc/*))

$(B)/initrd/etc/%: user/etc/%
	@mkdir -p $(dir $@)
	$(Q)cp $< $@

# The user programs travel inside the kernel image as a cpio (newc) archive: every file,
# directory and symbolic link under build/initrd.
$(B)/initrd.cpio: $(USER_BINS) $(INITRD_DATA) $(ETC_FILES) $(B)/initrd/bin/lxtest $(LINUX_PROGS) \
		$(B)/initrd/bin/proctest $(B)/initrd/bin/abitest $(B)/linux.stamp $(INITRD_DYN)
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

$(B)/kernel/fs/initrd_blob.o $(B)/checked/kernel/fs/initrd_blob.o \
$(B)/cover/kernel/fs/initrd_blob.o: $(B)/initrd.cpio

$(B)/kernel.elf: $(KERNEL_OBJS) linker.ld
	@echo "  LD      $@"
	$(Q)$(LD) $(KERNEL_LDFLAGS) -o $@ $(KERNEL_OBJS)
	@$(CROSS)size $@ | tail -n 1 | awk '{printf "kernel: text %d, data %d, bss %d bytes\n", $$1, $$2, $$3}'

$(B)/checked/kernel.elf: $(CHECKED_OBJS) linker.ld
	@echo "  LD      $@"
	$(Q)$(LD) $(KERNEL_LDFLAGS) -o $@ $(CHECKED_OBJS)

$(B)/cover/kernel.elf: $(COVER_OBJS) linker.ld
	@echo "  LD      $@"
	$(Q)$(LD) $(KERNEL_LDFLAGS) -Map=$(B)/cover/kernel.map -o $@ $(COVER_OBJS)

# The same kernel as a Linux arm64 Image (boot.S starts with its header): what a Linux boot
# loader, or QEMU's -kernel with -initrd, loads; it passes the device tree in x0 and can hand
# over an initrd (make run INITRD=..., docs/linux-abi.md).
$(B)/kernel.bin $(B)/checked/kernel.bin: %.bin: %.elf
	@echo "  IMAGE   $@"
	$(Q)$(CROSS)objcopy -O binary $< $@

kernel: $(B)/kernel.elf $(B)/kernel.bin
checked: $(B)/checked/kernel.elf $(B)/checked/kernel.bin
cover: $(B)/cover/kernel.elf

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
# DEB='rt-tests stress-ng': Debian's arm64 packages and the libraries they need, fetched with
# apt-get download (tools/fetch-debs --with-libs, cached under build/debs) and packed into an
# initrd overlay (tools/deb-initrd), which the boot hands over as below: /usr/bin/oslat etc.
ifneq ($(DEB),)
DEB_INITRD := $(DEBS)/initrd-$(shell echo $(sort $(DEB)) | tr ' ' '+').cpio
INITRD := $(DEB_INITRD)
$(DEB_INITRD): tools/fetch-debs tools/deb-initrd
	@mkdir -p $(DEBS)
	$(Q)tools/fetch-debs --with-libs $(DEBS) $(DEB)
	$(Q)$(PYTHON) tools/deb-initrd $@ $(DEB)
run: $(DEB_INITRD)
endif
# INITRD=FILE: a cpio newc archive handed over as Linux's initrd is (QEMU's -initrd), layered
# over the built-in tree; the kernel is then booted as a Linux Image, which is how QEMU passes
# one (with an ELF file it ignores -initrd).
ifneq ($(INITRD),)
RUN_KERNEL := $(RUN_KERNEL:.elf=.bin)
RUN_INITRD := -initrd $(INITRD)
endif
QEMU_CMD = $(QEMU_BASE) -smp $(CPUS) -kernel $(RUN_KERNEL) $(RUN_INITRD)
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

# make run-net: the same, plus one virtio-net device whose host side stays on this machine
# (tools/run-net says how): NET=dgram (default: raw Ethernet frames over UDP on 127.0.0.1, for
# tools/netload), NET=user (QEMU user networking with host forwards to the guest's UDP ports 7
# and 9), NET=pci (a virtio-net-pci behind the SMMU, -M virt,iommu=smmuv3); NETQ=N (NET=pci):
# N queue pairs with RSS on a host-only multi-queue tap (root), created and removed by the
# script.  Ports are picked free; the script prints what to run in the guest and on the host.
NET  ?= dgram
NETQ ?= 1

run-net: $(RUN_KERNEL)
	@$(DEPS) run
	@tools/run-net "$(NET)" "$(NETQ)" "$(CPUS)" "$$BOOTARGS" -- $(QEMU_BASE) -kernel $(RUN_KERNEL)

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
NET_HOST_OBJS := $(B)/host/user/net/frame.o $(B)/host/user/net/virtq.o $(B)/host/user/net/nic.o \
	$(B)/host/user/net/vdev.o \
	$(B)/host/user/net/route.o $(B)/host/user/net/fwd.o

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

# The coverage-guided fuzzer's programs, corpus and mutations (user/fuzz/prog.c): test_fuzzprog.
$(B)/host/tests/test_fuzzprog: tests/unit/test_fuzzprog.c $(B)/host/user/fuzz/prog.o
	@mkdir -p $(dir $@)
	@echo "  HOSTLD  $@"
	$(Q)$(HOSTCC) $(HOST_CFLAGS) -Itests/unit -Iuser/fuzz -o $@ $< $(B)/host/user/fuzz/prog.o \
		-lcmocka

# The dataplane rings (user/lib/ring.h): test_ring under ASan and UBSan like every unit test,
# and the same source again as test_ring_tsan under ThreadSanitizer (which cannot be combined
# with ASan), whose C11 happens-before model catches a missing acquire or release on x86 too.
RING_TSAN_BIN := $(B)/host/tests/test_ring_tsan
UNIT_BINS     += $(RING_TSAN_BIN)

$(B)/host/tests/test_ring: tests/unit/test_ring.c $(B)/host/user/lib/ring.o
	@mkdir -p $(dir $@)
	@echo "  HOSTLD  $@"
	$(Q)$(HOSTCC) $(HOST_CFLAGS) -Itests/unit -Iuser/lib -o $@ $< $(B)/host/user/lib/ring.o \
		-lcmocka -lpthread

$(RING_TSAN_BIN): tests/unit/test_ring.c user/lib/ring.c user/lib/ring.h
	@mkdir -p $(dir $@)
	@echo "  HOSTLD  $@ (ThreadSanitizer)"
	$(Q)$(HOSTCC) $(filter-out -fsanitize=% -MMD -MP,$(HOST_CFLAGS)) -fsanitize=thread \
		-Itests/unit -Iuser/lib -o $@ tests/unit/test_ring.c user/lib/ring.c -lcmocka -lpthread

unit: deps-test $(UNIT_BINS)

# QEMU's own device trees, read by tests/unit/test_fdt.c from the repository root; the test
# checks the values these options produce (memory size, CPUs, PSCI conduit, bootargs text).
# -append needs a -kernel; QEMU exits right after dumping, so any file will do.  No display
# (QEMU would look for its GUI modules and say so), and QEMU's own lines ("dtb dumped ...
# Exiting.") are shown only if the dump fails.
DTB_DUMPS  := $(addprefix $(B)/dtb/virt-,1.dtb 4.dtb 64.dtb 124.dtb 512.dtb 4-el2.dtb 4-noargs.dtb \
	4-smmu.dtb 4-initrd.dtb)
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

# The PCIe and SMMU nodes with the IOMMU on (tests/unit/test_pci.c): QEMU writes the same
# pcie node with or without devices behind it; -nic none keeps the default NIC out.
$(B)/dtb/virt-4-smmu.dtb: $(B)/dtb/dummy-kernel | deps-test
	@echo "  DTB     $@"
	$(Q)$(DTB_QEMU) -M virt,gic-version=3,iommu=smmuv3,dumpdtb=$@ -smp 4 -kernel $< \
		-append '$(DTB_APPEND)'

# A boot loader's initrd (-initrd, which QEMU passes with a Linux image: the dummy kernel is
# taken for one) of exactly 1000 bytes: /chosen linux,initrd-start and -end (test_fdt IRD-01).
$(B)/dtb/initrd-1000:
	@mkdir -p $(dir $@)
	$(Q)head -c 1000 /dev/zero > $@

$(B)/dtb/virt-4-initrd.dtb: $(B)/dtb/dummy-kernel $(B)/dtb/initrd-1000 | deps-test
	@echo "  DTB     $@"
	$(Q)$(DTB_QEMU) -M virt,gic-version=3,dumpdtb=$@ -smp 4 -kernel $< \
		-initrd $(B)/dtb/initrd-1000 -append '$(DTB_APPEND)'

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
	@$(MAKE) --no-print-directory $(B)/kernel.elf $(B)/checked/kernel.elf \
		$(B)/checked/kernel.bin $(B)/cover/kernel.elf unit
	@ZT_KERNEL=$(B)/checked/kernel.elf $(PYTHON) tools/runtests --check-format $(UNIT_BINS)

# The documentation's marked samples, booted and compared (tools/doccheck; make test runs them
# as DOC-02).  DOCS='docs/boot.md' for one page.
doccheck: deps-test
	@$(MAKE) --no-print-directory $(B)/checked/kernel.elf
	@ZT_KERNEL=$(B)/checked/kernel.elf $(PYTHON) tools/doccheck $(DOCS)

# The long fuzz run (docs/security.md): FUZZ_CALLS calls in FUZZ_WORKERS workers from
# FUZZ_SEED on the checked kernel; FUZZ_DATAPLANE=1 adds dataplane CPUs 2-3 and steers the
# workers into task isolation; FUZZ_COVER=1 boots the coverage kernel (the checked kernel
# with coverage: make cover) and follows coverage (fuzz -c), and tools/covreport prints what
# the run reached by file; FUZZ_COLLIDE=N runs 1 program in N in colliding threads (0:
# never); FUZZ_NET=1 adds a virtio-net device (slirp, binding no host port: zt_claim gets
# past its slot checks); FUZZ_PCI=1 adds an SMMUv3 and a virtio-net-pci function behind it
# (slot 33: zt_claim of a PCI function, the SMMU's stream tables and I/O page tables);
# FUZZ_BOOTARGS adds kernel parameters (trace=1: the trace rings).
# The console goes to build/fuzz/fuzz-SEED[-dataplane][-cover].log and
# tools/fuzzsum prints the totals; the exit status is the fuzzer's (0: PASS).
FUZZ_CALLS     ?= 1000000
FUZZ_SEED      ?= 1
FUZZ_WORKERS   ?= 4
FUZZ_DATAPLANE ?= 0
FUZZ_COVER     ?= 0
FUZZ_COLLIDE   ?= 8
FUZZ_NET       ?= 0
FUZZ_PCI       ?= 0
FUZZ_BOOTARGS  ?=
FUZZ_QEMU_NET  := $(if $(filter 1,$(FUZZ_NET)),-netdev user$(,)id=n0$(,)restrict=on \
	-device virtio-net-device$(,)netdev=n0)$(if $(filter 1,$(FUZZ_PCI)), -M iommu=smmuv3 \
	-netdev user$(,)id=p0$(,)restrict=on \
	-device virtio-net-pci$(,)netdev=p0$(,)disable-legacy=on$(,)romfile=$(,)iommu_platform=on)
FUZZ_KERNEL    := $(B)/$(if $(filter 1,$(FUZZ_COVER)),cover,checked)/kernel.elf
FUZZ_LOG       := $(B)/fuzz/fuzz-$(FUZZ_SEED)$(if $(filter 1,$(FUZZ_DATAPLANE)),-dataplane)$(if \
	$(filter 1,$(FUZZ_COVER)),-cover).log
FUZZ_APPEND    := quiet$(if $(filter 1,$(FUZZ_DATAPLANE)), dataplane=2-3)$(if \
	$(FUZZ_BOOTARGS), $(FUZZ_BOOTARGS)) init=/bin/fuzz -- \
	-n $(FUZZ_CALLS) -s $(FUZZ_SEED) -w $(FUZZ_WORKERS) -x $(FUZZ_COLLIDE)$(if \
	$(filter 1,$(FUZZ_DATAPLANE)), -i)$(if $(filter 1,$(FUZZ_COVER)), -c)

fuzz: deps-test
	@$(MAKE) --no-print-directory $(FUZZ_KERNEL)
	@mkdir -p $(B)/fuzz
	@echo "fuzz: $(QEMU_BASE) -smp $(CPUS) -kernel $(FUZZ_KERNEL) $(FUZZ_QEMU_NET) -append '$(FUZZ_APPEND)'"
	@echo "fuzz: console in $(FUZZ_LOG)"
	@{ $(QEMU_BASE) -smp $(CPUS) -kernel $(FUZZ_KERNEL) $(FUZZ_QEMU_NET) -append '$(FUZZ_APPEND)' \
	    < /dev/null; echo $$? > $(FUZZ_LOG).status; } | tr -d '\000' | tee $(FUZZ_LOG) | \
	    grep -a -v '^fuzz: life\|^kcov: \|^irqsoff: cpu [0-9]* \(hist\|place\)' || true
	@$(PYTHON) tools/fuzzsum $(FUZZ_LOG) || true
	@if [ "$(FUZZ_COVER)" = 1 ]; then $(PYTHON) tools/covreport --elf $(FUZZ_KERNEL) $(FUZZ_LOG); fi
	@exit $$(cat $(FUZZ_LOG).status)

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
	@$(MAKE) --no-print-directory $(B)/kernel.elf $(B)/kernel.bin $(B)/linux/sockecho
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
	@echo "  make cover           build $(B)/cover/kernel.elf: the checked kernel with coverage (kcov)"
	@echo "  make run DEBUG=1     boot the checked kernel (lock order checked, watchdog on)"
	@echo "  make run             boot it in QEMU (CPUS=$(CPUS), MEM=$(MEM), BOOTARGS='...', REPRO=1); Ctrl-A x quits"
	@echo "  make run PROG=FILE ARGS='...'  boot with your static Linux aarch64 program as the first program"
	@echo "                       (it is /usr/bin/NAME, first on the shell's PATH; earlier runs' programs are removed)"
	@echo "  make run INITRD=FILE  boot with a cpio newc archive layered over the built-in tree (-initrd)"
	@echo "  make run DEB='rt-tests stress-ng'  boot with Debian's arm64 packages and their libraries in the tree"
	@echo "  make test            check-format, host unit tests, QEMU tests; ends with 'N passed, N failed'"
	@echo "  make doccheck        boot every sample the docs mark and compare (DOCS=docs/boot.md: one page)"
	@echo "  make bench           benchmarks -> bench/results.md"
	@echo "  make percpu          static memory a CPU costs, checked against a 256-CPU build"
	@echo "  make compare         zerotick and Debian's Linux side by side -> bench/compare.md"
	@echo "  make fuzz            the long fuzz run (FUZZ_CALLS=1000000 FUZZ_SEED=1 FUZZ_WORKERS=4 FUZZ_DATAPLANE=0"
	@echo "                       FUZZ_COVER=0 FUZZ_COLLIDE=8); FUZZ_COVER=1: coverage-guided, table by file"
	@echo "  make stress-long     10,000 spawn/exit cycles and thread bursts to the kernel's limit"
	@echo "  make run-net         boot with a virtio-net device on loopback (NET=dgram|user|pci, NETQ=N)"
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
