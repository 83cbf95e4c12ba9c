# sno-iso: `make demo` runs the main job on a bundled look-alike ISO, `make test` runs the
# whole suite (installing the Debian packages it needs when run as root).
GO      ?= go
BIN     := bin/sno-iso
DEMO    := out/demo
FUZZTIME ?= 5s
# --version prints these; go install records the module version and commit instead.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.buildVersion=$(VERSION) -X main.buildCommit=$(COMMIT)

.PHONY: build docs release image deps test unit fuzz demo bench clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/sno-iso

# The man page and the bash, zsh and fish completions, generated from the command definitions.
docs: build
	$(BIN) dev docs dist/docs

# Static binaries for every platform, the docs and SHA256SUMS in dist/, the same bytes from
# the same commit and Go release.
release:
	rm -rf dist
	$(GO) run ./scripts/release -o dist -version $(VERSION) -commit $(COMMIT)

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
	scripts/fuzz $(FUZZTIME)
	$(GO) test -timeout 40m ./...

fuzz:
	scripts/fuzz 2m

demo: deps build
	scripts/demo

bench: deps build
	$(GO) run ./scripts/bench -sno-iso $(BIN)

clean:
	rm -rf bin out dist
