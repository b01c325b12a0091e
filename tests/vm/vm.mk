# SPDX-License-Identifier: MIT
# Helper programs of the VM testbed (tests/vm/src/*.c -> build/vm/*).
# Included by the top-level Makefile (after its `all` target) and usable on
# its own from the repository root:  make -f tests/vm/vm.mk vm-tools
# Only VM_-prefixed variables, plus $(CC), so it cannot clash.

VM_OUT      ?= build/vm
VM_CFLAGS   ?= -O2 -g
VM_CFLAGS_ALL = -std=gnu11 -Wall -Wextra $(VM_CFLAGS)
VM_TOOLS    := $(VM_OUT)/mapsync $(VM_OUT)/regmr $(VM_OUT)/membw
VM_LIBS_mapsync :=
VM_LIBS_regmr   := -libverbs
VM_LIBS_membw   := -lpmem2

vm-tools: $(VM_TOOLS)

$(VM_OUT)/%: tests/vm/src/%.c tests/vm/vm.mk
	@mkdir -p $(VM_OUT)
	$(CC) $(VM_CFLAGS_ALL) -o $@ $< $(VM_LIBS_$*)

.PHONY: vm-tools
