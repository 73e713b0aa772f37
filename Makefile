# syncd — build, test, demo, install.  `make help` lists the targets.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
MANDIR = $(PREFIX)/share/man
# systemd reads units from /usr/lib/systemd for PREFIX=/usr, else from $(PREFIX)/lib/systemd.
SYSTEMDDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/systemd,$(PREFIX)/lib/systemd)
SYSUSERSDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/sysusers.d,$(PREFIX)/lib/sysusers.d)
# syncd reads /etc/syncd whatever the prefix, so the examples go there too (they never overwrite a file).
SYSCONFDIR ?= /etc
FUZZ_SECONDS ?= 20
# Seconds one integration test may take before pytest-timeout fails it with every thread's stack.
PYTEST_TIMEOUT ?= 300
SWIFT ?= swift
RELEASE_FLAGS = -c release --static-swift-stdlib
# Test-only Python packages live in a virtual environment in the tree (Debian's Python is externally
# managed, PEP 668); test recipes put it first in PATH so `python3` there has pytest and varlink.
VENV ?= $(CURDIR)/build/venv
TEST_PATH = $(VENV)/bin:$(PATH)

.PHONY: help deps build-deps build release test check unit fuzz integration demo bench man install uninstall clean

help:
	@echo "make demo         sample server + daemon + cache + syncctl status (installs what it needs)"
	@echo "make test         every test: unit, fuzz (briefly), integration (installs what it needs)"
	@echo "make check        quick: unit tests only"
	@echo "make bench        benchmarks (figures go to docs/benchmarks.md)"
	@echo "make install      release build + units + man pages into \$$DESTDIR\$$PREFIX"

# Everything the tests need (Debian packages, and the Python ones in $(VENV)).
deps:
	.ci/install-deps test

# Only what compiling needs.
build-deps:
	.ci/install-deps build

build: build-deps
	$(SWIFT) build

release: build-deps
	$(SWIFT) build $(RELEASE_FLAGS)

# Unit tests only: pure logic, SQLite files, sockets in-process. Suites that need root, network
# namespaces, the built binaries or the reference Python client carry the `.system` trait, which
# SYNCD_TESTS=unit turns off (make test runs everything).
check unit: build
	$(SWIFT) build --build-tests
	SYNCD_TESTS=unit PATH="$(TEST_PATH)" SWIFT=$(SWIFT) Tests/run-swift-tests

fuzz:
	Tests/Fuzz/run-fuzz.sh $(FUZZ_SECONDS)
	@if [ -x Tests/Fuzz/run-netlink-fuzz.sh ]; then Tests/Fuzz/run-netlink-fuzz.sh $(FUZZ_SECONDS); fi

integration: deps build
	cd Tests/integration && PATH="$(TEST_PATH)" python3 -m pytest -q -p no:cacheprovider --timeout=$(PYTEST_TIMEOUT)

# Everything: Swift tests (unit and the real-socket/namespace ones), fuzzing, black-box integration.
# A hung test fails its run with a diagnosis (Tests/run-swift-tests, pytest --timeout) instead of
# stalling CI.
test: deps build
	$(SWIFT) build --build-tests
	PATH="$(TEST_PATH)" SWIFT=$(SWIFT) Tests/run-swift-tests
	$(MAKE) fuzz
	$(MAKE) integration

demo: build
	config/demo/run-demo

bench: deps
	$(SWIFT) build $(RELEASE_FLAGS)
	bench/run.sh

man:
	mkdir -p build/man
	for page in docs/*.[158].md; do \
		name=$$(basename $$page .md); scdoc < $$page > build/man/$$name; \
	done

install: release man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -m 0755 .build/release/syncd .build/release/syncctl $(DESTDIR)$(BINDIR)/
# Every page `make man` rendered goes into the man<section> directory its suffix names.
	for page in build/man/*.[158]; do \
		install -m 0644 $$page $(DESTDIR)$(MANDIR)/man$${page##*.}/; \
	done
	install -d $(DESTDIR)$(SYSCONFDIR)/syncd/sources.d
	install -m 0644 config/syncd.conf $(DESTDIR)$(SYSCONFDIR)/syncd/syncd.conf.example
	install -m 0644 config/sources.d/posts.source.example $(DESTDIR)$(SYSCONFDIR)/syncd/sources.d/
	if [ -d packaging/systemd ]; then \
		install -d $(DESTDIR)$(SYSTEMDDIR)/system $(DESTDIR)$(SYSTEMDDIR)/user $(DESTDIR)$(SYSUSERSDIR); \
		mkdir -p build/systemd; \
		sed 's|@BINDIR@|$(BINDIR)|g' packaging/systemd/syncd.service > build/systemd/syncd.service; \
		sed 's|@BINDIR@|$(BINDIR)|g' packaging/systemd/syncd.user.service > build/systemd/syncd.user.service; \
		install -m 0644 build/systemd/syncd.service $(DESTDIR)$(SYSTEMDDIR)/system/syncd.service; \
		install -m 0644 build/systemd/syncd.user.service $(DESTDIR)$(SYSTEMDDIR)/user/syncd.service; \
		install -m 0644 packaging/systemd/syncd.sysusers $(DESTDIR)$(SYSUSERSDIR)/syncd.conf; \
	fi
	if [ -f packaging/completion/syncctl.bash ]; then \
		install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions; \
		install -m 0644 packaging/completion/syncctl.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/syncctl; \
	fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/syncd $(DESTDIR)$(BINDIR)/syncctl
	rm -f $(DESTDIR)$(MANDIR)/man1/syncctl.1 $(DESTDIR)$(MANDIR)/man5/syncd.conf.5 $(DESTDIR)$(MANDIR)/man8/syncd.8
	rm -f $(DESTDIR)$(SYSTEMDDIR)/system/syncd.service $(DESTDIR)$(SYSTEMDDIR)/user/syncd.service
	rm -f $(DESTDIR)$(SYSUSERSDIR)/syncd.conf $(DESTDIR)$(PREFIX)/share/bash-completion/completions/syncctl
	rm -f $(DESTDIR)$(SYSCONFDIR)/syncd/syncd.conf.example $(DESTDIR)$(SYSCONFDIR)/syncd/sources.d/posts.source.example

clean:
	rm -rf .build build
