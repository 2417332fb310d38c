# The README's two commands: `make start` and `make test`. Both install liblmdb-dev, libvips-dev and zlib1g-dev first
# when they are missing; `make test` also PostgreSQL, wrk, nghttp2-client, schemathesis, Chromium and Selenium.
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: start test lint deps fuzz-deps postgres-deps bench-deps browser-deps

## Starts Chorus: `chorus serve` (release build) on ./chorus-data at 127.0.0.1:8080, filled with demo data the first
## time. CHORUS_DATA, CHORUS_HOST, CHORUS_PORT and CHORUS_ADMIN_TOKEN change the defaults.
start: deps
	$(SWIFT) run -c release chorus serve --demo-events 20000

## Runs every test: the format check, the Swift suites, contract fuzzing of a live `chorus serve` against openapi.yaml,
## then the admin console in headless Chromium (screenshots in .build/test-output/console). The cluster tests start a
## throwaway PostgreSQL of their own (initdb in a temporary directory, loopback only).
test: deps fuzz-deps postgres-deps bench-deps browser-deps lint
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	Tests/ContractFuzzing/run
	Tests/ConsoleBrowser/run

## Checks that every Swift file but the generated client is formatted as .swift-format says (`swift format -i` on a
## file fixes it).
lint:
	$(SWIFT) format lint --strict --parallel \
		$$(find Package.swift Sources Projections Tools Tests -name '*.swift' -not -path 'Sources/ChorusClient/Generated/*')

## Installs LMDB's, libvips' and zlib's headers and libraries (Debian: liblmdb-dev, libvips-dev, which brings the HEIC
## and AVIF decoders, and zlib1g-dev, for gzipped pages) when pkg-config cannot find them.
deps:
	@pkg-config --exists lmdb vips zlib || { \
		echo "installing liblmdb-dev libvips-dev zlib1g-dev"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq liblmdb-dev libvips-dev zlib1g-dev pkg-config; \
	}

## Installs PostgreSQL's server programs (Debian: postgresql) when there are none, for the cluster tests; no server is
## started or enabled here.
postgres-deps:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		echo "installing postgresql"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq postgresql; \
	}

## Installs the load generators the benchmarks' tests drive (Debian: wrk, and nghttp2-client for h2load) when they are
## missing; a benchmark run by hand installs them itself.
bench-deps:
	@command -v wrk >/dev/null && command -v h2load >/dev/null || { \
		echo "installing wrk nghttp2-client"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq wrk nghttp2-client; \
	}

## Installs schemathesis from PyPI, which contract fuzzing runs, when Python cannot import it.
fuzz-deps:
	@python3 -c "import schemathesis" 2>/dev/null || { \
		echo "installing schemathesis"; \
		python3 -m pip install -q --disable-pip-version-check "schemathesis==4.32.5"; \
	}

## Installs headless Chromium and its WebDriver (Debian: chromium, chromium-driver) and Selenium from PyPI, which the
## console's browser test drives, when they are missing.
browser-deps:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
		echo "installing chromium chromium-driver"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium chromium-driver; \
	}
	@python3 -c "import selenium" 2>/dev/null || { \
		echo "installing selenium"; \
		python3 -m pip install -q --disable-pip-version-check "selenium==4.38.0"; \
	}
