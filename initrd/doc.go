// Package initrd writes and reads the initramfs archives that carry a live system's
// customizations: deterministic newc cpio compressed with xz (CRC32 check, the one the kernel
// accepts), and readers for concatenated gzip, xz, zstd and uncompressed archives.
package initrd
