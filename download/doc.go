// Package download finds CoreOS artifacts in stream metadata and fetches them: it loads a
// stream (a Fedora CoreOS stream name, a stream JSON file such as the one `openshift-install
// coreos print-stream-json` prints, or its URL), selects the live ISO or PXE artifacts of an
// architecture, and downloads them into a cache keyed by sha256 with a verifying, resuming,
// retrying fetcher and optional OpenPGP signature checks. It knows nothing about ISO contents.
package download
