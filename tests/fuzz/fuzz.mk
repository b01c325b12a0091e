# SPDX-License-Identifier: MIT
# Fuzzing (tests/fuzz/README.md). Included by the top-level Makefile,
# or used alone from the top of the tree:
#
#   make -f tests/fuzz/fuzz.mk fuzz          FUZZ_SECONDS=60 per target
#   make -f tests/fuzz/fuzz.mk fuzz-replay   every corpus, no libFuzzer
#
# A target is tests/fuzz/fuzz_NAME.c plus NAME in FUZZ_TARGETS; its seeds
# live in tests/data/corpus/NAME/, an optional dictionary in
# tests/fuzz/NAME.dict and extra libFuzzer flags in FUZZ_OPTS_NAME.

ifndef RDAX_FUZZ_MK
RDAX_FUZZ_MK := 1

FUZZ_TARGETS ?= smb2_request compound ntlmssp spnego auth_server auth_client \
		create_ctx config path transform rdma_xform smbd smbd_desc fsctl server dosattr dcerpc \
		secdesc posix ea

FUZZ_SECONDS   ?= 60
FUZZ_CC        ?= clang
FUZZ_B         ?= build-fuzz
FUZZ_REPLAY_B  ?= $(FUZZ_B)/replay
FUZZ_REPLAY_CC ?= $(FUZZ_CC)
FUZZ_REPLAY_SAN ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined
# the replay runs for a second: build it quickly
FUZZ_OPT       ?= -O1
FUZZ_REPLAY_OPT ?= -O0
FUZZ_SAN       := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CORPUS    := tests/data/corpus
FUZZ_REPLAY_TIMEOUT ?= 120
# libFuzzer flags for every run; FUZZ_ARGS adds more from the command line
FUZZ_RUN_OPTS  ?= -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
FUZZ_OPTS_config ?= -close_fd_mask=2

# The core modules and the server (config, paths), compiled here with the
# fuzzing flags; linking through an archive takes only what a target uses.
# Alone, the module and library lists are read from the top-level Makefile.
FUZZ_TOP_VAR = $(shell sed -n 's/^$(1)[ \t]*:=[ \t]*//p' Makefile 2>/dev/null)
FUZZ_MODS ?= $(or $(CORE_MODS),$(call FUZZ_TOP_VAR,CORE_MODS),util proto crypto \
	     transport mem store) server
FUZZ_LIBS ?= $(or $(LIBS_SRV),$(call FUZZ_TOP_VAR,LIBS_SRV)) $(or $(LIBS_CORE),$(call FUZZ_TOP_VAR,LIBS_CORE),-lcrypto -linih -lpthread)
FUZZ_SRC  := $(sort $(foreach m,$(FUZZ_MODS),$(wildcard src/$(m)/*.c)))
FUZZ_VERSION := $(shell cat VERSION 2>/dev/null)
FUZZ_CPPFLAGS := -D_GNU_SOURCE -Iinclude -Isrc \
		 -DRDAX_VERSION=\"$(FUZZ_VERSION)\"
FUZZ_CFLAGS := -std=gnu11 -g -fno-omit-frame-pointer -Wall -Wextra \
	       -Wno-unused-parameter -Wno-missing-field-initializers \
	       -Werror=implicit-function-declaration -pthread -MMD -MP $(if $(WERROR),-Werror)

FUZZ_BINS   := $(FUZZ_TARGETS:%=$(FUZZ_B)/bin/fuzz_%)
FUZZ_REPLAY_BINS := $(FUZZ_TARGETS:%=$(FUZZ_REPLAY_B)/bin/fuzz_%)

# ---- libFuzzer build (clang only) ----

# Every header, not just the .d files: those name their targets as the
# directory was spelled (relative or absolute) when they were written.
FUZZ_HDRS := $(wildcard include/*.h src/*/*.h tests/fuzz/*.h)

$(FUZZ_B)/obj/%.o: %.c tests/fuzz/fuzz.mk $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $<"
	@$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_OPT) $(FUZZ_CFLAGS) $(FUZZ_SAN) \
		-fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_B)/libfuzz-src.a: $(FUZZ_SRC:%.c=$(FUZZ_B)/obj/%.o)
	@rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_B)/bin/fuzz_%: $(FUZZ_B)/obj/tests/fuzz/fuzz_%.o $(FUZZ_B)/libfuzz-src.a
	@mkdir -p $(dir $@)
	@echo "  FUZZLD  $@"
	@$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

# ---- replay build (any compiler, sanitizers, no libFuzzer) ----

$(FUZZ_REPLAY_B)/obj/%.o: %.c tests/fuzz/fuzz.mk $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	@echo "  REPLAYCC $<"
	@$(FUZZ_REPLAY_CC) $(FUZZ_CPPFLAGS) $(FUZZ_REPLAY_OPT) $(FUZZ_CFLAGS) \
		$(FUZZ_REPLAY_SAN) \
		-c -o $@ $<

$(FUZZ_REPLAY_B)/libfuzz-src.a: $(FUZZ_SRC:%.c=$(FUZZ_REPLAY_B)/obj/%.o)
	@rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_REPLAY_B)/bin/fuzz_%: $(FUZZ_REPLAY_B)/obj/tests/fuzz/fuzz_%.o \
		$(FUZZ_REPLAY_B)/obj/tests/fuzz/replay_main.o \
		$(FUZZ_REPLAY_B)/libfuzz-src.a
	@mkdir -p $(dir $@)
	@echo "  REPLAYLD $@"
	@$(FUZZ_REPLAY_CC) $(FUZZ_REPLAY_SAN) -o $@ $^ $(FUZZ_LIBS)

# ---- running ----

# fuzz_run NAME: FUZZ_SECONDS of libFuzzer; new inputs go to the scratch
# corpus $(FUZZ_B)/corpus/NAME, crashes to $(FUZZ_B)/findings/NAME/.
define fuzz_run
{ mkdir -p $(FUZZ_B)/corpus/$(1) $(FUZZ_B)/findings/$(1) $(FUZZ_CORPUS)/$(1) && \
  echo "fuzz_$(1): $(FUZZ_SECONDS) s (log $(FUZZ_B)/fuzz_$(1).log)" && \
  if $(FUZZ_B)/bin/fuzz_$(1) -max_total_time=$(FUZZ_SECONDS) \
	-artifact_prefix=$(FUZZ_B)/findings/$(1)/ $(FUZZ_RUN_OPTS) \
	$(FUZZ_OPTS_$(1)) $(if $(wildcard tests/fuzz/$(1).dict),-dict=tests/fuzz/$(1).dict) \
	$(FUZZ_ARGS) $(FUZZ_B)/corpus/$(1) $(FUZZ_CORPUS)/$(1) \
	>$(FUZZ_B)/fuzz_$(1).log 2>&1; then \
	grep -E '^(#[0-9]+.*DONE|stat::)' $(FUZZ_B)/fuzz_$(1).log | sed 's/^/    /'; \
  else \
	echo "FAIL: fuzz_$(1): finding in $(FUZZ_B)/findings/$(1)/"; \
	grep -E 'ERROR|invariant|SUMMARY|^    #[0-5] ' $(FUZZ_B)/fuzz_$(1).log | head -n 15 | sed 's/^/    | /'; \
	false; \
  fi; }
endef

# fuzz_replay NAME: the corpus through the replay binary; a hang fails
# after FUZZ_REPLAY_TIMEOUT seconds.
define fuzz_replay
{ if out=$$(timeout $(FUZZ_REPLAY_TIMEOUT) $(FUZZ_REPLAY_B)/bin/fuzz_$(1) \
	$(FUZZ_CORPUS)/$(1) 2>$(FUZZ_REPLAY_B)/fuzz_$(1).log); then \
	echo "ok: fuzz_$(1): $$out"; \
  else \
	rc=$$?; [ $$rc = 124 ] && echo "timed out after $(FUZZ_REPLAY_TIMEOUT) s" \
		>>$(FUZZ_REPLAY_B)/fuzz_$(1).log; \
	echo "FAIL: fuzz_$(1) (rc=$$rc, log $(FUZZ_REPLAY_B)/fuzz_$(1).log)"; \
	tail -n 25 $(FUZZ_REPLAY_B)/fuzz_$(1).log | sed 's/^/    | /'; \
	false; \
  fi; }
endef

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@fail=0; \
	$(foreach t,$(FUZZ_TARGETS),$(call fuzz_run,$(t)) || fail=1;) \
	exit $$fail

fuzz-replay-build: $(FUZZ_REPLAY_BINS)

fuzz-replay: fuzz-replay-build
	@fail=0; \
	UBSAN_OPTIONS="$${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"; \
	export UBSAN_OPTIONS; \
	$(foreach t,$(FUZZ_TARGETS),$(call fuzz_replay,$(t)) || fail=1;) \
	exit $$fail

# Fold what the scratch corpus found into the committed one: only inputs
# that add coverage are copied (libFuzzer -merge=1).
fuzz-merge: fuzz-build
	@$(foreach t,$(FUZZ_TARGETS),mkdir -p $(FUZZ_CORPUS)/$(t) && \
		$(FUZZ_B)/bin/fuzz_$(t) -merge=1 $(FUZZ_OPTS_$(t)) \
		$(FUZZ_CORPUS)/$(t) $(FUZZ_B)/corpus/$(t) \
		>$(FUZZ_B)/merge_$(t).log 2>&1 && \
		echo "fuzz_$(t): $$(ls $(FUZZ_CORPUS)/$(t) | wc -l) files" &&) true

fuzz-clean:
	rm -rf $(FUZZ_B)

.PHONY: fuzz fuzz-build fuzz-replay fuzz-replay-build fuzz-merge fuzz-clean
.SECONDARY:

-include $(sort $(shell find $(FUZZ_B) $(FUZZ_REPLAY_B) -name '*.d' -type f 2>/dev/null))

endif
