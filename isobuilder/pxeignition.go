package isobuilder

import (
	"context"
	"errors"
	"io"

	"github.com/sno-iso/sno-iso/initrd"
)

// ErrNoIgnitionInArchive says that an initramfs holds no config.ign.
var ErrNoIgnitionInArchive = errors.New("couldn't find Ignition config in archive")

// WrapIgnition returns config as an initramfs to load after the live one, as
// coreos-installer's `pxe ignition wrap` writes it: an xz newc archive holding config.ign.
// Like coreos-installer, it wraps the config as given, even empty or not Ignition.
func WrapIgnition(config []byte) ([]byte, error) {
	return initrd.Pack(initrd.Files{initrd.IgnitionPath: config})
}

// UnwrapIgnition returns the config.ign of an initramfs (concatenated archives, as
// WrapIgnition or a customized live initramfs holds it), or ErrNoIgnitionInArchive. It ends
// with ctx's error once ctx is done, and refuses an input that decompresses to more than
// MaxInitramfsRatio times its size.
func UnwrapIgnition(ctx context.Context, r io.Reader) ([]byte, error) {
	files, err := initrd.Read(r, initrd.ReadOptions{
		Context:     ctx,
		MaxRatio:    MaxInitramfsRatio,
		MaxSize:     MaxInitramfsSize,
		MaxFileSize: initrd.MaxIgnitionSize,
		Match:       func(p string) bool { return p == initrd.IgnitionPath },
	})
	if err != nil {
		return nil, err
	}
	config, ok := files[initrd.IgnitionPath]
	if !ok {
		return nil, ErrNoIgnitionInArchive
	}
	return config, nil
}
