package main

import (
	"slices"
	"testing"
)

func TestUploadTargets(t *testing.T) {
	pxe := []string{"kernel", "initramfs.img", "rootfs.img"}
	for _, tc := range []struct {
		dest  string
		names []string
		want  []string // s3://BUCKET/KEY of each; nil for a usage error
	}{
		{"s3://isos/rhcos/live.iso", []string{"rhcos-live.iso"}, []string{"s3://isos/rhcos/live.iso"}},
		{"s3://isos/rhcos/", []string{"rhcos-live.iso"}, []string{"s3://isos/rhcos/rhcos-live.iso"}},
		{"s3://isos/", pxe, []string{"s3://isos/kernel", "s3://isos/initramfs.img", "s3://isos/rootfs.img"}},
		{"s3://isos/a b/", []string{"x.iso"}, []string{"s3://isos/a b/x.iso"}},
		{"s3://isos/pxe", pxe, nil},
		{"s3://isos", []string{"x.iso"}, nil},
		{"s3:///x.iso", []string{"x.iso"}, nil},
		{"https://isos/x.iso", []string{"x.iso"}, nil},
	} {
		targets, err := uploadTargets(tc.dest, tc.names)
		if tc.want == nil {
			if err == nil {
				t.Errorf("uploadTargets(%q, %q) = %v, want a usage error", tc.dest, tc.names, targets)
			}
			continue
		}
		var got []string
		for _, target := range targets {
			got = append(got, target.String())
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("uploadTargets(%q, %q) = %q, %v; want %q", tc.dest, tc.names, got, err, tc.want)
		}
	}
}
