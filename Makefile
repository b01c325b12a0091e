# SPDX-License-Identifier: MIT
# rdax top-level Makefile. `make`, `make check`, `make demo`, `make install`.

VERSION := $(shell cat VERSION)
# librdax's ABI: SOVER changes with every incompatible change (then the
# symbol version node in src/librdax.map and debian's librdaxN with it)
SOVER   := 1
LIBVERSION := $(SOVER).0.0

prefix      ?= /usr/local
exec_prefix ?= $(prefix)
bindir      ?= $(exec_prefix)/bin
sbindir     ?= $(exec_prefix)/sbin
libdir      ?= $(exec_prefix)/lib
includedir  ?= $(prefix)/include
mandir      ?= $(prefix)/share/man
pkgconfigdir ?= $(libdir)/pkgconfig
# systemd system units (Debian: /lib/systemd/system; under a prefix: its own)
unitdir ?= $(prefix)/lib/systemd/system
# PREFIX is accepted as an alias of prefix (make install PREFIX=/opt/rdax)
ifdef PREFIX
prefix := $(PREFIX)
endif

CC      ?= cc
CFLAGS  ?= -O2 -g
B       ?= build

override CPPFLAGS += -D_GNU_SOURCE -Iinclude -Isrc -DRDAX_VERSION=\"$(VERSION)\"
override CFLAGS   += -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
		     -Wno-missing-field-initializers -fPIC -fvisibility=hidden \
		     -MMD -MP -pthread $(EXTRA_CFLAGS)
ifdef WERROR
override CFLAGS += -Werror
endif
ifdef SANITIZE
override CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
override LDFLAGS += -fsanitize=$(SANITIZE)
endif

# liburcu-bp: the DAX store's lock-free readers (LGPL, linked)
LIBS_CORE := -lcrypto -linih -lpmem2 -lurcu-bp -luring -lnuma -lrdmacm -libverbs -lpthread
# the server's state tables: liburcu's lock-free hash tables (LGPL, linked)
LIBS_SRV  := -lurcu-cds -lurcu -lacl -lsystemd

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Modules shared by the server and the client library.
CORE_MODS := util proto crypto transport mem store
CORE_SRC  := $(sort $(foreach m,$(CORE_MODS),$(wildcard src/$(m)/*.c)))
SRV_SRC   := $(sort $(wildcard src/server/*.c))
CLI_SRC   := $(sort $(wildcard src/client/*.c))

CORE_OBJ := $(CORE_SRC:%.c=$(B)/%.o)
SRV_OBJ  := $(SRV_SRC:%.c=$(B)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(B)/%.o)

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
# tests/integ/faultinj.c and osslcount.c are LD_PRELOAD shims, not programs.
ITOOL_SRC := $(filter-out tests/integ/faultinj.c tests/integ/osslcount.c,\
	$(sort $(wildcard tests/integ/*.c)))
ITOOL_BIN := $(ITOOL_SRC:tests/integ/%.c=$(B)/tests/%)
FAULTINJ  := $(B)/tests/faultinj.so
OSSLCOUNT := $(B)/tests/osslcount.so

LIB_SO   := $(B)/librdax.so
LIB_SONAME := librdax.so.$(SOVER)
LIB_REAL := $(B)/librdax.so.$(LIBVERSION)

PROGS := $(B)/rdaxd $(B)/rdax $(B)/rdaxctl
FIO_ENGINE := $(B)/fio-rdax.so

# `make` only compiles: it installs nothing and changes nothing outside
# the tree. The fio engine needs the source of the installed fio, which
# `make fio` fetches (so do `make check` and `make demo`); without it,
# everything else is built and the one command to run is printed.
FIO_SRC ?= build/fio-src
ifneq ($(wildcard $(FIO_SRC)/.version),)
ALL_FIO := $(FIO_ENGINE)
else
ALL_FIO := fio-missing
endif

all: $(PROGS) $(LIB_SO) $(ALL_FIO) $(B)/rdax.pc $(B)/librdax-core.a

fio-missing: $(PROGS) $(LIB_SO)
	@echo "  SKIP    $(FIO_ENGINE): fio's source is not in $(FIO_SRC); 'make fio' fetches it (apt-get source fio)"

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/librdax-core.a: $(CORE_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(B)/librdax-server.a: $(SRV_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(LIB_REAL): $(CLI_OBJ) $(B)/librdax-core.a src/librdax.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(CLI_OBJ) $(B)/librdax-core.a $(LDFLAGS) \
		-Wl,-soname,$(LIB_SONAME) -Wl,--version-script=src/librdax.map \
		-Wl,-z,defs -Wl,--as-needed -pthread $(LIBS_CORE)
	$(Q)ln -sf librdax.so.$(LIBVERSION) $(B)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $(LIB_SO)

# (also made with the library: a symlink's age is its target's)
$(LIB_SO): $(LIB_REAL)
	$(Q)ln -sf librdax.so.$(LIBVERSION) $(B)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $@

$(B)/rdax.pc: rdax.pc.in VERSION
	$(Q)sed -e 's|@prefix@|$(prefix)|' -e 's|@libdir@|$(libdir)|' \
		-e 's|@includedir@|$(includedir)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

$(B)/rdaxd: $(B)/tools/rdaxd.o $(B)/librdax-server.a $(B)/librdax-core.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -pthread $(LIBS_SRV) $(LIBS_CORE)

# rdaxctl speaks only the control socket's text protocol: no library.
$(B)/rdaxctl: $(B)/tools/rdaxctl.o
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(LDFLAGS)

# The CLI uses the public API, and for `rdax passwd` the server's
# password database code (crypto/passdb.h) from the core archive, which
# librdax does not export; $ORIGIN lets it run from build/ (packages,
# whose library is in the system's directory, set RPATH=).
RPATH ?= -Wl,-rpath,'$$ORIGIN'
FIO_RPATH ?= $(if $(RPATH),-Wl$(comma)-rpath$(comma)'$$ORIGIN:$$ORIGIN/..')
comma := ,
$(B)/rdax: $(B)/tools/rdax.o $(LIB_SO) $(B)/librdax-core.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $< $(LDFLAGS) -L$(B) -lrdax $(B)/librdax-core.a -lcrypto $(RPATH)

# The fio engine is built against the source of the installed fio, which
# tools/fetch-fio.sh fetches with `apt-get source fio` and configures.
FIO_CFLAGS := -I$(FIO_SRC)/src -include $(FIO_SRC)/src/config-host.h \
	      -D_FILE_OFFSET_BITS=64 -Wno-sign-compare -Wno-unused-parameter

# GPL-2.0 (it includes fio headers); public librdax API only.
$(FIO_ENGINE): fio/rdax.c include/rdax.h $(LIB_SO) $(FIO_SRC)/.version
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) -fvisibility=default -D_GNU_SOURCE -Iinclude $(FIO_CFLAGS) \
		$(filter -D_FORTIFY_SOURCE%,$(CPPFLAGS)) \
		-shared -o $@ $< $(LDFLAGS) -L$(B) -lrdax $(FIO_RPATH) \
		-Wl,-z,nodelete

# Unit tests may use any internal module.
$(B)/tests/%: $(B)/tests/unit/%.o $(CLI_OBJ) $(B)/librdax-server.a $(B)/librdax-core.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -pthread $(LIBS_SRV) $(LIBS_CORE)

# Integration helpers (raw protocol clients) also use internals.
$(B)/tests/%: $(B)/tests/integ/%.o $(CLI_OBJ) $(B)/librdax-server.a $(B)/librdax-core.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -pthread $(LIBS_SRV) $(LIBS_CORE)

# bench/opentest's client: public API only, like the CLI.
$(B)/bench/opentest-client: bench/opentest.c $(LIB_SO)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS) -L$(B) -lrdax -Wl,-rpath,'$$ORIGIN/..'

# Fault injection shim (LD_PRELOAD into rdaxd); never sanitized itself, so
# it can sit in front of a sanitizer runtime.
$(FAULTINJ): tests/integ/faultinj.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -fPIC -shared -fvisibility=hidden \
		-D_GNU_SOURCE -o $@ $< -ldl -pthread

# The OpenSSL context counter (LD_PRELOAD into rdaxd and the CLI), likewise.
$(OSSLCOUNT): tests/integ/osslcount.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -fPIC -shared -fvisibility=hidden \
		-D_GNU_SOURCE -o $@ $< -ldl

# bench/dax-host and bench/dax: the DAX store's write path against
# plain memcpy (an internal API, like the unit tests).
$(B)/bench/daxcopy: $(B)/bench/daxcopy.o $(B)/librdax-core.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -pthread $(LIBS_CORE)

# bench/names' in-process part: srv_name_resolve alone (an internal API).
$(B)/bench/namelookup: $(B)/bench/namelookup.o $(B)/librdax-server.a $(B)/librdax-core.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -pthread $(LIBS_SRV) $(LIBS_CORE)

tests: all $(UNIT_BIN) $(ITOOL_BIN) $(FAULTINJ) $(OSSLCOUNT) $(B)/bench/opentest-client $(B)/bench/daxcopy \
	$(B)/bench/namelookup

# Installs Debian packages (root): only these targets change the system.
deps:
	tools/deps.sh

# fio and the source of exactly the installed version, then the engine.
fetch-fio:
	tools/deps.sh fio
	tools/fetch-fio.sh $(FIO_SRC) >/dev/null

fio: fetch-fio
	$(MAKE) $(FIO_ENGINE)

# fio with the librpma engines (bench/rdma-to-dax's librpma anchor)
FIO_RPMA ?= build/fio-rpma
fio-rpma: fetch-fio
	tools/build-fio-rpma.sh $(FIO_SRC) $(FIO_RPMA) >/dev/null

# The README's Performance section, from build/bench/*.json
readme-perf:
	bench/perf-md.py --readme README.md build/bench/rdma-to-dax.json build/bench/smbdirect.json build/bench/tcp.json build/bench/cli.json build/bench/dbench.json

# `make check` installs what is missing, builds, and runs every tier this
# machine allows (the VM tier when qemu can boot). deps and fetch-fio
# both run apt-get, which cannot run twice at once: fetch-fio comes after
# deps in the recipe, never beside it under make -j.
check: deps
	$(MAKE) fetch-fio
	$(MAKE) tests
	tests/run.sh

check-host: tests
	RDAX_SKIP_VM=1 tests/run.sh

check-vm: deps
	$(MAKE) fetch-fio
	$(MAKE) tests
	tests/run.sh vm

# Every host test against an ASan+UBSan build in build-asan; any sanitizer
# report (a leak included) fails the test that caused it (tests/run.sh).
check-asan: fetch-fio
	$(MAKE) B=build-asan SANITIZE=address,undefined CFLAGS="-O1 -g" \
		EXTRA_CFLAGS=-fno-sanitize-recover=all tests
	B=build-asan RDAX_SKIP_VM=1 tests/run.sh unit integ

demo: deps
	$(MAKE) fetch-fio
	$(MAKE) all
	tools/demo.sh

install: all
	install -D -m 0755 $(B)/rdaxd $(DESTDIR)$(sbindir)/rdaxd
	install -D -m 0755 $(B)/rdax $(DESTDIR)$(bindir)/rdax
	install -D -m 0755 $(B)/rdaxctl $(DESTDIR)$(sbindir)/rdaxctl
	sed -e 's|@sbindir@|$(sbindir)|g' tools/rdaxd.service.in > $(B)/rdaxd.service
	install -D -m 0644 $(B)/rdaxd.service $(DESTDIR)$(unitdir)/rdaxd.service
	install -D -m 0755 $(LIB_REAL) $(DESTDIR)$(libdir)/librdax.so.$(LIBVERSION)
	ln -sf librdax.so.$(LIBVERSION) $(DESTDIR)$(libdir)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(libdir)/librdax.so
	install -D -m 0644 include/rdax.h $(DESTDIR)$(includedir)/rdax.h
	if [ -f $(FIO_ENGINE) ]; then \
		install -D -m 0755 $(FIO_ENGINE) $(DESTDIR)$(libdir)/fio/fio-rdax.so; fi
	mkdir -p $(DESTDIR)$(pkgconfigdir)
	sed -e 's|@prefix@|$(prefix)|' -e 's|@libdir@|$(libdir)|' \
		-e 's|@includedir@|$(includedir)|' -e 's|@VERSION@|$(VERSION)|' \
		rdax.pc.in > $(DESTDIR)$(pkgconfigdir)/rdax.pc
	for m in $(wildcard man/*.[1-8]); do \
		s=$${m##*.}; install -D -m 0644 $$m $(DESTDIR)$(mandir)/man$$s/$${m##*/}; \
	done

uninstall:
	rm -f $(DESTDIR)$(sbindir)/rdaxd $(DESTDIR)$(bindir)/rdax \
		$(DESTDIR)$(sbindir)/rdaxctl $(DESTDIR)$(unitdir)/rdaxd.service \
		$(DESTDIR)$(libdir)/librdax.so* $(DESTDIR)$(includedir)/rdax.h \
		$(DESTDIR)$(pkgconfigdir)/rdax.pc

clean:
	rm -rf $(B) build-asan

.PHONY: all tests deps fetch-fio fio fio-rpma fio-missing check check-host check-vm check-asan demo \
	install uninstall clean readme-perf
.SECONDARY:

include tests/fuzz/fuzz.mk

-include $(shell find $(B) -name '*.d' -type f 2>/dev/null)
