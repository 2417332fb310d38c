# The README's two commands: `make start` and `make test`. Both install liblmdb-dev first when it is missing.
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: start test deps

## Starts Chorus: `chorus serve` (release build) on ./chorus-data at 127.0.0.1:8080, filled with demo data the first
## time. CHORUS_DATA, CHORUS_HOST, CHORUS_PORT and CHORUS_ADMIN_TOKEN change the defaults.
start: deps
	$(SWIFT) run -c release chorus serve --demo-events 20000

## Runs every test.
test: deps
	$(SWIFT) test

## Installs LMDB's headers and library (Debian: liblmdb-dev) when pkg-config cannot find them.
deps:
	@pkg-config --exists lmdb || { \
		echo "installing liblmdb-dev"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq liblmdb-dev pkg-config; \
	}
