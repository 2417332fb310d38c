# The README's two commands: `make start` and `make test`. Both install liblmdb-dev first when it is missing.
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: start test deps

## Starts Chorus (until the server lands: the event-log benchmark, release build).
start: deps
	$(SWIFT) run -c release chorus bench log

## Runs every test.
test: deps
	$(SWIFT) test

## Installs LMDB's headers and library (Debian: liblmdb-dev) when pkg-config cannot find them.
deps:
	@pkg-config --exists lmdb || { \
		echo "installing liblmdb-dev"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq liblmdb-dev pkg-config; \
	}
