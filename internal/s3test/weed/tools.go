//go:build tools

// Package weed pins the SeaweedFS version whose `weed` binary the S3 tests run. It is a module
// of its own, so sno-iso itself never depends on SeaweedFS; internal/s3test builds
// github.com/seaweedfs/seaweedfs/weed in this directory and caches the binary.
package weed

import _ "github.com/seaweedfs/seaweedfs/weed"
