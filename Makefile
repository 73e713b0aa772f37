# syncd — build, test, demo, install.  `make help` lists the targets.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
MANDIR = $(PREFIX)/share/man
# systemd reads units from /usr/lib/systemd for PREFIX=/usr, else from $(PREFIX)/lib/systemd.
SYSTEMDDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/systemd,$(PREFIX)/lib/systemd)
SYSTEMUNITDIR ?= $(SYSTEMDDIR)/system
USERUNITDIR ?= $(SYSTEMDDIR)/user
SYSUSERSDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/sysusers.d,$(PREFIX)/lib/sysusers.d)
# syncd reads /etc/syncd whatever the prefix, so the examples go there too (they never overwrite a file).
SYSCONFDIR ?= /etc
# journalctl reads message catalogs from /usr/lib/systemd/catalog and /usr/local/lib/systemd/catalog.
CATALOGDIR ?= $(SYSTEMDDIR)/catalog
# The design notes (docs/architecture.md, installed as architecture.txt below the header of
# packaging/doc/architecture-header.txt); the manual pages name them.
DOCDIR ?= $(PREFIX)/share/doc/syncd
# Where the example source is installed: the manual pages name it (the Debian package ships it in
# /usr/share/doc/syncd/examples and renders the pages with that).
EXAMPLEDIR ?= $(SYSCONFDIR)/syncd/sources.d
FUZZ_SECONDS ?= 20
# Seconds one integration test may take before pytest-timeout fails it with every thread's stack.
PYTEST_TIMEOUT ?= 300
SWIFT ?= swift
# The compiler beside it, for the fuzzers and the scanner benchmark (`make SWIFT=/opt/swift/usr/bin/swift …`).
SWIFTC ?= $(SWIFT)c
# No $$ORIGIN run path: with the Swift runtime linked in, the release binaries need no library beside them, and
# installed in /usr/bin the loader would look there first for libsqlite3, libc and libcurl at every start.
# Full RELRO (-z now, with the toolchain's -z relro): every symbol is bound at start and the GOT made read-only
# before main, as Debian's hardened C daemons are (lintian's hardening-no-bindnow); the cost at start is in
# docs/benchmarks.md ("Full RELRO").  debian/rules builds with this same target.
RELEASE_FLAGS = -c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
# Test-only Python packages live in a virtual environment in the tree (Debian's Python is externally
# managed, PEP 668); test recipes put it first in PATH so `python3` there has pytest and varlink.
VENV ?= $(CURDIR)/build/venv
TEST_PATH = $(VENV)/bin:$(PATH)

.PHONY: help deps build-deps build release test check unit fuzz integration integration-release demo bench man install install-files \
	uninstall deb deb-deps contributor-check clean

help:
	@echo "make demo         sample server + daemon + cache + syncctl status (installs what it needs)"
	@echo "make test         every test: unit, fuzz (briefly), integration (installs what it needs)"
	@echo "make check        quick: unit tests only"
	@echo "make integration  only the black-box tests (Tests/integration; root)"
	@echo "make integration-release  the hostile-input tests again, against the release binaries"
	@echo "make contributor-check    the tests that switch user or boot systemd, from below a 0700 folder"
	@echo "make bench        benchmarks (figures go to docs/benchmarks.md)"
	@echo "make install      release build + units + man pages into \$$DESTDIR\$$PREFIX"
	@echo "make deb          build/syncd_VERSION_ARCH.deb (then: sudo apt install ./build/syncd_*.deb)"

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
	SWIFTC=$(SWIFTC) Tests/Fuzz/run-fuzz.sh $(FUZZ_SECONDS)
	@if [ -x Tests/Fuzz/run-netlink-fuzz.sh ]; then SWIFTC=$(SWIFTC) Tests/Fuzz/run-netlink-fuzz.sh $(FUZZ_SECONDS); fi

integration: deps build
	cd Tests/integration && PATH="$(TEST_PATH)" python3 -m pytest -q -p no:cacheprovider --timeout=$(PYTEST_TIMEOUT)

# The hostile-server and hostile-user cases (syncd(8): origins, time budgets, control connection limits,
# the cache file's truth, status at scale, configuration edges, ambiguous creates) once more against the
# release binaries users run. In `make test` the integration run's `make deb` has built them already.
RELEASE_TESTS = test_origins.py test_daemon_concurrency.py test_daemon_control_limits.py test_daemon_cache_truth.py \
	test_syncctl.py test_status_scale.py test_admin.py test_outbox_in_flight.py test_real_drf.py test_secrets.py test_bytes_fidelity.py \
	test_change_feed.py
integration-release: deps release
	cd Tests/integration && SYNCD_BIN_DIR=$(CURDIR)/.build/release PATH="$(TEST_PATH)" \
		python3 -m pytest -q -p no:cacheprovider --timeout=$(PYTEST_TIMEOUT) $(RELEASE_TESTS)
	cd Tests/integration && SYNCD_BIN_DIR=$(CURDIR)/.build/release PATH="$(TEST_PATH)" \
		python3 -m pytest -q -p no:cacheprovider --timeout=$(PYTEST_TIMEOUT) -m release_binaries \
		$(filter-out $(RELEASE_TESTS),$(notdir $(wildcard Tests/integration/test_*.py)))

# Everything: Swift tests (unit and the real-socket/namespace ones), fuzzing, black-box integration.
# A hung test fails its run with a diagnosis (Tests/run-swift-tests, pytest --timeout) instead of
# stalling CI.
test: deps build
	$(SWIFT) build --build-tests
	PATH="$(TEST_PATH)" SWIFT=$(SWIFT) Tests/run-swift-tests
	$(MAKE) fuzz
	$(MAKE) integration
	$(MAKE) integration-release
	$(MAKE) contributor-check

# The tests that run something as another user or boot systemd, from this checkout as if it lay below
# a 0700 directory on a machine with syncd installed (simulated in a mount namespace; see the script).
contributor-check: deps build
	$(SWIFT) build --build-tests
	PATH="$(TEST_PATH)" SWIFT=$(SWIFT) PYTEST_TIMEOUT=$(PYTEST_TIMEOUT) .ci/contributor-machine

demo: build
	config/demo/run-demo

bench: deps
	$(SWIFT) build $(RELEASE_FLAGS)
	SWIFTC=$(SWIFTC) bench/run.sh

# The pages of docs/*.[158].md, and the two documents users need beside them as pages of section 7
# (packaging/man/md2scdoc refuses a page that would name a file of this repository); @DOCDIR@ and
# @EXAMPLEDIR@ become the folders this install puts the design notes and the example source in.
MAN_PATHS = sed -e 's|@DOCDIR@|$(DOCDIR)|g' -e 's|@EXAMPLEDIR@|$(EXAMPLEDIR)|g'
man:
	rm -rf build/man
	mkdir -p build/man
	for page in docs/*.[158].md; do \
		name=$$(basename $$page .md); $(MAN_PATHS) $$page | scdoc > build/man/$$name || exit 1; \
	done
	packaging/man/md2scdoc syncd.local-changes 7 "what syncd does with the local changes of a writable source" \
		< docs/local-changes.md > build/man/syncd.local-changes.scd
	packaging/man/md2scdoc syncd.control 7 "the control API of syncd (Varlink)" \
		< docs/control-api.md > build/man/syncd.control.scd
	for page in build/man/*.scd; do \
		$(MAN_PATHS) $$page | scdoc > build/man/$$(basename $$page .scd).7 || exit 1; rm $$page; \
	done

# Without DESTDIR this installs onto the running system: systemd-sysusers then creates the user the
# unit runs as, so `systemctl enable --now syncd` works right away.  Nothing is enabled or started.
install: release man
	$(MAKE) install-files
	if [ -z "$(DESTDIR)" ] && command -v systemd-sysusers >/dev/null; then \
		systemd-sysusers $(SYSUSERSDIR)/syncd.conf; \
		if command -v journalctl >/dev/null; then journalctl --update-catalog; fi; \
		if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi; \
		echo "make install: start syncd with: systemctl enable --now syncd"; \
	elif [ -z "$(DESTDIR)" ]; then \
		echo "make install: no systemd-sysusers here; create the system user and group syncd" \
		     "(home /var/lib/syncd) before starting syncd.service"; \
	fi

# Copies what `make release` and `make man` built (debian/rules uses this without rebuilding).
install-files:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(MANDIR)/man8
	install -m 0755 .build/release/syncd .build/release/syncctl $(DESTDIR)$(BINDIR)/
# Every page `make man` rendered goes into the man<section> directory its suffix names.
	for page in build/man/*.[1578]; do \
		install -m 0644 $$page $(DESTDIR)$(MANDIR)/man$${page##*.}/; \
	done
	install -d $(DESTDIR)$(SYSCONFDIR)/syncd/sources.d
	install -m 0644 config/syncd.conf $(DESTDIR)$(SYSCONFDIR)/syncd/syncd.conf.example
	install -m 0644 config/sources.d/posts.source.example $(DESTDIR)$(SYSCONFDIR)/syncd/sources.d/
	install -d $(DESTDIR)$(SYSTEMUNITDIR) $(DESTDIR)$(USERUNITDIR) $(DESTDIR)$(SYSUSERSDIR) build/systemd
	sed 's|@BINDIR@|$(BINDIR)|g' packaging/systemd/syncd.service > build/systemd/syncd.service
	sed 's|@BINDIR@|$(BINDIR)|g' packaging/systemd/syncd.user.service > build/systemd/syncd.user.service
	install -m 0644 build/systemd/syncd.service $(DESTDIR)$(SYSTEMUNITDIR)/syncd.service
	install -m 0644 build/systemd/syncd.user.service $(DESTDIR)$(USERUNITDIR)/syncd.service
	install -m 0644 packaging/systemd/syncd.sysusers $(DESTDIR)$(SYSUSERSDIR)/syncd.conf
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0644 packaging/completion/syncctl.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/syncctl
# What journalctl -x adds to each MESSAGE_ID syncd logs; `make install` (or the package's trigger) updates the index.
	install -d $(DESTDIR)$(CATALOGDIR) $(DESTDIR)$(DOCDIR)
	install -m 0644 packaging/systemd/syncd.catalog $(DESTDIR)$(CATALOGDIR)/syncd.catalog
# The design notes name files of the source tree: a header says so and points to the manual pages.
	install -d build/doc
	cat packaging/doc/architecture-header.txt docs/architecture.md > build/doc/architecture.txt
	install -m 0644 build/doc/architecture.txt $(DESTDIR)$(DOCDIR)/architecture.txt
# The cache file's JSON Schema and the examples for applications (syncd.cache(5)).
	install -d $(DESTDIR)$(PREFIX)/share/syncd $(DESTDIR)$(DOCDIR)/examples
	install -m 0644 docs/cache.schema.json $(DESTDIR)$(PREFIX)/share/syncd/cache.schema.json
	install -m 0644 docs/examples/follow-cache-file $(DESTDIR)$(DOCDIR)/examples/follow-cache-file
	install -m 0644 docs/examples/follow-changes $(DESTDIR)$(DOCDIR)/examples/follow-changes

# Without DESTDIR this first stops and disables the system service (enabled by the admin after
# `make install`).  State, cache, configuration and the user stay; the message says how to remove them.
uninstall:
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ] && [ -f $(SYSTEMUNITDIR)/syncd.service ]; then \
		systemctl disable --now syncd.service; \
	fi
	rm -f $(DESTDIR)$(BINDIR)/syncd $(DESTDIR)$(BINDIR)/syncctl
	rm -f $(DESTDIR)$(MANDIR)/man1/syncctl.1 $(DESTDIR)$(MANDIR)/man5/syncd.conf.5 $(DESTDIR)$(MANDIR)/man8/syncd.8
	rm -f $(DESTDIR)$(MANDIR)/man5/syncd.cache.5 $(DESTDIR)$(PREFIX)/share/syncd/cache.schema.json
	-rmdir $(DESTDIR)$(PREFIX)/share/syncd
	rm -f $(DESTDIR)$(MANDIR)/man7/syncd.local-changes.7 $(DESTDIR)$(MANDIR)/man7/syncd.control.7
	rm -f $(DESTDIR)$(CATALOGDIR)/syncd.catalog $(DESTDIR)$(DOCDIR)/architecture.txt
	rm -f $(DESTDIR)$(DOCDIR)/examples/follow-cache-file $(DESTDIR)$(DOCDIR)/examples/follow-changes
	-rmdir $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR)
	rm -f $(DESTDIR)$(SYSTEMUNITDIR)/syncd.service $(DESTDIR)$(USERUNITDIR)/syncd.service
	rm -f $(DESTDIR)$(SYSUSERSDIR)/syncd.conf $(DESTDIR)$(PREFIX)/share/bash-completion/completions/syncctl
	rm -f $(DESTDIR)$(SYSCONFDIR)/syncd/syncd.conf.example $(DESTDIR)$(SYSCONFDIR)/syncd/sources.d/posts.source.example
	if [ -z "$(DESTDIR)" ]; then \
		if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi; \
		if command -v journalctl >/dev/null; then journalctl --update-catalog; fi; \
		echo "make uninstall: users who enabled their own instance stop it with: systemctl --user disable --now syncd"; \
		echo "make uninstall: kept /etc/syncd, /var/lib/syncd, /var/cache/syncd and the user syncd;" \
		     "remove them with: rm -rf /etc/syncd /var/lib/syncd /var/cache/syncd && userdel syncd"; \
	fi

# The Debian package: packaging/debian becomes debian/ of a copy of the tree in build/deb, and
# dpkg-buildpackage (debhelper, dh) builds it from the release binaries built here.  The packages
# land in build/ (syncd_VERSION_ARCH.deb and its -dbgsym); lintian must report no errors.
# (read with sed: dpkg-parsechangelog may not be installed yet when make parses this file)
DEB_VERSION = $(shell awk -F'[()]' 'NR == 1 { print $$2 }' packaging/debian/changelog)
DEB_TREE = build/deb/syncd-$(DEB_VERSION)
deb-deps:
	.ci/install-deps deb

deb: deb-deps release
	rm -rf build/deb build/syncd_*.deb build/syncd-dbgsym_*.deb
	mkdir -p $(DEB_TREE)
	cp -a Package.swift Sources Makefile .ci config docs packaging README.md LICENSE $(DEB_TREE)/
	cp -a packaging/debian $(DEB_TREE)/debian
	cd $(DEB_TREE) && SYNCD_PREBUILT=$(CURDIR)/.build/release dpkg-buildpackage -b -us -uc
	mv build/deb/syncd_$(DEB_VERSION)_*.deb build/deb/syncd-dbgsym_$(DEB_VERSION)_*.deb build/
	lintian --fail-on error build/syncd_$(DEB_VERSION)_*.deb build/syncd-dbgsym_$(DEB_VERSION)_*.deb
	@ls build/syncd_$(DEB_VERSION)_*.deb

clean:
	rm -rf .build build
