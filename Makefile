# sno-iso: `make demo` runs the main job on a bundled look-alike ISO, `make test` runs the
# whole suite (installing the Debian packages it needs when run as root) and ends with the line
# "N passed, N failed, N skipped", naming the skipped and failed tests above it.
GO      ?= go
BIN     := bin/sno-iso
DEMO    := out/demo
DOCS    := dist/docs
# An execution count, not a duration: see scripts/fuzz.
FUZZTIME ?= 20000x
# The platforms of make release, each cross-vetted by make test.
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64
# --version prints these; go install records the module version and commit instead.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.buildVersion=$(VERSION) -X main.buildCommit=$(COMMIT)
# make install: PREFIX and DESTDIR as usual; COREOS_INSTALLER_LINK=1 also installs
# coreos-installer as a link to sno-iso.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
COREOS_INSTALLER_LINK ?=

# The packages with concurrent code (serve's flights and ref-counts, origin's cache, the retry
# loops) run under the race detector in make test, instead of a plain run; the others run plain,
# and so does serve's load test, whose memory checks the race detector's shadow memory defeats.
RACE_PKGS  := ./serve/... ./origin/... ./isobuilder/... ./download/... ./redfish/... ./node/...
PLAIN_PKGS = $(filter-out $(shell $(GO) list $(RACE_PKGS)),$(shell $(GO) list ./...))

space := $(subst ,, )
comma := ,

.PHONY: build docs release image install deps test cross-vet unit fuzz demo bench clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/sno-iso

# The man pages and the bash, zsh and fish completions (also the coreos-installer link's),
# generated from the command definitions.
docs: build
	$(BIN) dev docs $(DOCS)

install: docs
	install -D -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/sno-iso
	install -D -m 0644 $(DOCS)/sno-iso.1 $(DESTDIR)$(MANDIR)/man1/sno-iso.1
	install -D -m 0644 $(DOCS)/sno.yaml.5 $(DESTDIR)$(MANDIR)/man5/sno.yaml.5
	install -D -m 0644 $(DOCS)/sno-iso.bash $(DESTDIR)$(DATADIR)/bash-completion/completions/sno-iso
	install -D -m 0644 $(DOCS)/_sno-iso $(DESTDIR)$(DATADIR)/zsh/site-functions/_sno-iso
	install -D -m 0644 $(DOCS)/sno-iso.fish $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/sno-iso.fish
ifneq ($(COREOS_INSTALLER_LINK),)
	ln -sfn sno-iso $(DESTDIR)$(BINDIR)/coreos-installer
	install -D -m 0644 $(DOCS)/coreos-installer.bash $(DESTDIR)$(DATADIR)/bash-completion/completions/coreos-installer
	install -D -m 0644 $(DOCS)/_coreos-installer $(DESTDIR)$(DATADIR)/zsh/site-functions/_coreos-installer
	install -D -m 0644 $(DOCS)/coreos-installer.fish $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/coreos-installer.fish
endif

# Static binaries for every platform, the docs and SHA256SUMS in dist/, the same bytes from
# the same commit and Go release.
release:
	rm -rf dist
	$(GO) run ./scripts/release -o dist -version $(VERSION) -commit $(COMMIT) -targets $(subst $(space),$(comma),$(PLATFORMS))

# The container image, as an OCI archive for podman load or skopeo copy: linux/amd64 and
# linux/arm64 binaries of make release (run first if they are missing), no daemon needed.
IMAGE := dist/sno-iso-image.oci.tar
image:
	test -e dist/sno-iso-$(VERSION)-linux-amd64 -a -e dist/sno-iso-$(VERSION)-linux-arm64 || $(MAKE) release
	$(GO) run ./scripts/mkimage -o $(IMAGE) -version $(VERSION) -revision $(COMMIT) \
	  linux/amd64=dist/sno-iso-$(VERSION)-linux-amd64 linux/arm64=dist/sno-iso-$(VERSION)-linux-arm64

deps:
	scripts/install-deps

test: deps
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(MAKE) cross-vet release image
	scripts/fuzz $(FUZZTIME)
	mkdir -p out
	$(GO) run ./scripts/testsum -json out/test-events.json -- \
	  $(GO) test -json -race -timeout 40m $(RACE_PKGS) --- $(GO) test -json -timeout 40m $(PLAIN_PKGS) \
	  --- $(GO) test -json -run '^TestLoad$$' ./serve

# go vet for every other platform than this one (vetted above), with the flags of make release
# so that the release reuses the compiled packages; the release then cross-compiles each.
HOST_PLATFORM := $(shell $(GO) env GOOS)/$(shell $(GO) env GOARCH)
cross-vet:
	for p in $(filter-out $(HOST_PLATFORM),$(PLATFORMS)); do \
	  echo "go vet $$p"; GOOS=$${p%/*} GOARCH=$${p#*/} CGO_ENABLED=0 $(GO) vet -trimpath ./... || exit 1; \
	done

fuzz:
	scripts/fuzz 2m

demo: deps build
	scripts/demo

bench: deps build
	$(GO) test ./nmstate/ -run '^$$' -bench Convert100 -benchtime 20x
	$(GO) run ./scripts/bench -sno-iso $(BIN)

clean:
	rm -rf bin out dist
